// #region harness
import { createTestHarness, expectStatusSequence, harnessMatrix } from 'mcp-task-server/testing';
import { describe, expect, it } from 'vitest';
import { app } from './app.js';

describe.each(harnessMatrix())('clean_build_outputs (%s)', ({ dialect, runtime }) => {
  it('deletes after the approval', async () => {
    const answers = { approval: { confirm: true } };
    const harness = await createTestHarness(app, { dialect, runtime, answers });
    const task = await harness.call('clean_build_outputs', { path: '.' });
    await expectStatusSequence(task, ['working', 'input_required', 'working', 'completed']);
    expect((await task.result()).structuredContent).toMatchObject({ kept: [] });
    await harness.close();
  });
});
// #endregion harness
