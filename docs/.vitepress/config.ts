import { existsSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitepress';
import { home } from './home.js';
import { guide } from './sidebar.js';

/** Written by `npm run docs:api` (TypeDoc) before every build; absent only if that step was skipped. */
const apiSidebarFile = new URL('../api/typedoc-sidebar.json', import.meta.url);
const apiSidebar = existsSync(apiSidebarFile) ? JSON.parse(readFileSync(apiSidebarFile, 'utf8')) : [];

export default defineConfig({
  title: 'mcp-task-server',
  description: 'Long-running MCP tools as durable tasks, typed from your TypeScript source.',
  cleanUrls: true,
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  lastUpdated: false,
  // A dead link fails the build; the site test also checks every anchor.
  ignoreDeadLinks: false,
  srcExclude: ['snippets/**'],
  transformPageData(page) {
    if (page.relativePath === 'index.md') page.frontmatter = { ...home, ...page.frontmatter };
  },
  vite: {
    // The one chunk over Vite's 500 kB default is the local search index, loaded when search opens.
    build: { chunkSizeWarningLimit: 1024 },
  },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'API reference', link: '/api/' },
      { text: 'Traceability', link: '/traceability' },
    ],
    sidebar: {
      '/guide/': guide,
      '/traceability': guide,
      '/api/': [{ text: 'API reference', link: '/api/', items: apiSidebar }],
    },
    outline: { level: [2, 3] },
    search: { provider: 'local' },
  },
});
