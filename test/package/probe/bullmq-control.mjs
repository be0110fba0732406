// The control for the probe: building a BullMQ runtime must load bullmq and ioredis, and the
// module record must see them although they are loaded with `require` on first use.
import { BullmqTaskRuntime } from 'mcp-task-server';
import { loadedPackages } from './loaded-packages.mjs';

// lazyConnect: nothing dials Redis; building the runtime is enough.
new BullmqTaskRuntime({ connection: { host: '127.0.0.1', port: 1, lazyConnect: true } });
process.stdout.write(`loaded: ${JSON.stringify(loadedPackages())}\n`);
process.exit(0);
