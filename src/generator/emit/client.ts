/**
 * `ManifestIR` → a typed client module (`mcp-taskgen --client <file>`): one method per tool for
 * `mcp-task-server/client`, typed by zod schemas built from the same IR as the server's.
 *
 * The module stands alone: it imports only `mcp-task-server/client` (which re-exports zod), so a
 * package that calls the server needs nothing else of the app. Three things differ from the
 * server module, each because the client reads the wire rather than the method's values:
 * - every schema is the decoding side (what `z.input` calls the wire); a result's `Date` is an ISO
 *   string on the wire and decodes back to a `Date`, as the method declared it;
 * - a TypeScript enum becomes the union of its values: the client cannot import the app's enum;
 * - a key that is required but may be `undefined` is simply optional.
 */

import { generatedHeader } from '../header.js';
import type { ManifestIR, QuestionIR, ToolIR, TypeIR } from '../ir.js';
import { mapType, referencedNames } from '../ir-walk.js';
import { compareStrings, toPascalCase } from '../naming.js';
import { hasOutputSchema, identifierAllocator } from './names.js';
import { type Code, object, printConst, raw, stringLiteral, value } from './printer.js';
import { type ZodContext, zodObject, zodType } from './zod.js';

export const CLIENT_PACKAGE = 'mcp-task-server/client';

const RESERVED = ['z', 'createTypedClient', 'createClient', 'clientSpec', 'TaskClient', 'TaskClientOptions'];

export function emitClientModule(input: ManifestIR): string {
  const ir = forTheWire(input);
  const allocate = identifierAllocator(RESERVED);
  const typeNames = Object.keys(ir.types).sort(compareStrings);
  const schemaNames = new Map(typeNames.map((name) => [name, allocate(`${toPascalCase(name)}Schema`)]));
  const declared = new Set<string>();
  const context: ZodContext = {
    side: 'input',
    schemaNameOf: (typeName) => schemaNames.get(typeName) ?? missing(typeName),
    isDeferred: (typeName) => !declared.has(typeName),
    enumBindingOf: () => missing('a TypeScript enum'),
    typeOf: (typeName) => ir.types[typeName]?.type,
  };
  const named = dependencyOrder(ir).map((typeName) => {
    const code = zodType(ir.types[typeName]?.type ?? missing(typeName), context);
    declared.add(typeName);
    return printConst(schemaNames.get(typeName) ?? missing(typeName), code, false);
  });

  const tools = [...ir.tools].sort((a, b) => compareStrings(a.name, b.name));
  const methodNames = new Map(tools.map((tool) => [tool.name, allocate(toCamelCase(tool.name))]));
  const toolConsts: string[] = [];
  const specEntries: [string, Code][] = [];
  for (const tool of tools) {
    const base = toPascalCase(tool.name);
    const inputName = allocate(`${base}Input`);
    toolConsts.push(printConst(inputName, zodType(tool.input, context), false));
    let outputName: string | undefined;
    if (hasOutputSchema(tool)) {
      outputName = allocate(`${base}Result`);
      toolConsts.push(printConst(outputName, zodType(tool.output.type, context), false));
    }
    const questions: [string, Code][] = tool.questions.map((question) => {
      const answerName = allocate(`${base}${toPascalCase(question.name)}Answer`);
      toolConsts.push(printConst(answerName, zodObject(question.answer, context), false));
      return [question.name, raw(answerName)];
    });
    specEntries.push([
      methodNames.get(tool.name) ?? missing(tool.name),
      object([
        ['tool', value(tool.name)],
        ['input', raw(inputName)],
        ['result', value(resultKind(tool))],
        ...(outputName ? [['output', raw(outputName)] as [string, Code]] : []),
        ['questions', object(questions)],
      ]),
    ]);
  }

  const sections = [
    generatedHeader(ir.sourceFiles),
    [
      `import { type ClientSpec, createTypedClient, type TaskClient, type TaskClientOptions, type TaskServerTarget, type TypedClient, z } from ${stringLiteral(CLIENT_PACKAGE)};`,
    ],
    named,
    toolConsts,
    [
      '/** What the generated client knows of each tool: its name on the wire and its schemas. */',
      `${printConst('clientSpec', object(specEntries)).replace(/;$/, '')} satisfies ClientSpec;`,
    ],
    [
      '/** A client for these tools: one method per tool, with its argument, answer and result types. */',
      'export type AppClient = TypedClient<typeof clientSpec>;',
      '',
      '/**',
      ' * Connects (on the first call) to a server of these tools: a Streamable HTTP URL, a stdio command,',
      ' * or an existing task client. Tool methods start a task and return its typed handle.',
      ' */',
      'export function createClient(target: TaskServerTarget | TaskClient, options?: TaskClientOptions): AppClient {',
      '  return createTypedClient(clientSpec, target, options);',
      '}',
    ],
    toolDocs(tools, methodNames),
  ];
  return `${sections
    .filter((lines) => lines.length > 0)
    .map((lines) => lines.join('\n'))
    .join('\n\n')}\n`;
}

