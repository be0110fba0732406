/**
 * mcp-task-server/client: call task tools on any MCP server that speaks 2025-11-25 core tasks
 * or the 2026-07-28 tasks extension, with one task handle for both.
 */

/** The zod the generated typed client builds its schemas with. */
export { z } from 'zod';
export { JsonRpcErrorCode } from '../jsonrpc/json-rpc-error.js';
export type { TaskClientErrorCode as TaskClientErrorCodeValue } from './errors.js';
export { isTaskNotFound, JsonRpcResponseError, TaskClientError, TaskClientErrorCode } from './errors.js';
export type { CallOptions, TaskCall, TaskClient, TaskClientOptions, TaskServerTarget } from './task-client.js';
export { connectTaskClient } from './task-client.js';
export { TaskHandle } from './task-handle.js';
export type {
  ClientSpec,
  QuestionKey,
  ResultKind,
  ToolSpec,
  TypedClient,
  TypedTaskCall,
  TypedTaskEvent,
} from './typed.js';
export { createTypedClient } from './typed.js';
/** The SDK's tool result (`content`, `structuredContent`, `isError`): what `TaskCall.result()` resolves with. */
export type {
  CallToolResult,
  Dialect,
  DialectChoice,
  QuestionAnswer,
  TaskEvent,
  TaskQuestion,
  TaskSnapshot,
  TaskStatus,
  ToolSummary,
} from './types.js';
export { sleepingUntil } from './wait-notes.js';
