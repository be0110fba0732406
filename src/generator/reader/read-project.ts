/**
 * Stage 1: a tsconfig → `ManifestIR` plus diagnostics. Finds every decorator in the project's own
 * files, keeps those that resolve to `@Task`, `@Tool` or `@NeedsInput`, reads each method, then
 * settles what only the whole program can: duplicate names, type names, order.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Decorator, type MethodDeclaration, Node, Project, type SourceFile, SyntaxKind, ts } from 'ts-morph';
import { type Diagnostic, DiagnosticCode, type SourceLocation, sortDiagnostics } from '../diagnostics.js';
import type { CallbackIR, ManifestIR, NamedTypeIR, ToolIR, TypeIR } from '../ir.js';
import { mapType, namesReferencedBy, referencedNames, remembered } from '../ir-walk.js';
import { compareStrings } from '../naming.js';
import { type DecoratedMethod, MethodReader } from './methods.js';
import { DiagnosticSink, locate } from './report.js';
import { TaskgenTags } from './taskgen-tags.js';
import { TypeReader } from './types.js';

export interface ReadOptions {
  /** Path to the project's tsconfig.json. */
  readonly tsconfig: string;
  /** Files never scanned, such as the generated module itself (absolute paths). */
  readonly exclude?: readonly string[];
  /** Which of the tsconfig's files to scan for decorators (absolute path in); default: all of them. */
  readonly include?: (file: string) => boolean;
}

export interface ReadResult {
  readonly ir: ManifestIR;
  readonly diagnostics: readonly Diagnostic[];
}

const EMPTY_IR: ManifestIR = { sourceFiles: [], types: {}, tools: [] };

export function readProject(options: ReadOptions): ReadResult {
  const session = ProjectSession.open(options);
  return session instanceof ProjectSession ? session.read() : { ir: EMPTY_IR, diagnostics: [session] };
}

/**
 * One ts-morph `Project` over a tsconfig, kept alive by `--watch` so that a change costs a
 * re-parse of the changed files and a fresh (incrementally rebuilt) type checker, not a new program.
 *
 * Only files that may hold decorators (their text contains '@') are added as roots; the program
 * still loads everything they import, so types resolve, but unrelated files are never parsed.
 */
export class ProjectSession {
  private rootFileNames: string[];
  private scanned: { readonly from: readonly string[]; readonly files: string[] } | undefined;
  private readonly cache = new Map<string, FileResult>();
  private readonly finalized = new FinalizeMemo();
  private readonly rootDirPrefix: string;

  private constructor(
    private readonly project: Project,
    private readonly options: ReadOptions,
    private readonly rootDir: string,
    rootFileNames: string[],
  ) {
    this.rootFileNames = rootFileNames;
    this.rootDirPrefix = `${rootDir.split(path.sep).join('/')}/`;
  }

  static open(options: ReadOptions): ProjectSession | Diagnostic {
    const tsconfig = path.resolve(options.tsconfig);
    const parsed = parseTsconfig(tsconfig);
    if ('diagnostic' in parsed) return parsed.diagnostic;
    const project = new Project({
      // Global type packages (`types`, @types/node above all: a third of the files a typical program
      // parses) hold nothing a tool's input or output can use; a module that imports them still
      // loads them. Skipping them roughly halves building the program and the checker.
      compilerOptions: { ...parsed.options, types: [] },
      skipAddingFilesFromTsConfig: true,
      // The program resolves imports by itself; ts-morph need not wrap every dependency up front.
      skipFileDependencyResolution: true,
    });
    const session = new ProjectSession(project, options, path.dirname(tsconfig), parsed.fileNames);
    for (const fileName of session.scannedFiles()) session.addIfDecorated(fileName);
    return session;
  }

  /** The tsconfig's files this run looks at for decorators, sorted; the same until the file list changes. */
  private scannedFiles(): string[] {
    if (this.scanned?.from !== this.rootFileNames) {
      // `rootFileNames` are absolute and normalised already (parseTsconfig).
      const excluded = new Set((this.options.exclude ?? []).map((file) => path.resolve(file)));
      const include = this.options.include ?? (() => true);
      const files = this.rootFileNames.filter((file) => !excluded.has(file) && include(file));
      this.scanned = { from: this.rootFileNames, files };
    }
    return this.scanned.files;
  }

