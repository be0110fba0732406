/**
 * A 2026-07-28 call without a task runs its method again from the top on every
 * multi-round-trip round. Its `ctx.step` results and answers travel in the sealed
 * `requestState`, so work before a question runs once; a forged or borrowed state is refused.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../examples/conformance-fixture/app.js';
import { type RunningServer, rpc2026, startServer } from './support.js';

const NO_TASKS = { capabilities: { elicitation: {} } };
const GO = { go: { action: 'accept', content: { go: true } } };

let running: RunningServer;

beforeAll(async () => {
  running = await startServer({ ...app });
});
afterAll(() => running?.close());

describe('ctx.step across the rounds of a call without a task', () => {
  it('runs the step once: the second round gets the first round’s result back', async () => {
    const label = randomUUID();
    const call = { name: 'counted_step', arguments: { label } };
    const first = await rpc2026(running.url, 'tools/call', call, NO_TASKS);
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { go: {} } });
    const requestState = first.result?.requestState;
    expect(typeof requestState).toBe('string');

    const second = await rpc2026(running.url, 'tools/call', { ...call, inputResponses: GO, requestState }, NO_TASKS);
    expect(second.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { stepValue: 1, stepRunsInProcess: 1 },
    });
  });

  it('refuses a forged state (-32602) and never replays a state into another call', async () => {
    const label = randomUUID();
    const first = await rpc2026(running.url, 'tools/call', { name: 'counted_step', arguments: { label } }, NO_TASKS);
    const requestState = first.result?.requestState as string;

    // The client can read the payload but not change it: the seal no longer matches.
    const [version, body, mac] = requestState.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as {
      p: Record<string, unknown> & { steps: Record<string, unknown> };
    };
    payload.p.steps = { count: 41 };
    const forged = `${version}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
    const tampered = await rpc2026(
      running.url,
      'tools/call',
      { name: 'counted_step', arguments: { label }, inputResponses: GO, requestState: forged },
      NO_TASKS,
    );
    expect(tampered.error?.code).toBe(-32602);

    // The readable payload sent back as a plain object, unsealed: refused like a forged string.
    const unsealed = await rpc2026(
      running.url,
      'tools/call',
      {
        name: 'counted_step',
        arguments: { label },
        inputResponses: GO,
        requestState: { ...payload.p, steps: { count: 41 } },
      },
      NO_TASKS,
    );
    expect(unsealed.error?.code).toBe(-32602);

    // A genuine state, but sealed for other arguments.
    const borrowed = await rpc2026(
      running.url,
      'tools/call',
      { name: 'counted_step', arguments: { label: `${label}-other` }, inputResponses: GO, requestState },
      NO_TASKS,
    );
    expect(borrowed.error).toMatchObject({ code: -32602, message: 'requestState does not belong to this call' });
  });

  it('keeps another principal from resuming a call with a state sealed for someone else', async () => {
    const label = randomUUID();
    const server = await startServer({
      ...app,
      resolvePrincipal: ({ headers }) => headers?.get('authorization')?.replace(/^Bearer /, '') ?? null,
    });
    try {
      const call = { name: 'counted_step', arguments: { label } };
      const asAlice = { ...NO_TASKS, headers: { authorization: 'Bearer alice' } };
      const asBob = { ...NO_TASKS, headers: { authorization: 'Bearer bob' } };
      const first = await rpc2026(server.url, 'tools/call', call, asAlice);
      const requestState = first.result?.requestState;
      const bob = await rpc2026(server.url, 'tools/call', { ...call, inputResponses: GO, requestState }, asBob);
      expect(bob.error).toMatchObject({ code: -32602, message: 'requestState does not belong to this call' });
      const alice = await rpc2026(server.url, 'tools/call', { ...call, inputResponses: GO, requestState }, asAlice);
      expect(alice.result).toMatchObject({ structuredContent: { stepValue: 1, stepRunsInProcess: 1 } });
    } finally {
      await server.close();
    }
  });
});
