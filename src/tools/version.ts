/**
 * A tool's version: what pins a resumed task to workers that run the same tool. The registry
 * computes it at start-up from the generated manifest entry, so every process built from the
 * same generated code agrees without coordinating.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../engine/idempotency.js';
import type { TaskToolDefinition } from './definition.js';

/** The longest `@Task({ version })`; `mcp-taskgen` holds the same bound. */
export const MAX_TOOL_VERSION_LENGTH = 64;

/** Hex characters kept of the schema hash: 48 bits, plenty to tell a tool's versions apart. */
const HASH_LENGTH = 12;

/**
 * The version of `tool`: its `@Task({ version })` when given, else the first 12 hex characters
 * of the sha256 of its generated input, output and question schemas as canonical JSON (keys
 * sorted), so a change to any of them is a new version and nothing else is.
 */
export function toolVersionOf(tool: VersionedTool): string {
  if (tool.version !== undefined) return tool.version;
  const known = hashes.get(tool);
  if (known !== undefined) return known;
  const schemas = {
    input: tool.inputSchema,
    output: tool.outputSchema ?? null,
    questions: (tool.questions ?? []).map((question) => ({ name: question.name, schema: question.schema })),
  };
  const hash = createHash('sha256').update(canonicalJson(schemas)).digest('hex').slice(0, HASH_LENGTH);
  hashes.set(tool, hash);
  return hash;
}

type VersionedTool = Pick<TaskToolDefinition, 'version' | 'inputSchema' | 'outputSchema' | 'questions'>;

/** Hashes already computed, by manifest entry: a create asks for its tool's version every time. */
const hashes = new WeakMap<VersionedTool, string>();

/** Why `version` cannot be a tool's version, or `undefined` when it can. */
export function toolVersionProblem(version: unknown): string | undefined {
  if (version === undefined) return undefined;
  return typeof version === 'string' && version.trim().length > 0 && version.length <= MAX_TOOL_VERSION_LENGTH
    ? undefined
    : `version must be a non-empty string of at most ${MAX_TOOL_VERSION_LENGTH} characters, got ${JSON.stringify(version)}`;
}