  private addIfDecorated(fileName: string): void {
    let text: string;
    try {
      text = readFileSync(fileName, 'utf8');
    } catch {
      return;
    }
    // A file without '@' has no decorators; not adding it saves parsing (and wrapping) it.
    if (text.includes('@')) this.project.createSourceFile(fileName, text, { overwrite: true });
  }

  /**
   * Brings the project up to date with the disk after `changed` files (absolute paths) were
   * written, created or deleted. A changed tsconfig needs a new session.
   */
  refresh(changed: Iterable<string>): void {
    let filesAddedOrRemoved = false;
    let globalsChanged = false;
    const changedFiles = [...changed].map((file) => path.resolve(file));
    for (const [fileName, result] of this.cache) {
      if (changedFiles.some((file) => result.dependencies.has(file))) this.cache.delete(fileName);
    }
    for (const fileName of changedFiles) {
      const existing = this.project.getSourceFile(fileName);
      if (!existsSync(fileName)) {
        if (existing) this.project.removeSourceFile(existing);
        filesAddedOrRemoved = true;
      } else if (existing) {
        const declaredGlobals = declaresGlobals(existing);
        existing.refreshFromFileSystemSync();
        if (declaredGlobals || declaresGlobals(existing)) globalsChanged = true;
      } else {
        filesAddedOrRemoved = true;
      }
    }
    // A global type reaches files that never import it, so no import closure shows who uses it.
    if (globalsChanged) this.cache.clear();
    if (filesAddedOrRemoved) {
      // A new file can shadow a module another file imports: start over.
      this.cache.clear();
      const reparsed = parseTsconfig(path.resolve(this.options.tsconfig));
      if (!('diagnostic' in reparsed)) this.rootFileNames = reparsed.fileNames;
    }
    // A scanned file that gained its first decorator is not in the project yet.
    for (const fileName of this.scannedFiles())
      if (!this.project.getSourceFile(fileName)) this.addIfDecorated(fileName);
  }

  read(): ReadResult {
    const { project, rootDir } = this;
    const sink = new DiagnosticSink();
    const tags = new TaskgenTags();
    const types = new TypeReader(sink, tags, project.getTypeChecker().compilerObject, rootDir);
    const methods = new MethodReader(sink, tags, types, rootDir);

    const results: FileResult[] = [];
    for (const fileName of this.scannedFiles()) {
      const cached = this.cache.get(fileName);
      if (cached) {
        results.push(cached);
        continue;
      }
      const sourceFile = project.getSourceFile(fileName);
      if (!sourceFile || sourceFile.isDeclarationFile() || !sourceFile.getFullText().includes('@')) continue;
      const firstDiagnostic = sink.diagnostics.length;
      const tools: FileResult['tools'][number][] = [];
      let complete = true;
      for (const decorated of findDecoratedMethods(sourceFile.getDescendantsOfKind(SyntaxKind.Decorator), tags, sink)) {
        const errorsBefore = sink.errorCount;
        const failuresBefore = types.failedReads;
        const read = methods.read(decorated);
        if (read) {
          tools.push({ tool: read.tool, nameLocation: locate(read.nameNode) });
          continue;
        }
        complete = false;
        // The invariant: a decorated method becomes a tool, or an error says why not. A method that
        // failed only on a named type whose error was reported earlier (for another tool) is explained.
        if (sink.errorCount === errorsBefore && types.failedReads === failuresBefore)
          reportDroppedTool(decorated, sink);
      }
      const diagnostics = sink.diagnostics.slice(firstDiagnostic);
      const result: FileResult = {
        tools,
        definitions: usedDefinitions(tools, types.definitions()),
        diagnostics,
        dependencies: this.importClosure(sourceFile),
      };
      results.push(result);
      // Only a clean file is reused: a problem may have been reported while reading another file.
      if (complete && !diagnostics.some((diagnostic) => diagnostic.severity === 'error'))
        this.cache.set(fileName, result);
    }

    const read = results.flatMap((result) => result.tools);
    const merged = new DiagnosticSink();
    for (const result of results) merged.add(result.diagnostics);
    reportDuplicateNames(read, merged);
    const definitions = new Map(results.flatMap((result) => [...result.definitions]));
    const tools = read.map((entry) => entry.tool).sort((a, b) => compareStrings(a.name, b.name));
    const ir = finalizeTypes(tools, definitions, this.finalized);
    return { ir, diagnostics: sortDiagnostics(merged.diagnostics) };
  }

