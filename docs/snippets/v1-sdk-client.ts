// #region v1
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const client = new Client({ name: 'me', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1:3000/mcp')));
const stream = client.experimental.tasks.callToolStream(
  { name: 'scan_repository', arguments: { path: '.' } },
  CallToolResultSchema,
  { task: { ttl: 60_000 } },
);
for await (const message of stream) console.log(message.type); // taskCreated, taskStatus..., result
// #endregion v1
