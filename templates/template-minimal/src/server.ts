/**
 * The whole app: one tool that runs as a task, and the server. `npm run dev` serves it on
 * http://127.0.0.1:3000/mcp (`PORT`, `HOST`); `--stdio` serves it over stdio instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Integer, runTaskServer, Task, type TaskContext } from 'mcp-task-server';

export interface BrewRequest {
  /** What to brew. */
  drink: string;
  /**
   * How many seconds it takes.
   * @minimum 1
   * @maximum 600
   * @default 3
   */
  seconds?: Integer;
}

export class Kitchen {
  /** Brews a drink, one second at a time, reporting progress. Cancel it to stop. */
  @Task({ title: 'Brew a drink' })
  async brew(request: BrewRequest, ctx: TaskContext): Promise<{ served: string; seconds: Integer }> {
    const seconds = request.seconds ?? 3;
    for (let second = 1; second <= seconds; second++) {
      await sleep(1000, undefined, { signal: ctx.signal }); // rejects when the task is cancelled
      ctx.progress({ message: `brewing ${request.drink}`, progress: second, total: seconds });
    }
    return { served: request.drink, seconds };
  }
}

// The generated manifest (`mcp-taskgen` writes it from the class above) refers to `Kitchen`, so it
// is loaded once this module has run: a static import would need `Kitchen` before it exists.
void import('./__generated__/tasks.generated.js').then(({ taskManifest }) =>
  runTaskServer({ name: 'my-task-server', version: '0.1.0', manifest: taskManifest, instances: [new Kitchen()] }),
);
