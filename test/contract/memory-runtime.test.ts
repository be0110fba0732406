import { callbackTokenHash } from '../../src/engine/callbacks.js';
import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';
import { describeRuntimeContract } from './runtime-contract.js';

describeRuntimeContract('memory', async (executor, { concurrency }) => {
  const runtime = new MemoryTaskRuntime({ executor, concurrency });
  // The index is private: this probe is the contract's one look inside (see `callbackTokenStored`).
  const index = (runtime as unknown as { callbackIndex: ReadonlyMap<string, unknown> }).callbackIndex;
  return {
    runtime,
    callbackTokenStored: async (token) => index.has(callbackTokenHash(token)),
    dispose: () => runtime.close(),
  };
});
