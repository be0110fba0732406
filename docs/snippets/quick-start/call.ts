// #region call
import { connectTaskClient } from 'mcp-task-server/client';

const client = await connectTaskClient('http://127.0.0.1:3000/mcp');
const task = await client.call('count_primes', { below: 2_000_000 });
for await (const event of task.events) console.log(event.type); // status, progress, ...
console.log(await task.result()); // { structuredContent: { count: 148933 }, ... }
await client.close();
// #endregion call