/** A list of the methods in a comment at the end, so a reader of the file sees the surface. */
function toolDocs(tools: readonly ToolIR[], methodNames: Map<string, string>): string[] {
  return [
    '// Methods:',
    ...tools.map(
      (tool) =>
        `//   ${methodNames.get(tool.name)}(): ${tool.name}${tool.description ? ` - ${tool.description.split('\n')[0]}` : ''}`,
    ),
  ];
}

function resultKind(tool: ToolIR): string {
  switch (tool.output.result) {
    case 'structured':
    case 'json':
    case 'text':
    case 'none':
      return tool.output.result;
    default:
      return 'raw';
  }
}

/** The IR as the client sees the wire: enums as their values, undefined-valued keys optional. */
function forTheWire(ir: ManifestIR): ManifestIR {
  const rewrite = (type: TypeIR): TypeIR =>
    mapType(type, (node): TypeIR => {
      if (node.kind === 'native-enum') {
        const values = node.members.map((member) => member.value);
        return values.every((v): v is string => typeof v === 'string')
          ? { kind: 'enum', values }
          : { kind: 'literal', values };
      }
      if (node.kind === 'object')
        return {
          ...node,
          properties: node.properties.map((property) =>
            property.keyRequired ? { ...property, keyRequired: false } : property,
          ),
        };
      return node;
    });
  const rewriteObject = <T extends TypeIR>(type: T): T => rewrite(type) as T;
  return {
    ...ir,
    types: Object.fromEntries(
      Object.entries(ir.types).map(([name, definition]) => [
        name,
        { ...definition, type: rewriteObject(definition.type) },
      ]),
    ),
    tools: ir.tools.map((tool) => ({
      ...tool,
      input: rewriteObject(tool.input),
      output: 'type' in tool.output ? { ...tool.output, type: rewrite(tool.output.type) } : tool.output,
      questions: tool.questions.map(
        (question): QuestionIR => ({ ...question, answer: rewriteObject(question.answer) }),
      ),
    })),
  };
}

/** Named types, dependencies first, ties by name; a cycle is cut where the walk meets itself. */
function dependencyOrder(ir: ManifestIR): string[] {
  const order: string[] = [];
  const visited = new Set<string>();
  const visit = (name: string): void => {
    if (visited.has(name)) return;
    visited.add(name);
    const definition = ir.types[name];
    if (!definition) return;
    for (const dependency of referencedNames(definition.type).sort(compareStrings)) visit(dependency);
    order.push(name);
  };
  for (const name of Object.keys(ir.types).sort(compareStrings)) visit(name);
  return order;
}

function toCamelCase(name: string): string {
  const pascal = toPascalCase(name);
  return pascal.charAt(0).toLowerCase() + pascal.slice(1);
}

function missing(what: string): never {
  throw new Error(`mcp-taskgen: no definition for ${what} (a bug in the generator)`);
}
