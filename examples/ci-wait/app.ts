/** What the ci-wait example's server shares with its tests: the manifest and the CI it talks to. */
import { taskManifest } from './src/__generated__/tasks.generated.js';
import { Pipelines } from './src/pipelines.js';

/** The app for a CI at `ciUrl` (default `CI_URL`, else a local stub's usual address). */
export function ciWaitApp(ciUrl = process.env.CI_URL ?? 'http://127.0.0.1:4000') {
  return {
    name: 'ci-wait',
    version: '0.1.0',
    title: 'CI pipelines that call back',
    manifest: taskManifest,
    instances: [new Pipelines(ciUrl)],
  };
}
