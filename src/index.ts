/**
 * mcp-task-server: long-running MCP tools as durable tasks.
 *
 * Decorate methods with `@Task`, run `mcp-taskgen` to generate their schemas and glue, then
 * serve them with `createTaskServer()`.
 */
export { NeedsInput, Task, Tool } from './decorators/index.js';
export type { MethodDecorator, NeedsInputOptions, TaskOptions, ToolOptions } from './decorators/index.js';
export type { TaskContext, TaskLogger, TaskProgress } from './tools/context.js';
export type { Integer } from './tools/types.js';
export { defineTaskManifest, defineTaskTool, MANIFEST_FORMAT_VERSION } from './tools/definition.js';
export type {
  AnyClass,
  JsonSchema,
  QuestionDefinition,
  ResultShape,
  TaskManifest,
  TaskSupport,
  TaskToolDefinition,
} from './tools/definition.js';
