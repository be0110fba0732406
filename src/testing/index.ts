/**
 * mcp-task-server/testing: test an app's task tools in-process, in both dialects, on the
 * in-process runtime or BullMQ, with scripted answers and a clock the test moves.
 */
export type { ScriptedAnswer, ScriptedAnswers } from './answers.js';
export type { TestClock } from './clock.js';
export type { HarnessVariant, TestedApp, TestHarness, TestHarnessOptions } from './harness.js';
export { createTestHarness, expectStatusSequence, harnessMatrix } from './harness.js';