  /** The project's own files that `sourceFile` imports, transitively, itself included. */
  private importClosure(sourceFile: SourceFile): ReadonlySet<string> {
    const closure = new Set<string>([sourceFile.getFilePath()]);
    const queue = [sourceFile];
    for (let file = queue.pop(); file; file = queue.pop()) {
      for (const referenced of file.getReferencedSourceFiles()) {
        const filePath = referenced.getFilePath();
        // Dependencies outside the project (node_modules, the framework) do not change while watching.
        if (closure.has(filePath) || !filePath.startsWith(this.rootDirPrefix)) continue;
        closure.add(filePath);
        queue.push(referenced);
      }
    }
    return closure;
  }
}

/**
 * Whether a file can declare types that other files use without importing it: a script (no
 * import or export, so its declarations are global), or a module with `declare global` or
 * `declare module` (an augmentation). Errs towards yes: the answer only costs a re-read.
 */
function declaresGlobals(sourceFile: SourceFile): boolean {
  return (
    !ts.isExternalModule(sourceFile.compilerNode) || /\bdeclare\s+(?:global|module)\b/.test(sourceFile.getFullText())
  );
}

/**
 * What one file contributed to the last read, kept by `--watch` until a file it imports changes:
 * its tools, the named types they use, its diagnostics.
 */
interface FileResult {
  readonly tools: readonly { readonly tool: ToolIR; readonly nameLocation: SourceLocation }[];
  readonly definitions: ReadonlyMap<string, { readonly baseName: string; readonly definition: NamedTypeIR }>;
  readonly diagnostics: readonly Diagnostic[];
  /** Absolute paths of the project files the result depends on. */
  readonly dependencies: ReadonlySet<string>;
}

/** The named types the tools refer to, transitively. */
function usedDefinitions(
  tools: FileResult['tools'],
  all: ReturnType<TypeReader['definitions']>,
): Map<string, { baseName: string; definition: NamedTypeIR }> {
  const used = new Map<string, { baseName: string; definition: NamedTypeIR }>();
  const visit = (type: TypeIR): void => {
    for (const name of referencedNames(type)) {
      const entry = all.get(name);
      if (!entry || used.has(name)) continue;
      used.set(name, entry);
      visit(entry.definition.type);
    }
  };
  for (const { tool } of tools) {
    visit(tool.input);
    if ('type' in tool.output) visit(tool.output.type);
    for (const callback of tool.callbacks ?? []) visit(callback.payload);
  }
  return used;
}

function parseTsconfig(
  tsconfig: string,
): { options: ts.CompilerOptions; fileNames: string[] } | { diagnostic: Diagnostic } {
  const fail = (message: string): { diagnostic: Diagnostic } => ({
    diagnostic: {
      code: DiagnosticCode.ProjectLoadFailed,
      severity: 'error',
      message,
      hint: 'Pass the project with --project path/to/tsconfig.json.',
    },
  });
  if (!existsSync(tsconfig)) return fail(`cannot find ${tsconfig}`);
  const configErrors: ts.Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (error) => configErrors.push(error) },
  );
  configErrors.push(...(parsed?.errors ?? []));
  if (!parsed || configErrors.length > 0) {
    const text = configErrors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')).join('\n');
    return fail(`cannot read ${tsconfig}: ${text}`);
  }
  return { options: parsed.options, fileNames: [...parsed.fileNames].map((file) => path.resolve(file)).sort() };
}

