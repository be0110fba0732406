#!/usr/bin/env node
/** The `create-mcp-task-server` bin (`npx create-mcp-task-server my-app`). All behaviour is in cli.ts. */
import { run } from './cli.js';
import { terminalPrompter } from './prompts.js';

const prompter =
  process.stdin.isTTY && process.stdout.isTTY ? terminalPrompter(process.stdin, process.stdout) : undefined;
try {
  process.exitCode = await run(process.argv.slice(2), {
    cwd: process.cwd(),
    userAgent: process.env.npm_config_user_agent,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    ...(prompter && { prompter }),
  });
} finally {
  prompter?.close();
}
