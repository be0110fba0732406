/**
 * Real MCP clients that cannot receive tasks, each behind one small interface so the same checks
 * run against all of them: the v1 SDK client (2025-11-25, no `tasks` capability), the v2 client
 * (2026-07-28, no tasks extension), and the Python `mcp` client (either revision), which runs as
 * a child process (test/e2e/python/drive_client.py). None of them is ours: what they accept or
 * refuse is what a host built on them would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** A tool as `tools/list` showed it to the client. */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  readonly outputSchema?: Record<string, unknown>;
}

/** A `CallToolResult` as the client handed it to its host. */
export interface PlainResult {
  readonly content: readonly { type: string; text?: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

/** What a call came back with: a result, a JSON-RPC error, or the client's own refusal. */
export type CallOutcome =
  | { readonly result: PlainResult }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }
  | { readonly refused: string };

/** An elicitation the client answered for its user. */
export interface SeenElicitation {
  readonly message: string;
  readonly requestedSchema?: unknown;
}

/** A client that makes only plain `tools/list` and `tools/call` requests. */
export interface PlainCaller {
  /** Which client and revision, for test names and failures. */
  readonly label: string;
  listTools(): Promise<ListedTool[]>;
  call(name: string, args: Record<string, unknown>): Promise<CallOutcome>;
  /** The elicitations answered so far (only when it was opened with `elicit`). */
  readonly elicitations: readonly SeenElicitation[];
  close(): Promise<void>;
}

export interface CallerOptions {
  /** Sent as `Authorization: Bearer <token>` on every request. */
  readonly token?: string;
  /** Declare elicitation and accept every form with this content. */
  readonly elicit?: Record<string, unknown>;
}

/** The kinds of unaware client the tests run. */
export type CallerKind = 'v1 (2025-11-25)' | 'v2 (2026-07-28)' | 'python (2025-11-25)' | 'python (2026-07-28)';

export const CALLER_KINDS: readonly CallerKind[] = [
  'v1 (2025-11-25)',
  'v2 (2026-07-28)',
  'python (2025-11-25)',
  'python (2026-07-28)',
];

/**
 * Connects, then lists the tools once, as a host does before a model calls any: the SDK clients
 * check each call's `structuredContent` against the `outputSchema` they have listed.
 */
export async function openCaller(kind: CallerKind, url: string, options: CallerOptions = {}): Promise<PlainCaller> {
  const caller = await connectCaller(kind, url, options);
  await caller.listTools();
  return caller;
}

function connectCaller(kind: CallerKind, url: string, options: CallerOptions): Promise<PlainCaller> {
  switch (kind) {
    case 'v1 (2025-11-25)':
      return openV1(url, options);
    case 'v2 (2026-07-28)':
      return openV2(url, options);
    case 'python (2025-11-25)':
      return openPython(url, 'legacy', options);
    case 'python (2026-07-28)':
      return openPython(url, '2026-07-28', options);
  }
}

const CLIENT_INFO = { name: 'unaware-e2e', version: '1.0.0' };

function outcomeOfError(error: unknown): CallOutcome {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  // The SDKs throw their JSON-RPC errors with a numeric code; anything else is their own refusal.
  if (typeof code === 'number' && code < 0) return { error: { code, message: message ?? '', data } };
  return { refused: String(error) };
}

async function openV1(url: string, options: CallerOptions): Promise<PlainCaller> {
  const elicitations: SeenElicitation[] = [];
  const client = new ClientV1(CLIENT_INFO, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) {
    const content = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      elicitations.push({ message: params.message, requestedSchema: params.requestedSchema });
      return { action: 'accept', content } as never;
    });
  }
  await client.connect(
    new TransportV1(new URL(url), {
      ...(options.token && { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } }),
    }),
  );
  return {
    label: 'v1 (2025-11-25)',
    elicitations,
    async listTools() {
      return (await client.listTools()).tools as ListedTool[];
    },
    async call(name, args) {
      // The SDK's default 60 s request timeout stays: task_wait must answer well within it.
      return client
        .callTool({ name, arguments: args })
        .then((result) => ({ result: result as PlainResult }), outcomeOfError);
    },
    close: () => client.close(),
  };
}

