/**
 * The site's navigation: every page of the guide, in reading order, one line each. To add a page,
 * write `docs/guide/<slug>.md` (a `#` title first) and add `{ text: '<Title>', link: '/guide/<slug>' },`
 * to the group it belongs to. The API reference's sidebar is generated with it (`docs/api/typedoc-sidebar.json`).
 */
import type { DefaultTheme } from 'vitepress';

export const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Introduction',
    items: [
      { text: 'Getting started', link: '/guide/getting-started' },
      { text: 'Tools and types', link: '/guide/tools-and-types' },
      { text: 'Questions', link: '/guide/questions' },
      { text: 'Questions for clients that only poll', link: '/guide/questions-for-polling-clients' },
    ],
  },
  {
    text: 'Running tasks',
    items: [
      { text: 'Runtimes', link: '/guide/runtimes' },
      { text: 'Delivery and failure', link: '/guide/delivery-and-failure' },
      { text: 'Waiting', link: '/guide/waiting' },
      { text: 'Policies', link: '/guide/policies' },
      { text: 'Limits', link: '/guide/limits' },
    ],
  },
  {
    text: 'Production',
    items: [
      { text: 'Deploying', link: '/guide/deploying' },
      { text: 'High availability', link: '/guide/high-availability' },
      { text: 'Operating', link: '/guide/operating' },
      { text: 'Performance', link: '/guide/performance' },
    ],
  },
  {
    text: 'Clients and protocol',
    items: [
      { text: 'Clients', link: '/guide/clients' },
      { text: 'Clients without tasks', link: '/guide/clients-without-tasks' },
      { text: 'Protocol mapping', link: '/guide/protocol-mapping' },
      { text: 'Conformance', link: '/guide/conformance' },
      { text: 'Error codes', link: '/guide/error-codes' },
      { text: 'Traceability', link: '/traceability' },
    ],
  },
  {
    text: 'Contributing',
    items: [
      { text: 'Contributing', link: '/guide/contributing' },
      { text: 'Architecture', link: '/guide/architecture' },
    ],
  },
  {
    text: 'Design notes',
    items: [
      { text: 'Layers', link: '/design/layers' },
      { text: 'Decisions', link: '/design/decisions' },
      { text: 'Protocol rules', link: '/design/protocol-rules' },
      { text: 'BullMQ behaviour', link: '/design/bullmq' },
    ],
  },
];
