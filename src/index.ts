/**
 * mcp-task-server: long-running MCP tools as durable tasks.
 *
 * Decorate methods with `@Task`, run `mcp-taskgen` to generate their schemas and glue, then
 * serve them with `createTaskServer()` or `runTaskServer()`. Calling such a server is
 * `mcp-task-server/client`; testing an app is `mcp-task-server/testing`; what generated code
 * imports is `mcp-task-server/manifest`.
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by audience, each group under its comment.

// Authoring tools: the marks on a class's methods, and what a method receives and returns.
export type {
  MethodDecorator,
  NeedsInputOptions,
  QuestionMetadata,
  TaskOptions,
  TaskRetryOptions,
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
export { type DurableWait, isTaskPaused, TaskPaused } from './engine/errors.js';
export { NonRetryableError } from './tools/errors.js';
export type {
  CallbackHook,
  CallbackOptions,
  CallbackOutcome,
  ChildResults,
  ChildTask,
  InputOptions,
  InputResult,
  QuestionMap,
  SleepOptions,
  SpawnArgs,
  SpawnResult,
  TaskContext,
  TaskLogger,
  TaskProgress,
  ToolMap,
  ToolTypes,
} from './tools/context.js';
export { type Duration, type DurationUnit, parseDuration } from './tools/duration.js';
export { ChildTaskFailedError } from './tools/children.js';
export { DEFAULT_MAX_CHILDREN_PER_TASK, RELATED_TASK_IDS_META_KEY } from './engine/children.js';
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

// Serving: one server object for stdio and Streamable HTTP, or a whole process from the environment.
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
export type { WaiterCounts, WaiterStats } from './host/waiters.js';
export type { TaskManifest } from './tools/definition.js';

// HTTP, callers and limits: who is calling, how they authenticate, and how much they may use.
export type { ClientConnection, TrustProxy } from './http/client-address.js';
export type { HttpAuthOptions, HttpFrontOptions } from './host/http-front.js';
export type { TaskServerLimits } from './host/limits.js';
export { DEFAULT_LIMITS, environmentName, limitsFromEnvironment } from './host/limits.js';
export type { PrincipalResolver, PrincipalSource } from './host/principal.js';
export { defaultPrincipalResolver } from './host/principal.js';
export type { TokenTableEntry } from './host/token-table.js';
export { parseTokenTable, tokenTableVerifier } from './host/token-table.js';

// Runtimes: where task methods run (in-process, or BullMQ workers on Redis), and the contract both meet.
export type { TaskPolicy } from './engine/policy.js';
export type { IdempotencyClaim, TaskExecutor, TaskRuntime } from './engine/runtime.js';
export type { RunWorkersOptions, TaskWorkerProcessOptions } from './host/workers.js';
export { createTaskWorker, runTaskWorkers } from './host/workers.js';
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
  RedisSentinelConnection,
  TaskWorkerSettings,
} from './runtime/bullmq/index.js';
export { BullmqTaskRuntime, TaskWorker } from './runtime/bullmq/index.js';
export { MemoryTaskRuntime } from './runtime/memory/memory-runtime.js';

// Creation policies: the `_meta` keys a call sets them with, and their bounds.
export { MAX_IDEMPOTENCY_KEY_LENGTH } from './engine/idempotency.js';
export { MAX_PRIORITY } from './engine/task.js';
export { IDEMPOTENCY_KEY_META_KEY, PRIORITY_META_KEY } from './protocol/params.js';

// Errors: what a tool throws to answer with a JSON-RPC error, and what start-up refuses.
export { JsonRpcError, JsonRpcErrorCode } from './jsonrpc/json-rpc-error.js';
export { ManifestError } from './tools/errors.js';

// Observability: logs, and the lifecycle events metrics, traces and audit logs are built from.
export type { LifecycleEvent, TaskFacts, TaskObserver } from './engine/lifecycle.js';
export type { LogLevel, PinoLike, ProcessRole } from './observe/log.js';
export { createConsoleLogger, createPinoLogger, loggerFromPino } from './observe/log.js';
export type { Logger } from './observe/logger.js';
export { silentLogger } from './observe/logger.js';
