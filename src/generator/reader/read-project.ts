/**
 * Stage 1: a tsconfig → `ManifestIR` plus diagnostics. Finds every decorator in the project's own
 * files, keeps those that resolve to `@Task`, `@Tool` or `@NeedsInput`, reads each method, then
 * settles what only the whole program can: duplicate names, type names, order.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Decorator, type MethodDeclaration, Node, Project, SyntaxKind, ts } from 'ts-morph';
import { type Diagnostic, DiagnosticCode, sortDiagnostics } from '../diagnostics.js';
import type { ManifestIR, NamedTypeIR, ToolIR, TypeIR } from '../ir.js';
import { compareStrings } from '../naming.js';
import { type DecoratedMethod, MethodReader, type ReadTool } from './methods.js';
import { DiagnosticSink } from './report.js';
import { TaskgenTags } from './taskgen-tags.js';
import { TypeReader } from './types.js';

export interface ReadOptions {
  /** Path to the project's tsconfig.json. */
  readonly tsconfig: string;
  /** Files never scanned, such as the generated module itself (absolute paths). */
  readonly exclude?: readonly string[];
}

export interface ReadResult {
  readonly ir: ManifestIR;
  readonly diagnostics: readonly Diagnostic[];
}

const EMPTY_IR: ManifestIR = { sourceFiles: [], types: {}, tools: [] };

export function readProject(options: ReadOptions): ReadResult {
  const tsconfig = path.resolve(options.tsconfig);
  const rootDir = path.dirname(tsconfig);
  const loaded = loadProject(tsconfig);
  if ('diagnostic' in loaded) return { ir: EMPTY_IR, diagnostics: [loaded.diagnostic] };

  const sink = new DiagnosticSink();
  const tags = new TaskgenTags();
  const types = new TypeReader(sink, tags, rootDir);
  const methods = new MethodReader(sink, tags, types, rootDir);
  const excluded = new Set((options.exclude ?? []).map((file) => path.resolve(file)));

  const read: ReadTool[] = [];
  for (const fileName of loaded.rootFileNames) {
    if (excluded.has(path.resolve(fileName))) continue;
    const sourceFile = loaded.project.getSourceFile(fileName);
    // A file without '@' has no decorators; skipping it avoids wrapping every node of it.
    if (!sourceFile || sourceFile.isDeclarationFile() || !sourceFile.getFullText().includes('@')) continue;
    for (const decorated of findDecoratedMethods(sourceFile.getDescendantsOfKind(SyntaxKind.Decorator), tags, sink)) {
      const tool = methods.read(decorated);
      if (tool) read.push(tool);
    }
  }
  reportDuplicateNames(read, sink);

  const tools = read.map((entry) => entry.tool).sort((a, b) => compareStrings(a.name, b.name));
  const ir = finalizeTypes(tools, types.definitions());
  return { ir, diagnostics: sortDiagnostics(sink.diagnostics) };
}

function loadProject(tsconfig: string): { project: Project; rootFileNames: string[] } | { diagnostic: Diagnostic } {
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
  const project = new Project({ tsConfigFilePath: tsconfig });
  return { project, rootFileNames: [...parsed.fileNames].sort() };
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

function calleeOf(decorator: Decorator): Node {
  const expression = decorator.getExpression();
  return Node.isCallExpression(expression) ? expression.getExpression() : expression;
}

function reportDuplicateNames(read: readonly ReadTool[], sink: DiagnosticSink): void {
  const first = new Map<string, ReadTool>();
  for (const entry of read) {
    const earlier = first.get(entry.tool.name);
    if (!earlier) {
      first.set(entry.tool.name, entry);
      continue;
    }
    sink.error(
      DiagnosticCode.DuplicateToolName,
      entry.nameNode,
      `tool name '${entry.tool.name}' is already used by ${earlier.tool.target.exportName}.${earlier.tool.target.method} (${earlier.tool.source})`,
      "Give one of them another name with the decorator's `name` option.",
    );
  }
}

/**
 * Replaces reading keys (`src/types.ts#Address`) with display names (`Address`, or `Address2` when
 * two files declare one), and keeps only the named types the tools still reference.
 */
function finalizeTypes(tools: ToolIR[], definitions: ReturnType<TypeReader['definitions']>): ManifestIR {
  const keysByBaseName = new Map<string, string[]>();
  for (const [key, { baseName }] of definitions)
    keysByBaseName.set(baseName, [...(keysByBaseName.get(baseName) ?? []), key]);
  const displayName = new Map<string, string>();
  for (const [baseName, keys] of keysByBaseName) {
    keys.sort(compareStrings);
    for (const [index, key] of keys.entries()) displayName.set(key, index === 0 ? baseName : `${baseName}${index + 1}`);
  }
  const rename = (type: TypeIR): TypeIR => {
    switch (type.kind) {
      case 'ref':
        return { kind: 'ref', name: displayName.get(type.name) ?? type.name };
      case 'array':
        return { ...type, items: rename(type.items) };
      case 'object':
        return {
          ...type,
          properties: type.properties.map((property) => ({ ...property, type: rename(property.type) })),
        };
      default:
        return type;
    }
  };
  const renamedTools = tools.map((tool): ToolIR => {
    const output = tool.output.result === 'none' ? tool.output : { ...tool.output, type: rename(tool.output.type) };
    return { ...tool, input: rename(tool.input) as ToolIR['input'], output };
  });

  const reachable = new Set<string>();
  const visit = (type: TypeIR): void => {
    if (type.kind === 'array') visit(type.items);
    if (type.kind === 'object') for (const property of type.properties) visit(property.type);
    if (type.kind !== 'ref' || reachable.has(type.name)) return;
    reachable.add(type.name);
    const key = [...displayName].find(([, name]) => name === type.name)?.[0];
    const definition = key ? definitions.get(key)?.definition : undefined;
    if (definition) visit(rename(definition.type));
  };
  for (const tool of renamedTools) {
    visit(tool.input);
    if (tool.output.result !== 'none') visit(tool.output.type);
  }

  const types: { [name: string]: NamedTypeIR } = {};
  const sortedKeys = [...definitions.keys()].sort((a, b) =>
    compareStrings(displayName.get(a) ?? a, displayName.get(b) ?? b),
  );
  for (const key of sortedKeys) {
    const name = displayName.get(key) ?? key;
    const definition = definitions.get(key)?.definition;
    if (!definition || !reachable.has(name)) continue;
    types[name] = { ...definition, name, type: rename(definition.type) as NamedTypeIR['type'] };
  }
  const sourceFiles = [...new Set(renamedTools.map((tool) => tool.target.module))].sort(compareStrings);
  return { sourceFiles, types, tools: renamedTools };
}
