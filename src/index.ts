/**
 * mcp-task-server: long-running MCP tools as durable tasks.
 *
 * Decorate methods with `@Task`, run `mcp-taskgen` to generate their schemas and glue, then
 * serve them with `createTaskServer()`.
 */

export type {
  MethodDecorator,
  NeedsInputOptions,
  QuestionMetadata,
  TaskOptions,
  ToolOptions,
} from './decorators/index.js';
export {
  NEEDS_INPUT_METADATA_KEY,
  NeedsInput,
  TASK_METADATA_KEY,
  Task,
  TOOL_METADATA_KEY,
  Tool,
} from './decorators/index.js';
export { isTaskPaused, TaskPaused } from './engine/errors.js';
export type { LifecycleEvent, TaskFacts, TaskObserver } from './engine/lifecycle.js';
export type { TaskPolicy } from './engine/policy.js';
export type { TaskExecutor, TaskRuntime } from './engine/runtime.js';
export type { ClientConnection, TrustProxy } from './host/client-address.js';
export type { HttpAuthOptions, HttpFrontOptions } from './host/http-front.js';
export type { TaskServerLimits } from './host/limits.js';
export { DEFAULT_LIMITS, environmentName, limitsFromEnvironment } from './host/limits.js';
export type { PrincipalResolver, PrincipalSource } from './host/principal.js';
export { defaultPrincipalResolver } from './host/principal.js';
export type { RunOptions } from './host/run.js';
export { runTaskServer } from './host/run.js';
export type { RedisSetup, RuntimeChoice } from './host/runtime-choice.js';
export type {
  ListeningServer,
  ListenOptions,
  MetricsOptions,
  TaskServer,
  TaskServerOptions,
  TaskServerStats,
  UnawareClientsOptions,
} from './host/task-server.js';
export { createTaskServer } from './host/task-server.js';
export type { TokenTableEntry } from './host/token-table.js';
export { parseTokenTable, tokenTableVerifier } from './host/token-table.js';
export type { WaiterCounts, WaiterStats } from './host/waiters.js';
export type { RunWorkersOptions, TaskWorkerProcessOptions } from './host/workers.js';
export { createTaskWorker, runTaskWorkers } from './host/workers.js';
export type { LogLevel, PinoLike, ProcessRole } from './observe/log.js';
export { createPinoLogger, loggerFromPino } from './observe/log.js';
export type {
  QuestionField,
  QuestionView,
  TaskStatusView,
  UnawareClientMode,
} from './protocol/companion-tools.js';
export {
  DEFAULT_COMPANION_PREFIX,
  DEFAULT_UNAWARE_GRACE_MS,
  TASK_STATUS_SCHEMA,
  TASK_WAIT_CAP_SECONDS,
} from './protocol/companion-tools.js';
export type {
  BullmqRuntimeOptions,
  JobRetryOptions,
  RedisClusterConnection,
  RedisConnection,
  TaskWorkerSettings,
} from './runtime/bullmq/index.js';
export { BullmqTaskRuntime, TaskWorker } from './runtime/bullmq/index.js';
export { MemoryTaskRuntime } from './runtime/memory/memory-runtime.js';
export type { InputOptions, InputResult, QuestionMap, TaskContext, TaskLogger, TaskProgress } from './tools/context.js';
export type {
  AnyClass,
  JsonSchema,
  QuestionDefinition,
  ResultShape,
  TaskManifest,
  TaskSupport,
  TaskToolDefinition,
  UndefinedValueSchema,
} from './tools/definition.js';
export { defineTaskManifest, defineTaskTool, MANIFEST_FORMAT_VERSION, undefinedValue } from './tools/definition.js';
export { JsonRpcError, ManifestError } from './tools/errors.js';
export type { Logger } from './tools/logger.js';
export { createConsoleLogger, silentLogger } from './tools/logger.js';
export type {
  AudioContent,
  ContentBlock,
  EmbeddedResourceContent,
  ImageContent,
  ResourceLinkContent,
  TextContent,
  ToolContent,
  ToolResult,
} from './tools/result.js';
export type { Integer } from './tools/types.js';
