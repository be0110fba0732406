/**
 * Turns what a method returned into a `CallToolResult`, validating it against the schema the
 * generator derived from the method's declared return type.
 */
import type { ResultShape, TaskToolDefinition } from './definition.js';

export type CallToolResultJson = Record<string, unknown> & { content: unknown[]; isError?: boolean };

/** Optional metadata every content block may carry, as in MCP's `Annotations`. */
export interface ContentAnnotations {
  readonly audience?: readonly ('user' | 'assistant')[];
  readonly priority?: number;
  readonly lastModified?: string;
}

/** A text content block. */
export interface TextContent {
  readonly type: 'text';
  readonly text: string;
  readonly annotations?: ContentAnnotations;
}

/** An image content block: base64 data and its MIME type. */
export interface ImageContent {
  readonly type: 'image';
  /** Base64-encoded image data. */
  readonly data: string;
  readonly mimeType: string;
  readonly annotations?: ContentAnnotations;
}

/** An audio content block: base64 data and its MIME type. */
export interface AudioContent {
  readonly type: 'audio';
  /** Base64-encoded audio data. */
  readonly data: string;
  readonly mimeType: string;
  readonly annotations?: ContentAnnotations;
}

/** A link to a resource the client may read (`resources/read`) rather than the content itself. */
export interface ResourceLinkContent {
  readonly type: 'resource_link';
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly annotations?: ContentAnnotations;
}

/** A resource embedded in the result: its URI and its text, or its base64 `blob`. */
export interface EmbeddedResourceContent {
  readonly type: 'resource';
  readonly resource:
    | { readonly uri: string; readonly mimeType?: string; readonly text: string }
    | { readonly uri: string; readonly mimeType?: string; readonly blob: string };
  readonly annotations?: ContentAnnotations;
}

/**
 * One MCP content block. A method whose return type is `ContentBlock[]` (or `ToolContent`) has
 * its blocks passed through as the result's `content`, unchanged.
 * @mcpTaskgen contentBlock
 */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLinkContent | EmbeddedResourceContent;

/**
 * The content of a tool result, for methods that build it themselves:
 *
 * @example
 * async thumbnail(input: { url: string }): Promise<ToolContent> {
 *   return [{ type: 'image', data: await render(input.url), mimeType: 'image/png' }];
 * }
 * @mcpTaskgen content
 */
export type ToolContent = readonly ContentBlock[];

/**
 * A whole tool result, passed through unchanged: for methods that set `isError` themselves or
 * pair their own `content` with `structuredContent`.
 * @mcpTaskgen toolResult
 */
export interface ToolResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: { readonly [key: string]: unknown };
  readonly isError?: boolean;
}

/**
 * `onMismatch` hears of a value that does not match the declared type (the detail names the
 * path), so it can be logged: the client only sees the tool error.
 */
export function toCallToolResult(
  definition: TaskToolDefinition,
  value: unknown,
  onMismatch?: (detail: string) => void,
): CallToolResultJson {
  const mismatch = (shapeDefinition: TaskToolDefinition, detail: string) => {
    onMismatch?.(detail);
    return mismatchResult(shapeDefinition, detail);
  };
  return shapeResult(definition.result, definition, value, mismatch);
}

type Mismatch = (definition: TaskToolDefinition, detail: string) => CallToolResultJson;

function shapeResult(
  shape: ResultShape,
  definition: TaskToolDefinition,
  value: unknown,
  mismatch: Mismatch,
): CallToolResultJson {
  switch (shape) {
    case 'none':
      return { content: [] };
    case 'text':
      if (typeof value !== 'string') return mismatch(definition, `expected a string, got ${describe(value)}`);
      return { content: [{ type: 'text', text: value }] };
    case 'json': {
      const parsed = definition.output ? definition.output.safeParse(value) : { success: true as const, data: value };
      if (!parsed.success) return mismatch(definition, issueText(parsed.error.issues));
      return { content: [{ type: 'text', text: JSON.stringify(parsed.data) ?? 'null' }] };
    }
    case 'content': {
      const problem = contentProblem(value, '');
      if (problem) return mismatch(definition, problem);
      return { content: [...(value as unknown[])] };
    }
    case 'tool-result': {
      if (!isRecord(value)) return mismatch(definition, `expected a ToolResult object, got ${describe(value)}`);
      const problem =
        contentProblem(value.content, 'content.') ??
        (value.structuredContent !== undefined && !isRecord(value.structuredContent)
          ? `at structuredContent: expected an object, got ${describe(value.structuredContent)}`
          : undefined) ??
        (value.isError !== undefined && typeof value.isError !== 'boolean'
          ? `at isError: expected a boolean, got ${describe(value.isError)}`
          : undefined);
      if (problem) return mismatch(definition, problem);
      return { ...value, content: [...(value.content as unknown[])] };
    }
    case 'structured': {
      const parsed = definition.output ? definition.output.safeParse(value) : { success: true as const, data: value };
      if (!parsed.success) return mismatch(definition, issueText(parsed.error.issues));
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

function issueText(issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[]): string {
  const issue = issues[0];
  const path = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return `at ${path}: ${issue?.message ?? 'invalid value'}`;
}

const CONTENT_TYPES: ReadonlySet<string> = new Set(['text', 'image', 'audio', 'resource_link', 'resource']);

/**
 * The first way `value` is not an array of content blocks, or `undefined`. Checks the shape the
 * client relies on (an array of objects with a known `type`), not every field of every block.
 */
function contentProblem(value: unknown, prefix: string): string | undefined {
  const where = (path: string) => `at ${`${prefix}${path}`.replace(/\.$/, '') || '(root)'}`;
  if (!Array.isArray(value)) return `${where('')}: expected an array of content blocks, got ${describe(value)}`;
  for (const [index, block] of value.entries()) {
    if (!isRecord(block)) return `${where(String(index))}: expected a content block, got ${describe(block)}`;
    if (typeof block.type !== 'string' || !CONTENT_TYPES.has(block.type))
      return `${where(`${index}.type`)}: expected one of ${[...CONTENT_TYPES].join(', ')}, got ${JSON.stringify(block.type) ?? 'undefined'}`;
    if (block.type === 'text' && typeof block.text !== 'string')
      return `${where(`${index}.text`)}: expected a string, got ${describe(block.text)}`;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The method broke its own declared return type: a tool error the caller can read. */
function mismatchResult(definition: TaskToolDefinition, detail: string): CallToolResultJson {
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
