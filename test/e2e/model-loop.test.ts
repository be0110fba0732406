/**
 * A scripted stand-in for a model (no LLM) drives task tools through clients that cannot receive
 * tasks. Like a model in a host, it knows only what `tools/list` showed (names, descriptions,
 * schemas) and what each call answered. It follows the `structuredContent` of a task until it
 * has the task's own result: it calls the tool the result's text names next that the task view
 * can fill in (preferring one that waits to one that polls), fills its arguments from that
 * tool's input schema and the task view, and answers a pending question from the fields the view lists (the first allowed
 * value, else a value of the field's type). It knows no companion tool by name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CALLER_KINDS,
  type CallerKind,
  type ListedTool,
  openCaller,
  type PlainCaller,
  type PlainResult,
  pythonClientInstalled,
} from './plain-callers.js';
import { resultOf, startUnawareServer, TERMINAL, textOf, type UnawareServer } from './unaware-support.js';

/** What a task view lists about one field of a pending question. */
interface FieldView {
  readonly name: string;
  readonly type: string;
  readonly allowed?: readonly unknown[];
  readonly minimum?: number;
  readonly minLength?: number;
  readonly default?: unknown;
}

interface TaskViewSeen {
  readonly taskId: string;
  readonly status: string;
  readonly question?: { readonly question: string; readonly fields: readonly FieldView[] };
}

/** One call the model made, with the text it got back. */
interface Turn {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly text: string;
}

const MAX_TURNS = 12;

function isTaskView(value: unknown): value is TaskViewSeen {
  const view = value as Partial<TaskViewSeen> | undefined;
  return typeof view?.taskId === 'string' && typeof view.status === 'string';
}

/** A value the field accepts: the first allowed one, its default, or one of its type. */
function valueFor(field: FieldView): unknown {
  if (field.allowed?.length) return field.allowed[0];
  if (field.default !== undefined) return field.default;
  switch (field.type) {
    case 'boolean':
      return true;
    case 'number':
    case 'integer':
      return field.minimum ?? 1;
    default:
      return 'x'.repeat(Math.max(1, field.minLength ?? 1));
  }
}

class ScriptedModel {
  readonly turns: Turn[] = [];

  constructor(
    private readonly caller: PlainCaller,
    private readonly tools: readonly ListedTool[],
  ) {}

  /** Calls `tool` as a user asked, then follows whatever it answers until it has a result. */
  async run(tool: string, args: Record<string, unknown>): Promise<PlainResult> {
    let result = await this.invoke(tool, args);
    while (isTaskView(result.structuredContent)) {
      if (this.turns.length >= MAX_TURNS) throw new Error(`no result after ${MAX_TURNS} calls: ${this.story()}`);
      const view = result.structuredContent;
      const next = this.nextTool(textOf(result), view);
      result = await this.invoke(next.name, this.argumentsFor(next, view));
    }
    return result;
  }

  /** The transcript, for failure messages. */
  story(): string {
    return this.turns.map((turn) => `${turn.tool}(${JSON.stringify(turn.args)}) -> ${turn.text}`).join('\n');
  }

  private async invoke(tool: string, args: Record<string, unknown>): Promise<PlainResult> {
    const result = resultOf(await this.caller.call(tool, args), `${this.caller.label} ${tool}`);
    this.turns.push({ tool, args, text: textOf(result) });
    return result;
  }

  /** The tools the text names, in the order it names them; only tools the list showed. */
  private named(text: string): ListedTool[] {
    return this.tools
      .map((tool) => ({ tool, at: text.search(new RegExp(`\\b${tool.name}\\b`)) }))
      .filter(({ at }) => at >= 0)
      .sort((a, b) => a.at - b.at)
      .map(({ tool }) => tool);
  }

  private nextTool(text: string, view: TaskViewSeen): ListedTool {
    // Of the tools the text names, those this task's view can fill in (so not the tool that started it).
    const named = this.named(text).filter((tool) => this.fillable(tool, view));
    const takes = (tool: ListedTool, property: string) => property in (tool.inputSchema.properties ?? {});
    const pick =
      view.status === 'input_required' && view.question
        ? named.find((tool) => takes(tool, 'answer'))
        : TERMINAL.has(view.status)
          ? named[0]
          : (named.find((tool) => takes(tool, 'seconds')) ?? named[0]);
    if (!pick) throw new Error(`the result names no tool to call next: ${text}\n${this.story()}`);
    return pick;
  }

  private fillable(tool: ListedTool, view: TaskViewSeen): boolean {
    return (tool.inputSchema.required ?? []).every(
      (property) => property in view || ((property === 'answer' || property === 'question') && !!view.question),
    );
  }

  /** The tool's required arguments, from the task view (and the question's fields). */
  private argumentsFor(tool: ListedTool, view: TaskViewSeen): Record<string, unknown> {
    const args: Record<string, unknown> = {};
    for (const property of tool.inputSchema.required ?? []) {
      if (property === 'answer' && view.question) {
        args.answer = Object.fromEntries(view.question.fields.map((field) => [field.name, valueFor(field)]));
      } else if (property === 'question' && view.question) {
        args.question = view.question.question;
      } else if (property in view) {
        args[property] = view[property as keyof TaskViewSeen];
      } else {
        throw new Error(`cannot fill ${tool.name}'s required '${property}' from ${JSON.stringify(view)}`);
      }
    }
    return args;
  }
}

const GRACE_MS = 500;
const kinds = CALLER_KINDS.filter((kind) => pythonClientInstalled() || !kind.startsWith('python'));

let server: UnawareServer;

beforeAll(async () => {
  server = await startUnawareServer({ unawareClients: { graceMs: GRACE_MS } });
});

afterAll(() => server?.close());

describe.concurrent.each(kinds)('a scripted model through the %s client', (kind: CallerKind) => {
  let caller: PlainCaller;
  let tools: ListedTool[];

  beforeAll(async () => {
    caller = await openCaller(kind, server.url);
    tools = await caller.listTools();
  });

  afterAll(() => caller?.close());

  it('follows a long task to its result', async () => {
    const job = `model-${kind}`;
    // The work ends once the model has acted on the handle (its second call).
    const watched: PlainCaller = {
      ...caller,
      call: async (name, args) => {
        if (model.turns.length === 1) server.tools.release(job);
        return caller.call(name, args);
      },
    };
    const model = new ScriptedModel(watched, tools);
    const result = await model.run('hold_job', { label: job, seconds: 30 });
    expect(result.structuredContent, model.story()).toEqual({ label: job, released: true });
    expect(model.turns.length, model.story()).toBeGreaterThan(1);
    expect(model.turns.length, model.story()).toBeLessThanOrEqual(5);
    // Every tool after the first was named by the result before it.
    for (const [index, turn] of model.turns.slice(1).entries()) {
      expect(model.turns[index]?.text, model.story()).toContain(turn.tool);
    }
  });

  it('answers a pending question from the fields it lists', async () => {
    const model = new ScriptedModel(caller, tools);
    const result = await model.run('triage_file', { filename: `model-${kind}.txt` });
    // 'keep' is the first allowed value of the question's only field.
    expect(textOf(result), model.story()).toBe(`model-${kind}.txt: keep`);
    const answer = model.turns.find((turn) => 'answer' in turn.args);
    expect(answer?.args.answer, model.story()).toEqual({ action: 'keep' });
  });

  it('takes a quick task’s inline result in one call', async () => {
    const model = new ScriptedModel(caller, tools);
    expect(textOf(await model.run('quick_sum', { a: 4, b: 5 }))).toBe('4 + 5 = 9');
    expect(model.turns).toHaveLength(1);
  });
});
