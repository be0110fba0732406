/**
 * The home page's hero and feature cards. They are VitePress front matter, given to `index.md` by
 * `transformPageData` in config.ts rather than written in the page: Biome formats Markdown and
 * does not keep YAML front matter intact.
 */
export const home = {
  layout: 'home',
  hero: {
    name: 'mcp-task-server',
    text: 'Long-running MCP tools as durable tasks',
    tagline:
      'Write a TypeScript class, mark the slow methods @Task, generate, serve. Clients start, follow, answer, cancel and collect, in every task protocol they speak.',
    actions: [
      { theme: 'brand', text: 'Get started', link: '/guide/getting-started' },
      { theme: 'alt', text: 'API reference', link: '/api/' },
    ],
  },
  features: [
    {
      title: 'Typed from your source',
      details:
        'mcp-taskgen reads parameter and return types and JSDoc, and writes the JSON Schemas, zod validators and dispatch glue. No schema is written twice.',
      link: '/guide/tools-and-types',
    },
    {
      title: 'Both task protocols, one process',
      details:
        '2025-11-25 core tasks and the 2026-07-28 tasks extension, over Streamable HTTP and stdio, on the official SDK v2.',
      link: '/guide/protocol-mapping',
    },
    {
      title: 'Questions mid-task',
      details:
        '@NeedsInput declares typed questions and await ctx.input() asks the caller. On Redis a waiting task holds no worker and survives restarts.',
      link: '/guide/questions',
    },
    {
      title: 'Durable and scalable',
      details:
        'With REDIS_URL set, tasks run as BullMQ jobs in any number of workers, and any server answers for any task.',
      link: '/guide/runtimes',
    },
    {
      title: 'Owned by identities',
      details:
        'A task belongs to its principal, not its connection: it survives reconnects, and anyone else gets "not found".',
      link: '/guide/protocol-mapping#who-owns-a-task',
    },
    {
      title: 'Operable',
      details:
        'Lifecycle logs, health and readiness routes, Prometheus metrics, OpenTelemetry traces and a task dashboard.',
      link: '/guide/operating',
    },
  ],
};
