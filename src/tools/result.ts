/**
 * Turns what a method returned into a `CallToolResult`, validating it against the schema the
 * generator derived from the method's declared return type.
 */
import type { ResultShape, TaskToolDefinition } from './definition.js';

export type CallToolResultJson = Record<string, unknown> & { content: unknown[]; isError?: boolean };

export function toCallToolResult(definition: TaskToolDefinition, value: unknown): CallToolResultJson {
  return shapeResult(definition.result, definition, value);
}

function shapeResult(shape: ResultShape, definition: TaskToolDefinition, value: unknown): CallToolResultJson {
  switch (shape) {
    case 'none':
      return { content: [] };
    case 'text':
      if (typeof value !== 'string') return mismatch(definition, `expected a string, got ${describe(value)}`);
      return { content: [{ type: 'text', text: value }] };
    case 'json':
      return { content: [{ type: 'text', text: JSON.stringify(value) ?? 'null' }] };
    case 'structured': {
      const parsed = definition.output ? definition.output.safeParse(value) : { success: true as const, data: value };
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const path = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
        return mismatch(definition, `at ${path}: ${issue?.message ?? 'invalid value'}`);
      }
      if (parsed.data === null || typeof parsed.data !== 'object' || Array.isArray(parsed.data)) {
        return mismatch(definition, `expected an object, got ${describe(parsed.data)}`);
      }
      return {
        content: [{ type: 'text', text: JSON.stringify(parsed.data) }],
        structuredContent: parsed.data as Record<string, unknown>,
      };
    }
  }
}

/** The method broke its own declared return type: a tool error the caller can read. */
function mismatch(definition: TaskToolDefinition, detail: string): CallToolResultJson {
  return errorResult(`Tool ${definition.name} returned a value that does not match its declared type ${detail}`);
}

export function errorResult(message: string): CallToolResultJson {
  return { content: [{ type: 'text', text: message }], isError: true };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
