// The probe app's tool class: one plain tool and one task, written as a user would.
import { type Integer, Task, type TaskContext, Tool } from 'mcp-task-server';

export interface CountRequest {
  /**
   * Where to stop.
   * @minimum 1
   * @maximum 100
   */
  to: Integer;
}

export class Greeter {
  /** Greets someone. */
  @Tool()
  async greet(name: string): Promise<string> {
    return `Hello, ${name}!`;
  }

  /** Counts up to a number, reporting each step. */
  @Task()
  async count(request: CountRequest, ctx: TaskContext): Promise<{ counted: Integer }> {
    for (let step = 1; step <= request.to; step++) {
      ctx.progress({ message: `counted ${step}`, progress: step, total: request.to });
    }
    return { counted: request.to };
  }
}
