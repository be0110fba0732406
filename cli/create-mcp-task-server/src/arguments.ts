/** The command line of `create-mcp-task-server`. */
import { parseArgs } from 'node:util';

export const USAGE = `Usage: create-mcp-task-server [directory] [options]

Creates an mcp-task-server app: a @Task class with progress, cancellation and a question, the
MCP server, a BullMQ worker, tests with a real MCP client, and \`npm run dev\`, which regenerates
the task schemas and restarts the server whenever you save.

Options:
  -t, --template <name>  the template to start from: default (server, worker, tests, dev loop,
                         Dockerfile), minimal (one file, one task), stdio (for desktop clients)
  -n, --name <name>      the package name (default: the directory's name)
  -f, --force            write into a directory that is not empty, deleting what is in it
                         (except .git)
  -h, --help             show this help

In a terminal it asks for what the options leave open; elsewhere it uses the defaults.
After creating the app it prints the commands to install and start it; it installs nothing.
`;

export interface Arguments {
  readonly directory?: string;
  readonly template?: string;
  readonly name?: string;
  readonly force: boolean;
  readonly help: boolean;
}

/** The parsed arguments, or a message saying what is wrong with them. */
export function parseArguments(argv: readonly string[]): Arguments | string {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        template: { type: 'string', short: 't' },
        name: { type: 'string', short: 'n' },
        force: { type: 'boolean', short: 'f', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (positionals.length > 1) return `expected one directory, got ${positionals.length}: ${positionals.join(' ')}`;
    return {
      ...(positionals[0] !== undefined && { directory: positionals[0] }),
      ...(values.template !== undefined && { template: values.template }),
      ...(values.name !== undefined && { name: values.name }),
      force: values.force,
      help: values.help,
    };
  } catch (error) {
    return (error as Error).message;
  }
}