async function openV2(url: string, options: CallerOptions): Promise<PlainCaller> {
  const elicitations: SeenElicitation[] = [];
  const client = new ClientV2(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    capabilities: options.elicit ? { elicitation: {} } : {},
  });
  if (options.elicit) {
    const content = options.elicit;
    // On 2026-07-28 the client answers a call's `input_required` result through this handler.
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      elicitations.push({ message: params.message, requestedSchema: params.requestedSchema });
      return { action: 'accept', content } as never;
    });
  }
  await client.connect(
    new TransportV2(new URL(url), {
      ...(options.token && { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } }),
    }),
  );
  return {
    label: 'v2 (2026-07-28)',
    elicitations,
    async listTools() {
      return (await client.listTools(undefined, { cacheMode: 'bypass' })).tools as ListedTool[];
    },
    async call(name, args) {
      return client
        .callTool({ name, arguments: args })
        .then((result) => ({ result: result as PlainResult }), outcomeOfError);
    },
    close: () => client.close(),
  };
}

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The virtualenv `npm run setup:python` (scripts/setup-python-client.sh) installs the Python client into. */
export const PYTHON_VENV = path.join(repoRoot, '.venv/python-client');
export const PYTHON = path.join(PYTHON_VENV, 'bin/python');
const DRIVER = path.join(repoRoot, 'test/e2e/python/drive_client.py');

/** Whether the Python client is installed; CI installs it (.ci/run), and must not run without it. */
export function pythonClientInstalled(): boolean {
  return existsSync(PYTHON) && existsSync(path.join(PYTHON_VENV, 'requirements.installed'));
}

type DriverLine = {
  id?: number;
  event?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  exception?: string;
} & Record<string, unknown>;

async function openPython(url: string, mode: 'legacy' | '2026-07-28', options: CallerOptions): Promise<PlainCaller> {
  const args = [DRIVER, '--url', url, '--mode', mode];
  if (options.token) args.push('--token', options.token);
  if (options.elicit) args.push('--elicit', JSON.stringify(options.elicit));
  const child: ChildProcess = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const pending = new Map<number, (line: DriverLine) => void>();
  const elicitations: SeenElicitation[] = [];
  let ready: (line: DriverLine) => void;
  let failed: (error: Error) => void;
  const readyLine = new Promise<DriverLine>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code, signal) => {
    const why = new Error(`the Python client exited (${code ?? signal}): ${stderr.join('').slice(-2000)}`);
    failed(why);
    for (const settle of pending.values()) settle({ exception: why.message });
    pending.clear();
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    let line: DriverLine;
    try {
      line = JSON.parse(text) as DriverLine;
    } catch {
      // Not one of the driver's lines (a library printing to stdout): keep it for failure messages.
      stderr.push(`stdout: ${text}\n`);
      return;
    }
    if (line.event === 'ready') ready(line);
    else if (line.event === 'elicitation') {
      elicitations.push({ message: line.message as string, requestedSchema: line.requestedSchema });
    } else if (line.id !== undefined) {
      pending.get(line.id)?.(line);
      pending.delete(line.id);
    }
  });
  await readyLine;
  let nextId = 1;
  const send = (command: Record<string, unknown>): Promise<DriverLine> => {
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      child.stdin!.write(`${JSON.stringify({ id, ...command })}\n`);
    });
  };
  const label: CallerKind = mode === 'legacy' ? 'python (2025-11-25)' : 'python (2026-07-28)';
  return {
    label,
    elicitations,
    async listTools() {
      const line = await send({ op: 'list' });
      if (!line.result) throw new Error(`tools/list failed: ${JSON.stringify(line)}`);
      return (line.result as { tools: ListedTool[] }).tools;
    },
    async call(name, callArgs) {
      const line = await send({ op: 'call', name, arguments: callArgs });
      if (line.result) return { result: line.result as PlainResult };
      if (line.error) return { error: line.error };
      return { refused: line.exception ?? JSON.stringify(line) };
    },
    async close() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
