/**
 * Calls every tool of the repo-scan example through its generated client. Compiled by `tsc` in a
 * package that has only the generated file and `mcp-task-server/client`
 * (test/client/typed-client.test.ts); each `@ts-expect-error` line must stay an error.
 */
import type { TaskClientOptions } from 'mcp-task-server/client';
import { createClient } from './__generated__/repo-scan.client.js';

export async function useEveryTool(url: string, options?: TaskClientOptions) {
  const client = createClient(url, options);
  try {
    const scan = await client.scanRepository({ path: '.', top: 2 });
    const report = await scan.result();
    const files: number = report.files;
    const largest: string | undefined = report.largest[0]?.path;

    const clean = await client.cleanBuildOutputs({ path: '.', names: ['dist'] });
    for await (const event of clean.events) {
      if (event.type === 'question' && event.name === 'approval') await clean.answer('approval', { confirm: false });
    }
    const cleaned = await clean.result();
    const freed: number = cleaned.bytesFreed;

    const listing = await client.listDirectories();
    const directories: string[] = (await listing.result()).directories;

    return { files, largest, freed, directories };
  } finally {
    await client.close();
  }
}

export async function wrongTypes(url: string) {
  const client = createClient(url);
  // @ts-expect-error `path` must be a string
  await client.scanRepository({ path: 42 });
  // @ts-expect-error `path` is required
  await client.scanRepository({});
  // @ts-expect-error there is no such tool
  await client.deleteEverything({ path: '.' });
  const clean = await client.cleanBuildOutputs({ path: '.' });
  // @ts-expect-error the approval's `confirm` is a boolean
  await clean.answer('approval', { confirm: 'yes' });
  // @ts-expect-error no question of that name
  await clean.answer('permission', { confirm: true });
  const report = await (await client.scanRepository({ path: '.' })).result();
  // @ts-expect-error the report has no `size`
  report.size;
}