/** Groups our decorators by method; reports the ones on anything else. */
function findDecoratedMethods(
  decorators: readonly Decorator[],
  tags: TaskgenTags,
  sink: DiagnosticSink,
): DecoratedMethod[] {
  const byMethod = new Map<MethodDeclaration, { marks: Decorator[]; questions: Decorator[] }>();
  for (const decorator of decorators) {
    const expression = decorator.getExpression();
    const callee = Node.isCallExpression(expression) ? expression.getExpression() : expression;
    const role = tags.roleOfExpression(callee);
    if (role === undefined && tags.isUnresolved(callee)) {
      sink.error(
        DiagnosticCode.UnresolvedDecorator,
        decorator,
        `cannot resolve the decorator '${callee.getText()}', so cannot tell whether it is @Task or @Tool`,
        "Fix its import (e.g. `import { Task } from 'mcp-task-server'`), then run mcp-taskgen again.",
      );
      continue;
    }
    if (role !== 'task' && role !== 'tool' && role !== 'needsInput') continue;
    const method = decorator.getParent();
    if (!Node.isMethodDeclaration(method) || !Node.isClassDeclaration(method.getParent())) {
      sink.error(
        DiagnosticCode.MisplacedDecorator,
        decorator,
        `@${decorator.getName()} applies to methods of a class declaration`,
        'Move it onto a method of an exported class.',
      );
      continue;
    }
    const entry = byMethod.get(method) ?? { marks: [], questions: [] };
    byMethod.set(method, entry);
    (role === 'needsInput' ? entry.questions : entry.marks).push(decorator);
  }
  const methods: DecoratedMethod[] = [];
  for (const [method, { marks, questions }] of byMethod) {
    const [mark, ...others] = marks;
    if (!mark) {
      const first = questions[0] ?? method;
      sink.error(
        DiagnosticCode.ConflictingDecorators,
        first,
        `${method.getName()}: @NeedsInput needs @Task (or @Tool) on the same method`,
        'Add @Task() above @NeedsInput.',
      );
      continue;
    }
    const extra = others[0];
    if (extra) {
      sink.error(
        DiagnosticCode.ConflictingDecorators,
        extra,
        `${method.getName()}: a method is either a @Task or a @Tool, once`,
        'Keep one of the decorators.',
      );
      continue;
    }
    const kind = tags.roleOfExpression(calleeOf(mark)) === 'task' ? 'task' : 'tool';
    methods.push({ method, kind, decorator: mark, questions });
  }
  return methods;
}

/**
 * A method the readers gave up on without saying why: a type shape nobody has taught them yet.
 * Reported as an error so that the tool can never vanish from the manifest silently.
 */
function reportDroppedTool(decorated: DecoratedMethod, sink: DiagnosticSink): void {
  const { method } = decorated;
  const className = method.getParentIfKind(SyntaxKind.ClassDeclaration)?.getName() ?? '(anonymous class)';
  sink.error(
    DiagnosticCode.ToolNotGenerated,
    method.getNameNode(),
    `${className}.${method.getName()}: mcp-taskgen could not turn this method into a tool and found no specific reason`,
    'This is a gap in mcp-taskgen: please report it with the parameter and return types; until then, simplify those types (plain interfaces, literal unions, arrays).',
  );
}

function calleeOf(decorator: Decorator): Node {
  const expression = decorator.getExpression();
  return Node.isCallExpression(expression) ? expression.getExpression() : expression;
}

function reportDuplicateNames(read: FileResult['tools'], sink: DiagnosticSink): void {
  const first = new Map<string, FileResult['tools'][number]>();
  for (const entry of read) {
    const earlier = first.get(entry.tool.name);
    if (!earlier) {
      first.set(entry.tool.name, entry);
      continue;
    }
    sink.error(
      DiagnosticCode.DuplicateToolName,
      entry.nameLocation,
      `tool name '${entry.tool.name}' is already used by ${earlier.tool.target.exportName}.${earlier.tool.target.method} (${earlier.tool.source})`,
      "Give one of them another name with the decorator's `name` option.",
    );
  }
}

