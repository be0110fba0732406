import { NeedsInput, Task, type TaskContext } from 'mcp-task-server';

export interface CleanRequest {
  /** Directory to clean, relative to the scan root. */
  path: string;
}

// #region question
export interface CleanupApproval {
  /** Delete the folders listed in the question? */
  confirm: boolean;
}

export class Cleaner {
  @Task()
  @NeedsInput<CleanupApproval>('approval', { message: 'Delete these build folders?' })
  async cleanBuildOutputs(request: CleanRequest, ctx: TaskContext<{ approval: CleanupApproval }>) {
    // Done once, and replayed when the method runs again after a pause.
    const found = await ctx.step('find', () => findFolders(request.path));
    const approval = await ctx.input('approval', { message: `Delete ${found.length} folders?` });
    if (approval.action !== 'accept' || !approval.content.confirm) return { deleted: [] };
    await ctx.step('delete', () => deleteFolders(found));
    return { deleted: found };
  }
}
// #endregion question

async function findFolders(root: string): Promise<string[]> {
  return [`${root}/dist`];
}

async function deleteFolders(_folders: string[]): Promise<void> {}
