// #region client
import { connectTaskClient } from 'mcp-task-server/client';

const client = await connectTaskClient('http://127.0.0.1:3000/mcp'); // or { command, args } for stdio
const task = await client.call('clean_build_outputs', { path: '.' });
for await (const event of task.events) {
  // status, progress and question events
  if (event.type === 'question') await task.answer(event.question.key, { confirm: true });
}
console.log(await task.result()); // the CallToolResult
// #endregion client

// #region resume
// `taskId` is undefined when the server answered the call at once, without a task.
if (task.taskId !== undefined) {
  const again = client.task(task.taskId); // from another process, or after a restart
  console.log(await again.status());
}
// #endregion resume