/**
 * What `finalizeTypes` made of each tool and named type last time, for `--watch`. Renaming is a
 * pure function of the object read (cached per file, so the same object while its file and imports
 * are unchanged) and the display names, so a result is reused only for the very same object under
 * the very same names. Reused objects also let the emitter recognise unchanged tools cheaply.
 */
class FinalizeMemo {
  private displayNames = '';
  private tools = new WeakMap<ToolIR, ToolIR>();
  private types = new WeakMap<NamedTypeIR, NamedTypeIR>();

  /** Starts a run; once any display name differs, nothing renamed before is reused. */
  begin(displayName: ReadonlyMap<string, string>): void {
    const names = JSON.stringify([...displayName]);
    if (names === this.displayNames) return;
    this.displayNames = names;
    this.tools = new WeakMap();
    this.types = new WeakMap();
  }

  tool(read: ToolIR, rename: (read: ToolIR) => ToolIR): ToolIR {
    return remembered(this.tools, read, rename);
  }

  type(read: NamedTypeIR, rename: (read: NamedTypeIR) => NamedTypeIR): NamedTypeIR {
    return remembered(this.types, read, rename);
  }
}

/**
 * Replaces reading keys (`src/types.ts#Address`) with display names (`Address`, or `Address2` when
 * two files declare one), and keeps only the named types the tools still reference.
 */
function finalizeTypes(
  tools: ToolIR[],
  definitions: ReturnType<TypeReader['definitions']>,
  memo: FinalizeMemo,
): ManifestIR {
  const keysByBaseName = new Map<string, string[]>();
  for (const [key, { baseName }] of definitions)
    keysByBaseName.set(baseName, [...(keysByBaseName.get(baseName) ?? []), key]);
  const displayName = new Map<string, string>();
  for (const [baseName, keys] of keysByBaseName) {
    keys.sort(compareStrings);
    for (const [index, key] of keys.entries()) displayName.set(key, index === 0 ? baseName : `${baseName}${index + 1}`);
  }
  memo.begin(displayName);
  const rename = (type: TypeIR): TypeIR =>
    mapType(type, (node) =>
      node.kind === 'ref' ? { kind: 'ref', name: displayName.get(node.name) ?? node.name } : node,
    );
  const renamedTools = tools.map((tool) =>
    memo.tool(tool, (read): ToolIR => {
      const output = 'type' in read.output ? { ...read.output, type: rename(read.output.type) } : read.output;
      const callbacks = read.callbacks?.map((callback) => ({
        ...callback,
        payload: rename(callback.payload) as CallbackIR['payload'],
      }));
      return { ...read, input: rename(read.input) as ToolIR['input'], output, ...(callbacks && { callbacks }) };
    }),
  );
  const renamedDefinitions = new Map<string, NamedTypeIR>();
  for (const [key, { definition }] of definitions) {
    const name = displayName.get(key) ?? key;
    renamedDefinitions.set(
      name,
      memo.type(definition, (read) => ({ ...read, name, type: rename(read.type) as NamedTypeIR['type'] })),
    );
  }

  const reachable = new Set<string>();
  const visit = (type: TypeIR): void => {
    for (const name of namesReferencedBy(type)) {
      if (reachable.has(name)) continue;
      reachable.add(name);
      const definition = renamedDefinitions.get(name);
      if (definition) visit(definition.type);
    }
  };
  for (const tool of renamedTools) {
    visit(tool.input);
    if ('type' in tool.output) visit(tool.output.type);
    for (const callback of tool.callbacks ?? []) visit(callback.payload);
  }

  const types: { [name: string]: NamedTypeIR } = {};
  for (const name of [...renamedDefinitions.keys()].sort(compareStrings)) {
    const definition = renamedDefinitions.get(name);
    if (definition && reachable.has(name)) types[name] = definition;
  }
  const sourceFiles = [...new Set(renamedTools.map((tool) => tool.target.module))].sort(compareStrings);
  return { sourceFiles, types, tools: renamedTools };
}
