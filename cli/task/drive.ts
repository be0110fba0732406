/**
 * Following one task to its end in the terminal: status and progress on stderr, questions
 * answered from `--answer` or asked in the terminal (or left open, exit 3, when there is no
 * terminal), Ctrl-C offering to cancel, and the outcome on stdout with its exit code.
 */
import {
  type CallToolResult,
  JsonRpcResponseError,
  type QuestionAnswer,
  type TaskCall,
  TaskClientError,
  type TaskQuestion,
  type TaskSnapshot,
} from '../../src/client/index.js';
import { createDisplay } from './display.js';
import { ExitCode } from './exit-codes.js';
import type { CliOutput } from './output.js';
import { askInTerminal, confirmCancel, INTERRUPTED } from './prompts.js';

export interface DriveOptions {
  /** Print one JSON document instead of text. */
  readonly json: boolean;
  /** A terminal to prompt in (stdin and stdout are TTYs). */
  readonly interactive: boolean;
  /** Answers given in advance, by question key. */
  readonly answers: Map<string, QuestionAnswer>;
  /** How to reach the server again, for the hint printed when a question is left open. */
  readonly target: string;
  readonly out: CliOutput;
}

/** The single document `--json` prints. */
export type Outcome =
  | { taskId: string | null; status: 'completed' | 'failed'; result: CallToolResult }
  | {
      taskId: string | null;
      status: 'failed' | 'cancelled';
      error: { code: number | string; message: string; data?: unknown };
    }
  | { taskId: string | null; status: 'input_required'; questions: TaskQuestion[] };

export async function drive(call: TaskCall, options: DriveOptions): Promise<number> {
  const display = createDisplay(options.interactive && Boolean(process.stderr.isTTY), options.out.stderr);
  const taskId = call.taskId ?? null;
  let interrupted = false;
  let prompting = false;
  let open: TaskQuestion[] | undefined;

  const interrupt = async () => {
    if (interrupted) return;
    display.pause();
    if (options.interactive && !(await confirmCancel(taskId ?? 'call'))) {
      display.resume();
      return;
    }
    interrupted = true;
    await call.cancel().catch(() => undefined);
  };
  const onSigint = () => {
    if (!prompting) void interrupt();
  };
  process.on('SIGINT', onSigint);
  try {
    for await (const event of call.events) {
      if (event.type === 'status') display.status(event.task);
      else if (event.type === 'progress') display.progress(event.progress, event.total, event.message);
      else {
        const { question } = event;
        display.question(question);
        const given = options.answers.get(question.key);
        if (given) {
          options.answers.delete(question.key);
          await call.respond(question.key, given);
          continue;
        }
        if (!options.interactive) {
          open = [...(open ?? []), question];
          const latest = await call.status().catch(() => undefined);
          open = mergeQuestions(open, latest);
          break;
        }
        prompting = true;
        const answer = await askInTerminal(question).finally(() => {
          prompting = false;
        });
        if (answer === INTERRUPTED) {
          await interrupt();
          if (!interrupted) {
            // Not cancelled: ask the same question again.
            const again = await askInTerminal(question);
            if (again !== INTERRUPTED) await call.respond(question.key, again);
          }
          continue;
        }
        await call.respond(question.key, answer);
        display.resume();
      }
      if (interrupted && event.type === 'status' && event.task.status === 'cancelled') break;
    }
  } finally {
    display.stop();
    process.off('SIGINT', onSigint);
  }

  if (open) return report({ taskId, status: 'input_required', questions: open }, options, ExitCode.WaitingForInput);
  const outcome = await settle(call, taskId);
  if (interrupted && outcome.status === 'cancelled') return report(outcome, options, ExitCode.Interrupted);
  return report(outcome, options, outcome.status === 'completed' ? ExitCode.Completed : ExitCode.Failed);
}

function mergeQuestions(open: TaskQuestion[], latest: TaskSnapshot | undefined): TaskQuestion[] {
  const all = [...open];
  for (const question of latest?.questions ?? []) if (!all.some((q) => q.key === question.key)) all.push(question);
  return all;
}

/** Waits for the result and reads it into the outcome document. */
export async function settle(call: TaskCall, taskId: string | null): Promise<Outcome> {
  try {
    const result = await call.result();
    return { taskId, status: result.isError ? 'failed' : 'completed', result };
  } catch (error) {
    if (error instanceof TaskClientError && error.code === 'task_cancelled')
      return { taskId, status: 'cancelled', error: { code: error.code, message: error.message } };
    if (error instanceof JsonRpcResponseError)
      return {
        taskId,
        status: 'failed',
        error: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) },
      };
    throw error;
  }
}

/** Prints the outcome (one JSON document, or text) and returns `code`. */
export function report(outcome: Outcome, options: Pick<DriveOptions, 'json' | 'target' | 'out'>, code: number): number {
  const { out } = options;
  if (options.json) {
    out.stdout(`${JSON.stringify(outcome)}\n`);
    return code;
  }
  if ('result' in outcome) {
    const text = resultText(outcome.result);
    (outcome.status === 'completed' ? out.stdout : out.stderr)(text.endsWith('\n') ? text : `${text}\n`);
  } else if ('error' in outcome) {
    out.stderr(
      outcome.status === 'cancelled'
        ? `Task ${outcome.taskId} was cancelled\n`
        : `Error ${outcome.error.code}: ${outcome.error.message}\n`,
    );
  } else {
    const lines = [`Task ${outcome.taskId} is waiting for input:`];
    for (const question of outcome.questions) lines.push(`  ${question.key}: ${question.message}`);
    const example = outcome.questions[0];
    if (example)
      lines.push(
        `Answer with: mcp-task answer ${options.target} ${answerArguments(outcome.taskId ?? '<taskId>', `${example.key}=${exampleAnswer(example)}`)}`,
      );
    out.stdout(`${lines.join('\n')}\n`);
  }
  return code;
}

/**
 * `<taskId> --answer <answer>`, or `--answer <answer> -- <taskId>` for an id that starts with `-`
 * (a client may choose one): after `--` it cannot read as an option. Both are shell-quoted: the
 * server chose them, and the line is there to be pasted.
 */
export function answerArguments(taskId: string, answer: string): string {
  const id = shellWord(taskId);
  const value = shellWord(answer);
  return taskId.startsWith('-') ? `--answer ${value} -- ${id}` : `${id} --answer ${value}`;
}

/** `word` as one POSIX shell word: as it is when every character is safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((block) => (block.type === 'text' ? block.text : JSON.stringify(block)));
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent, null, 2);
  return parts.join('\n');
}

function exampleAnswer(question: TaskQuestion): string {
  const properties = (question.requestedSchema.properties ?? {}) as Record<string, { type?: string; enum?: unknown[] }>;
  const sample = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [
      name,
      schema.enum?.[0] ??
        (schema.type === 'boolean' ? true : schema.type === 'number' || schema.type === 'integer' ? 0 : '...'),
    ]),
  );
  return JSON.stringify(sample);
}
