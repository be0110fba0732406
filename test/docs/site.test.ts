/**
 * The documentation site as a reader meets it. It is built once here (`npm run docs:build`,
 * TypeDoc's API reference included) into a scratch folder, so the test needs nothing prepared
 * and never reads a stale build. Then every page's internal links and `#anchors` must lead
 * somewhere, and Chromium (playwright-core, Debian's `/usr/bin/chromium`) opens the home page and
 * a guide from a loopback static server with no console error. Screenshots go to `.tmp/artifacts/`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, describeWithChromium } from '../support/chromium.js';
import { fileForUrlPath, type HtmlPage, readHtmlPage } from './html.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const outDir = path.join(repoRoot, '.tmp', 'docs-site');
const artifacts = path.join(repoRoot, '.tmp', 'artifacts');
/** TypeDoc and VitePress together take about 25 s on an idle 2-core machine. */
const BUILD_TIMEOUT_MS = 300_000;

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.html'))
    .map((name) => path.join(dir, name));
}

const pages = new Map<string, HtmlPage>();

beforeAll(() => {
  rmSync(outDir, { recursive: true, force: true });
  const build = spawnSync('npm', ['run', '--silent', 'docs:build', '--', '--outDir', outDir], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`npm run docs:build failed:\n${build.stdout}\n${build.stderr}`);
  for (const file of htmlFiles(outDir)) pages.set(file, readHtmlPage(file));
}, BUILD_TIMEOUT_MS);

describe('the built documentation site', () => {
  it('has the home page, every guide in the sidebar, the traceability matrix and the API reference', () => {
    const home = pages.get(path.join(outDir, 'index.html'));
    expect(home).toBeDefined();
    const sidebar = readFileSync(path.join(repoRoot, 'docs/.vitepress/sidebar.ts'), 'utf8');
    const linked = [...sidebar.matchAll(/^\s*\{ text: '[^']+', link: '([^']+)' \},?$/gm)].map(
      (match) => match[1] as string,
    );
    expect(linked.length).toBeGreaterThan(10);
    for (const link of [...linked, '/api/', '/api/mcp-task-server/client/', '/api/mcp-task-server/testing/']) {
      expect(fileForUrlPath(outDir, link), link).toBeDefined();
    }
    // Every guide page written is reachable from the navigation, not only by URL.
    const guides = readdirSync(path.join(repoRoot, 'docs/guide')).filter((name) => name.endsWith('.md'));
    for (const guide of guides) expect(linked, guide).toContain(`/guide/${guide.replace(/\.md$/, '')}`);
  });

  it('has no internal link to a missing page or a missing anchor', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [file, page] of pages) {
      const pageUrl = new URL(`/${path.relative(outDir, file).split(path.sep).join('/')}`, 'http://docs.invalid');
      for (const href of page.links) {
        const target = new URL(href, pageUrl);
        if (target.origin !== pageUrl.origin) continue; // another site
        checked++;
        const targetFile = fileForUrlPath(outDir, decodeURIComponent(target.pathname));
        const where = `${path.relative(outDir, file)}: ${href}`;
        if (!targetFile) {
          broken.push(`${where} (no such page)`);
          continue;
        }
        const fragment = decodeURIComponent(target.hash.slice(1));
        if (fragment && targetFile.endsWith('.html') && !pages.get(targetFile)?.ids.has(fragment)) {
          broken.push(`${where} (no element with id "${fragment}")`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(1000);
  });

  it("resolves every relative link of the README: files in the repository, anchors on the site's pages", () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const broken: string[] = [];
    for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target as string)) continue; // another site
      const [file = '', fragment] = (target as string).split('#');
      if (!existsSync(path.join(repoRoot, file))) {
        broken.push(`${target} (no such file)`);
        continue;
      }
      if (!fragment || !file.startsWith('docs/') || !file.endsWith('.md')) continue;
      const built = path.join(outDir, file.replace(/^docs\//, '').replace(/\.md$/, '.html'));
      if (!pages.get(built)?.ids.has(fragment)) broken.push(`${target} (no element with id "${fragment}")`);
    }
    expect(broken).toEqual([]);
  });

  it('gives every mcp-taskgen diagnostic its own anchor on the tools and types page', () => {
    const page = pages.get(path.join(outDir, 'guide/tools-and-types.html'));
    const codes = [...(page?.ids ?? [])].filter((id) => /^mtg\d{4}$/.test(id));
    expect(codes.length).toBeGreaterThanOrEqual(30);
  });
});

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** Serves the built site as a static host with clean URLs would: `/guide/x` is `guide/x.html`. */
async function serveSite(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const { pathname } = new URL(request.url ?? '/', 'http://localhost');
    const file = fileForUrlPath(root, decodeURIComponent(pathname));
    if (!file) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const type = CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream';
    response.writeHead(200, { 'content-type': type, 'content-length': statSync(file).size });
    response.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describeWithChromium('the documentation site in headless Chromium', () => {
  let site: { server: Server; url: string };
  let browser: Browser;

  beforeAll(async () => {
    site = await serveSite(outDir);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    await mkdir(artifacts, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.server.close(resolve));
  });

  it.each([
    ['/', 'home', 'Long-running MCP tools as durable tasks'],
    ['/guide/getting-started', 'getting-started', 'Getting started'],
  ])('opens %s with no console error', async (route, name, heading) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${site.url}${route}`, { waitUntil: 'networkidle' });
    await expect.poll(() => page.locator('h1').first().textContent()).toContain(heading);
    // The sidebar or the hero rendered from the client bundle, not only the static HTML.
    await page.locator('.VPNav').waitFor();
    await page.screenshot({ path: path.join(artifacts, `docs-${name}.png`) });
    await page.close();
    expect(errors).toEqual([]);
  });
});
