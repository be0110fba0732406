/**
 * The pieces of the companion tools that need no server: the outputSchema a caller without
 * tasks sees (checked with the v1 SDK client's own validator, as that client checks results),
 * the questions as a model reads them, and the modes each tool ends up in.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { describe, expect, it } from 'vitest';
import { taskManifest as fixtureManifest } from '../../examples/conformance-fixture/src/__generated__/tasks.generated.js';
import { FixtureTools } from '../../examples/conformance-fixture/src/fixture-tools.js';
import { GeneralTools } from '../../examples/conformance-fixture/src/general-tools.js';
import { taskManifest as scanManifest } from '../../examples/repo-scan/src/__generated__/tasks.generated.js';
import { TaskEngine } from '../../src/engine/engine.js';
import {
  outputSchemaWithHandle,
  questionView,
  TASK_STATUS_SCHEMA,
  UnawareClients,
} from '../../src/protocol/companion-tools.js';
import { ToolCalls } from '../../src/protocol/tool-calls.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const validator = new AjvJsonSchemaValidator();

describe('the outputSchema a caller without tasks sees', () => {
  const clean = scanManifest.tools.find((tool) => tool.name === 'clean_build_outputs');
  const schema = outputSchemaWithHandle(clean?.outputSchema ?? {});
  const check = validator.getValidator(schema);

  it('is an object schema at the top, with the $defs the tool refers to', () => {
    expect(schema.type).toBe('object');
    expect(schema.$defs).toEqual(clean?.outputSchema?.$defs);
    expect((schema.anyOf as unknown[])[1]).toEqual(TASK_STATUS_SCHEMA);
  });

  it("admits the tool's own result and the handle, and nothing else", () => {
    expect(check({ deleted: [{ path: 'dist', bytes: 10 }], kept: [], bytesFreed: 10 }).valid).toBe(true);
    expect(check({ taskId: 'abc', status: 'working', pollAfterSeconds: 1 }).valid).toBe(true);
    expect(check({ deleted: [{ path: 'dist' }], kept: [], bytesFreed: 10 }).valid).toBe(false);
    expect(check({ status: 'working' }).valid).toBe(false);
  });
});

describe('questions as a model reads them', () => {
  it('lists each field with its type, whether it is required, and its allowed values', () => {
    const view = questionView('mode', {
      question: 'mode',
      params: {
        mode: 'form',
        message: 'How?',
        requestedSchema: {
          type: 'object',
          properties: {
            speed: { type: 'string', enum: ['slow', 'fast'], description: 'How fast' },
            colour: {
              type: 'string',
              oneOf: [
                { const: 'red', title: 'Red' },
                { const: 'blue', title: 'Blue' },
              ],
            },
            count: { type: 'integer', minimum: 1, maximum: 9 },
          },
          required: ['speed'],
        },
      },
    });
    expect(view).toEqual({
      question: 'mode',
      message: 'How?',
      fields: [
        { name: 'speed', type: 'string', required: true, description: 'How fast', allowed: ['slow', 'fast'] },
        { name: 'colour', type: 'string', required: false, allowed: ['red', 'blue'] },
        { name: 'count', type: 'integer', required: false, minimum: 1, maximum: 9 },
      ],
    });
  });
});

describe('modes and names', () => {
  const registry = new ToolRegistry({ manifest: fixtureManifest, instances: [new FixtureTools(), new GeneralTools()] });
  const calls = new ToolCalls(new TaskEngine({ runtime: new MemoryTaskRuntime({ executor: registry }) }), registry);
  const tool = (name: string) => registry.get(name);

  it('auto for optional tools; required tools refuse unless the server opts them in; a tool setting wins', () => {
    const byDefault = new UnawareClients(calls, { graceMs: 10, prefix: 'task_' });
    expect(byDefault.modeOf(tool('slow_compute'))).toBe('auto');
    expect(byDefault.modeOf(tool('failing_job'))).toBe('refuse');
    expect(byDefault.modeOf(tool('greet'))).toBe('inline');
    const handles = new UnawareClients(calls, { mode: 'handle', graceMs: 10, prefix: 'task_' });
    expect(handles.modeOf(tool('failing_job'))).toBe('handle');
    expect(handles.modeOf({ ...tool('slow_compute'), unawareClients: 'inline' })).toBe('inline');
    const inline = new UnawareClients(calls, { mode: 'inline', graceMs: 10, prefix: 'task_' });
    expect(inline.modeOf(tool('failing_job'))).toBe('refuse');
    expect(inline.modeOf({ ...tool('failing_job'), unawareClients: 'auto' })).toBe('auto');
  });

  it('takes a prefix, and refuses one that collides with a tool or makes an invalid name', () => {
    const prefixed = new UnawareClients(calls, { graceMs: 10, prefix: 'job.' });
    expect([...prefixed.companionNames()]).toEqual([
      'job.status',
      'job.wait',
      'job.result',
      'job.answer',
      'job.cancel',
    ]);
    expect(() => new UnawareClients(calls, { graceMs: 10, prefix: 'bad prefix ' })).toThrow(
      /not a valid MCP tool name/,
    );
    expect(() => new UnawareClients(calls, { graceMs: 10, prefix: 'slow_' })).not.toThrow();
    const clashing = new ToolRegistry({
      manifest: {
        formatVersion: 1,
        tools: [...fixtureManifest.tools, { ...tool('slow_compute'), name: 'task_status' }],
      },
      instances: [new FixtureTools(), new GeneralTools()],
    });
    const clashingCalls = new ToolCalls(
      new TaskEngine({ runtime: new MemoryTaskRuntime({ executor: clashing }) }),
      clashing,
    );
    expect(() => new UnawareClients(clashingCalls, { graceMs: 10, prefix: 'task_' })).toThrow(
      /a tool named 'task_status'.*unawareClients.prefix/,
    );
  });
});
