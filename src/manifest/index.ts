/**
 * mcp-task-server/manifest: the format of the modules `mcp-taskgen` writes. Generated code
 * imports these helpers; an application imports its generated `taskManifest` and passes it to
 * `createTaskServer` or `createTaskWorker`, and should not need anything here.
 */
export type {
  AnyClass,
  CallbackDefinition,
  ClientCapabilityName,
  JsonSchema,
  QuestionDefinition,
  ResultShape,
  TaskSupport,
  TaskToolDefinition,
  UndefinedValueSchema,
} from '../tools/definition.js';
export { defineTaskManifest, defineTaskTool, MANIFEST_FORMAT_VERSION, undefinedValue } from '../tools/definition.js';
