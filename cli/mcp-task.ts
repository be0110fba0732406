#!/usr/bin/env node
// The `mcp-task` bin. All behaviour lives in cli/task/program.ts.
import { runTaskCli } from './task/program.js';

const code = await runTaskCli(process.argv.slice(2));
// Open sockets or a stdio child must not keep a finished command alive.
process.exit(code);
