import { MemoryTaskRuntime } from '../../src/runtime/memory/memory-runtime.js';
import { describeRuntimeContract } from './runtime-contract.js';

describeRuntimeContract('memory', async (executor, { concurrency }) => {
  const runtime = new MemoryTaskRuntime({ executor, concurrency });
  return { runtime, dispose: () => runtime.close() };
});
