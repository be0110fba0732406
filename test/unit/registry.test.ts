/** The tool layer: manifest checks at start-up, argument validation, and result shaping. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Task, type TaskContext, Tool } from '../../src/index.js';
import { JsonRpcError } from '../../src/jsonrpc/json-rpc-error.js';
import { defineTaskManifest, defineTaskTool, type TaskToolDefinition } from '../../src/tools/definition.js';
import { ManifestError } from '../../src/tools/errors.js';
import { ToolRegistry } from '../../src/tools/registry.js';

class Shop {
  @Task()
  async order(input: { sku: string; quantity: number }): Promise<{ orderId: string; total: number }> {
    if (input.sku === 'lie') return { orderId: 'x', total: 'free' as unknown as number };
    if (input.sku === 'rpc') throw new JsonRpcError(-32001, 'warehouse offline', { retryAfter: 5 });
    if (input.sku === 'boom') throw new Error('out of stock');
    return { orderId: `o-${input.sku}`, total: input.quantity * 2 };
  }

  @Tool()
  async describe(): Promise<string> {
    return 42 as unknown as string;
  }

  unmarked(): void {}
}

const OrderInput = z.strictObject({ sku: z.string(), quantity: z.int().min(1) });
const OrderOutput = z.strictObject({ orderId: z.string(), total: z.number() });

function tools(overrides: Partial<TaskToolDefinition<Shop, never>> = {}): TaskToolDefinition[] {
  return [
    defineTaskTool<Shop, z.output<typeof OrderInput>>({
      name: 'order',
      taskSupport: 'optional',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
      input: OrderInput,
      output: OrderOutput,
      result: 'structured',
      target: { class: Shop, method: 'order' },
      source: 'shop.ts:3:3',
      invoke: (target, args) => target.order(args),
      ...(overrides as object),
    }),
    defineTaskTool<Shop, Record<string, never>>({
      name: 'describe',
      taskSupport: 'forbidden',
      inputSchema: { type: 'object' },
      input: z.strictObject({}),
      result: 'text',
      target: { class: Shop, method: 'describe' },
      source: 'shop.ts:12:3',
      invoke: (target) => target.describe(),
    }),
  ];
}

const signal = new AbortController().signal;

describe('ToolRegistry', () => {
  const registry = new ToolRegistry({
    manifest: defineTaskManifest({ formatVersion: 1, tools: tools() }),
    instances: [new Shop()],
  });
  const run = (name: string, args: unknown) => registry.runInline(registry.get(name), args, { signal });

  it('shapes an object result as structuredContent plus its JSON text', async () => {
    expect(await run('order', { sku: 'a', quantity: 2 })).toEqual({
      kind: 'result',
      isError: false,
      result: {
        content: [{ type: 'text', text: '{"orderId":"o-a","total":4}' }],
        structuredContent: { orderId: 'o-a', total: 4 },
      },
    });
  });

  it('reports a return value that breaks the declared type as a tool error naming the path', async () => {
    const outcome = await run('order', { sku: 'lie', quantity: 1 });
    expect(outcome).toMatchObject({ kind: 'result', isError: true });
    expect(JSON.stringify(outcome)).toMatch(/at total: /);
    const text = await run('describe', {});
    expect(JSON.stringify(text)).toMatch(/expected a string, got a number/);
  });

  it('turns a thrown JsonRpcError into an error outcome and any other error into a tool error', async () => {
    expect(await run('order', { sku: 'rpc', quantity: 1 })).toEqual({
      kind: 'error',
      error: { code: -32001, message: 'warehouse offline', data: { retryAfter: 5 } },
    });
    expect(await run('order', { sku: 'boom', quantity: 1 })).toEqual({
      kind: 'result',
      isError: true,
      result: { content: [{ type: 'text', text: 'out of stock' }], isError: true },
    });
  });

  it('names every bad argument', () => {
    expect(() => registry.parseArguments(registry.get('order'), { sku: 1, quantity: 0, extra: true })).toThrow(
      /Invalid arguments for tool order: sku: .*; quantity: .*; \(arguments\): .*extra/,
    );
  });

  it('refuses a manifest whose method lost its mark, naming the method and the fix', () => {
    const stale = tools({ target: { class: Shop, method: 'unmarked' } });
    expect(() => new ToolRegistry({ manifest: { formatVersion: 1, tools: stale }, instances: [] })).toThrow(
      /Shop\.unmarked \(shop\.ts:3:3\) is listed as a task .* carries no @Task\/@Tool mark.*npx mcp-taskgen/,
    );
    const missing = tools({ target: { class: Shop, method: 'gone' } });
    expect(() => new ToolRegistry({ manifest: { formatVersion: 1, tools: missing }, instances: [] })).toThrow(
      /does not exist/,
    );
  });

  it('re-checks the creation policies at start-up, naming the tool, its source and the bound', () => {
    const start = (overrides: Record<string, unknown>) => () =>
      new ToolRegistry({
        manifest: defineTaskManifest({ formatVersion: 1, tools: tools(overrides as never) }),
        instances: [new Shop()],
      });
    expect(start({ priority: 0, idempotent: true, priorityFromCall: false })).not.toThrow();
    expect(start({ priority: 1000 })).not.toThrow();
    for (const priority of [-1, 1001, 2.5, '3']) {
      expect(start({ priority })).toThrow(
        new ManifestError(
          `Tool order (shop.ts:3:3): priority must be a whole number from 0 to 1000 (lower runs first), got ${JSON.stringify(priority)}`,
        ),
      );
    }
    expect(start({ idempotent: 'yes' })).toThrow(/Tool order \(shop.ts:3:3\): idempotent must be true or false/);
    expect(start({ priorityFromCall: 1 })).toThrow(/priorityFromCall must be true or false, got 1/);
    expect(start({ version: '4' })).not.toThrow();
    for (const version of ['', '  ', 4, 'v'.repeat(65)]) {
      expect(start({ version })).toThrow(
        new ManifestError(
          `Tool order (shop.ts:3:3): version must be a non-empty string of at most 64 characters, got ${JSON.stringify(version)}`,
        ),
      );
    }
  });

  it("knows each tool's version: the declared one, else a hash of its schemas", () => {
    const start = (overrides: object) =>
      new ToolRegistry({
        manifest: defineTaskManifest({ formatVersion: 1, tools: tools(overrides as never) }),
        instances: [new Shop()],
      }).toolVersions();
    expect(start({ version: '3' }).get('order')).toBe('3');
    const hashed = start({}).get('order');
    expect(hashed).toMatch(/^[0-9a-f]{12}$/);
    expect(start({}).get('order')).toBe(hashed);
    expect(start({}).get('describe')).not.toBe(hashed);
  });

  it('refuses a manifest of another format version', () => {
    expect(() => new ToolRegistry({ manifest: { formatVersion: 2 as 1, tools: [] }, instances: [] })).toThrow(
      /format 2/,
    );
  });

  it('refuses at start-up a manifest class without an instance, naming the class, its file and the fix', () => {
    expect(() => new ToolRegistry({ manifest: { formatVersion: 1, tools: tools() }, instances: [] })).toThrow(
      'No instance of Shop (shop.ts) was given, so order, describe could not run: add `new Shop(...)` to the `instances` passed to runTaskServer / runTaskWorkers.',
    );
  });

  it('refuses at start-up a marked method the manifest lacks, and an instance of a class it does not list', () => {
    const onlyOrder = tools().filter((tool) => tool.name === 'order');
    expect(
      () => new ToolRegistry({ manifest: { formatVersion: 1, tools: onlyOrder }, instances: [new Shop()] }),
    ).toThrow(
      'Shop.describe is marked @Task/@Tool in shop.ts but missing from the generated manifest: run `npx mcp-taskgen` to regenerate.',
    );
    class Extra {
      @Tool()
      async ping(): Promise<string> {
        return 'pong';
      }
    }
    let refused: unknown;
    try {
      new ToolRegistry({ manifest: { formatVersion: 1, tools: tools() }, instances: [new Shop(), new Extra()] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ManifestError);
    expect((refused as Error).message).toBe(
      'Extra was given as an instance, but the generated manifest lists no tool of it (it marks ping): run `npx mcp-taskgen` to regenerate, or remove it from `instances`.',
    );
  });

  it('accepts an instance of a subclass, whose overrides carry no marks of their own', () => {
    class BusyShop extends Shop {
      override async order(input: { sku: string; quantity: number }) {
        return super.order(input);
      }
    }
    expect(
      () => new ToolRegistry({ manifest: { formatVersion: 1, tools: tools() }, instances: [new BusyShop()] }),
    ).not.toThrow();
  });

  it('passes the context through to the method', async () => {
    let seen: TaskContext | undefined;
    class Probe {
      @Task()
      async run(ctx: TaskContext): Promise<void> {
        seen = ctx;
        ctx.progress('half way');
      }
    }
    const probe = new ToolRegistry({
      manifest: {
        formatVersion: 1,
        tools: [
          defineTaskTool<Probe, Record<string, never>>({
            name: 'run',
            taskSupport: 'optional',
            inputSchema: { type: 'object' },
            input: z.strictObject({}),
            result: 'none',
            target: { class: Probe, method: 'run' },
            source: 'probe.ts:1:1',
            invoke: (target, _args, ctx) => target.run(ctx),
          }),
        ],
      },
      instances: [new Probe()],
    });
    const progress: unknown[] = [];
    const outcome = await probe.runInline(probe.get('run'), {}, { signal, onProgress: (p) => progress.push(p) });
    expect(outcome).toEqual({ kind: 'result', isError: false, result: { content: [] } });
    expect(seen?.taskId).toBeUndefined();
    expect(seen?.signal).toBe(signal);
    expect(progress).toEqual([{ message: 'half way' }]);
  });
});
