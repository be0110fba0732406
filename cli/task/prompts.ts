/**
 * A question asked in the terminal, built from its schema: an enum becomes a select, a boolean
 * a confirm, a number a validated input, a string a text input. Prompts draw on stderr so that
 * stdout keeps only the result. Ctrl-C inside a prompt comes back as `INTERRUPTED`.
 */
import { confirm, isCancel, log, select, text } from '@clack/prompts';
import type { QuestionAnswer, TaskQuestion } from '../../src/client/index.js';

export const INTERRUPTED = Symbol('interrupted');

interface PropertySchema {
  readonly type?: string;
  readonly title?: string;
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly enumNames?: readonly string[];
  readonly oneOf?: readonly { const?: unknown; title?: string }[];
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
}

const io = { input: process.stdin, output: process.stderr };

export async function askInTerminal(question: TaskQuestion): Promise<QuestionAnswer | typeof INTERRUPTED> {
  log.step(question.message, { output: process.stderr });
  const properties = (question.requestedSchema.properties ?? {}) as Record<string, PropertySchema>;
  const required = new Set((question.requestedSchema.required ?? []) as string[]);
  const content: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const value = await askOne(name, schema, required.has(name));
    if (isCancel(value)) return INTERRUPTED;
    if (value !== undefined && value !== '') content[name] = value;
  }
  return { action: 'accept', content };
}

async function askOne(name: string, schema: PropertySchema, required: boolean): Promise<unknown> {
  const message = schema.description ?? schema.title ?? name;
  const choices = enumChoices(schema);
  if (choices) {
    return select({
      ...io,
      message,
      options: choices.map((choice) => ({ value: choice.value, label: choice.label })),
      ...(choices.some((c) => c.value === schema.default) && { initialValue: schema.default }),
    });
  }
  if (schema.type === 'boolean') {
    return confirm({ ...io, message, ...(typeof schema.default === 'boolean' && { initialValue: schema.default }) });
  }
  if (schema.type === 'number' || schema.type === 'integer') {
    const answer = await text({
      ...io,
      message,
      ...(schema.default !== undefined && {
        defaultValue: String(schema.default),
        placeholder: String(schema.default),
      }),
      validate: (value) => numberProblem(value ?? '', schema, required),
    });
    return isCancel(answer) || answer === '' || answer === undefined ? answer : Number(answer);
  }
  return text({
    ...io,
    message,
    ...(typeof schema.default === 'string' && { defaultValue: schema.default, placeholder: schema.default }),
    validate: (value) => (required && !value && schema.default === undefined ? `${name} is required` : undefined),
  });
}

function enumChoices(schema: PropertySchema): { value: unknown; label: string }[] | undefined {
  if (schema.oneOf?.every((option) => option.const !== undefined))
    return schema.oneOf.map((option) => ({ value: option.const, label: option.title ?? String(option.const) }));
  if (schema.enum) return schema.enum.map((value, i) => ({ value, label: schema.enumNames?.[i] ?? String(value) }));
  return undefined;
}

function numberProblem(value: string, schema: PropertySchema, required: boolean): string | undefined {
  if (value.trim() === '') return required && schema.default === undefined ? 'A number is required' : undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) return `${value} is not a number`;
  if (schema.type === 'integer' && !Number.isInteger(number)) return `${value} is not a whole number`;
  if (schema.minimum !== undefined && number < schema.minimum) return `At least ${schema.minimum}`;
  if (schema.maximum !== undefined && number > schema.maximum) return `At most ${schema.maximum}`;
  return undefined;
}

/** Asks whether Ctrl-C should cancel the task. */
export async function confirmCancel(taskId: string): Promise<boolean> {
  const answer = await confirm({ ...io, message: `Cancel task ${taskId}?`, initialValue: true });
  return !isCancel(answer) && answer;
}
