/** What the server and the worker processes of the issue-import example share. */
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { IssueImporter } from './src/issue-importer.js';

export const app = {
  name: 'issue-import',
  version: '0.1.0',
  title: 'Issue importer',
  manifest: taskManifest,
  // The tracker's API root; the test serves a stub one on a free port.
  instances: [new IssueImporter(process.env.ISSUES_API_URL ?? 'http://127.0.0.1:4010/api')],
};
