/**
 * Writes a synthetic app for the generator benchmark: `fileCount` files of `methodsPerFile`
 * @Task/@Tool methods each, with a mix of the types the generator supports (named interfaces,
 * unions, enums, records, tuples, Dates, generics, recursion, JSDoc constraints). Deterministic:
 * the same arguments always write the same files.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface SyntheticProject {
  readonly dir: string;
  readonly tsconfig: string;
  readonly out: string;
  /** One source file, for the watch benchmark's edits. */
  readonly sampleFile: string;
  readonly methodCount: number;
}

export function writeSyntheticProject(dir: string, fileCount = 100, methodsPerFile = 5): SyntheticProject {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'src/model'), { recursive: true });
  // The framework by relative path from <repo>/bench/generator/.tmp/<name>/src/*.
  const framework = path.relative(path.join(dir, 'src'), path.resolve(import.meta.dirname, '../../src'));
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          // The decorators' own sources use these; tsc must check the project as the app would.
          verbatimModuleSyntax: true,
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(path.join(dir, 'src/model/shared.ts'), SHARED_MODEL);
  for (let file = 0; file < fileCount; file++) {
    writeFileSync(path.join(dir, `src/model/model${file}.ts`), modelFile(file));
    writeFileSync(path.join(dir, `src/service${file}.ts`), serviceFile(file, methodsPerFile, framework));
  }
  return {
    dir,
    tsconfig: path.join(dir, 'tsconfig.json'),
    // Outside `include`: tsc then checks the same sources the generator reads, not also our output
    // (type-checking 500 zod schemas is the app's cost, not the generator's).
    out: path.join(dir, 'generated/tasks.generated.ts'),
    sampleFile: path.join(dir, 'src/service0.ts'),
    methodCount: fileCount * methodsPerFile,
  };
}

const SHARED_MODEL = `/** One page of results. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export enum Status {
  Open = 'open',
  Closed = 'closed',
}

/** A folder tree. */
export interface Folder {
  name: string;
  children: Folder[];
}

export type UserId = string & { __brand: 'UserId' };
`;

function modelFile(index: number): string {
  return `import type { Folder, Status, UserId } from './shared.js';

/** Record number ${index}. */
export interface Record${index} {
  /** @minLength 1 */
  id: string;
  owner: UserId;
  status: Status;
  /**
   * @integer
   * @minimum 0
   */
  count: number;
  tags: string[];
  scores: Record<string, number>;
  range: [number, number];
  createdAt: Date;
  folder?: Folder;
  kind: 'a${index}' | 'b${index}';
}

export interface Query${index} {
  /** @maxLength 200 */
  text: string;
  /** @default 20 */
  limit?: number;
  status?: Status | null;
  /** @format email */
  notify?: string;
}

export type Event${index} = { type: 'created'; record: Record${index} } | { type: 'deleted'; id: string };
`;
}

function serviceFile(index: number, methods: number, framework: string): string {
  const shapes = [
    (m: number) =>
      `  /** Searches records. */\n  @Task()\n  async search${index}_${m}(query: Query${index}, ctx: TaskContext): Promise<Page<Record${index}>> {\n    ctx.progress('x');\n    return { items: [], next: null };\n  }`,
    (m: number) =>
      `  @Task()\n  async get${index}_${m}(id: string, /** @integer */ version?: number): Promise<Record${index} | null> {\n    return null;\n  }`,
    (m: number) =>
      `  @Tool()\n  events${index}_${m}(since: Date, kinds: ('created' | 'deleted')[]): Event${index}[] {\n    return [];\n  }`,
    (m: number) =>
      `  @Task()\n  async update${index}_${m}(record: Partial<Record${index}> & { id: string }): Promise<void> {}`,
    (m: number) => `  @Tool()\n  describe${index}_${m}(status: Status): string {\n    return status;\n  }`,
  ];
  // Method names carry the file number: tool names (snake_case method names) must be unique.
  const body = Array.from({ length: methods }, (_, method) => shapes[method % shapes.length]?.(method)).join('\n\n');
  return `import { Task, Tool } from '${framework}/decorators/index.js';
import type { TaskContext } from '${framework}/tools/context.js';
import type { Event${index}, Query${index}, Record${index} } from './model/model${index}.js';
import type { Page, Status } from './model/shared.js';

export class Service${index} {
${body}
}
`;
}
