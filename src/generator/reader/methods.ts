/**
 * One decorated method → one `ToolIR`: options from the decorator's literal argument, the input
 * schema from the parameters, the result shape from the awaited return type, questions from
 * `@NeedsInput`. Reports every problem it finds on the method before giving up on it.
 */
import {
  type CallExpression,
  type ClassDeclaration,
  type Decorator,
  type MethodDeclaration,
  Node,
  type ParameterDeclaration,
  SyntaxKind,
  type Type,
} from 'ts-morph';
import { DiagnosticCode } from '../diagnostics.js';
import type {
  CallArgumentIR,
  CallbackIR,
  JsonValue,
  ObjectTypeIR,
  OutputIR,
  PropertyIR,
  QuestionIR,
  RefTypeIR,
  RetryIR,
  TaskSupportIR,
  ToolIR,
  TypeIR,
} from '../ir.js';
import { toSnakeCase } from '../naming.js';
import { applyConstraints, readAnnotations, reportUnknownTags } from './annotations.js';
import { hasJsDocTag, jsDocDescription, jsDocTags, parameterDescription } from './jsdoc.js';
import { evaluateLiteral, staticPropertyName } from './literals.js';
import { type DiagnosticSink, relativeModulePath, sourceReference } from './report.js';
import type { TaskgenTags } from './taskgen-tags.js';
import type { TypeReader } from './types.js';

export interface DecoratedMethod {
  readonly method: MethodDeclaration;
  readonly kind: 'task' | 'tool';
  readonly decorator: Decorator;
  /** `@NeedsInput` decorators, top to bottom. */
  readonly questions: readonly Decorator[];
}

export interface ReadTool {
  readonly tool: ToolIR;
  /** Where a duplicate name should be reported: the `name` option, or the method name. */
  readonly nameNode: Node;
}

/** MCP tool names: 1–128 characters of letters, digits, `_`, `-` and `.`. */
const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

type OptionKind =
  | 'string'
  | 'taskSupport'
  | 'ttl'
  | 'duration'
  | 'positiveInteger'
  | 'unawareClients'
  | 'retry'
  | 'timeout'
  | 'policyBoolean'
  | 'priority'
  | 'version';

/** The highest `@Task({ priority })`; the runtime's registry holds the same bound. */
const MAX_PRIORITY = 1000;

/** The longest `@Task({ version })`; the runtime's registry holds the same bound. */
const MAX_VERSION_LENGTH = 64;

/** Option kinds of creation policies: reported under their own code (`InvalidPolicy`). */
const POLICY_KINDS: ReadonlySet<OptionKind> = new Set(['policyBoolean', 'priority', 'version']);

const TASK_OPTIONS: Readonly<Record<string, OptionKind>> = {
  name: 'string',
  title: 'string',
  description: 'string',
  taskSupport: 'taskSupport',
  ttlMs: 'ttl',
  pollIntervalMs: 'duration',
  concurrency: 'positiveInteger',
  unawareClients: 'unawareClients',
  retry: 'retry',
  timeoutMs: 'timeout',
  idempotent: 'policyBoolean',
  priority: 'priority',
  priorityFromCall: 'policyBoolean',
  version: 'version',
};

const TOOL_OPTIONS: Readonly<Record<string, OptionKind>> = { name: 'string', title: 'string', description: 'string' };

const ELICITATION_KINDS: ReadonlySet<TypeIR['kind']> = new Set(['string', 'number', 'integer', 'boolean', 'enum']);

/** What an elicitation form can carry: primitives, and enums of strings (literal unions or string enums). */
function isElicitationType(type: TypeIR): boolean {
  if (type.kind === 'native-enum') return type.members.every((member) => typeof member.value === 'string');
  return ELICITATION_KINDS.has(type.kind);
}

interface ParsedOptions {
  readonly values: { readonly [key: string]: JsonValue };
  readonly nodes: { readonly [key: string]: Node };
}

export class MethodReader {
  constructor(
    private readonly sink: DiagnosticSink,
    private readonly tags: TaskgenTags,
    private readonly types: TypeReader,
    private readonly rootDir: string,
  ) {}

  read(decorated: DecoratedMethod): ReadTool | undefined {
    const { method, kind } = decorated;
    const owner = method.getParentIfKind(SyntaxKind.ClassDeclaration);
    if (!owner) return undefined;
    const label = `${owner.getName() ?? '(anonymous class)'}.${method.getName()}`;
    reportUnknownTags(jsDocTags(method), label, this.sink);
    const exportName = this.exportNameOf(owner);
    const eligible = this.checkEligible(method, label);
    const options = this.readOptions(decorated.decorator, kind === 'task' ? TASK_OPTIONS : TOOL_OPTIONS);
    const parameters = this.readParameters(method, label);
    const output = this.readOutput(method, kind, label);
    const questions = this.readQuestions(decorated.questions, label);
    const contextAgrees = this.checkContextQuestions(method, decorated.questions, label);
    const callbacks = this.readCallbacks(method, kind, label);
    if (!exportName || !eligible || !options || !parameters || !output || !questions || !contextAgrees || !callbacks) {
      return undefined;
    }

    const nameOption = options.values.name;
    const name = typeof nameOption === 'string' ? nameOption : toSnakeCase(method.getName());
    const nameNode = options.nodes.name ?? method.getNameNode();
    if (!TOOL_NAME_PATTERN.test(name)) {
      this.sink.error(
        DiagnosticCode.InvalidToolName,
        nameNode,
        `${label}: tool name '${name}' is not a valid MCP tool name`,
        'Use 1–128 letters, digits, `_`, `-` or `.`.',
      );
      return undefined;
    }
    const description =
      typeof options.values.description === 'string' ? options.values.description : jsDocDescription(method);
    const taskSupport: TaskSupportIR =
      kind === 'tool' ? 'forbidden' : options.values.taskSupport === 'required' ? 'required' : 'optional';
    const tool: ToolIR = {
      name,
      decorator: kind,
      ...(typeof options.values.title === 'string' ? { title: options.values.title } : {}),
      ...(description !== undefined ? { description } : {}),
      taskSupport,
      ...('ttlMs' in options.values ? { ttlMs: options.values.ttlMs as number | null } : {}),
      ...(typeof options.values.pollIntervalMs === 'number' ? { pollIntervalMs: options.values.pollIntervalMs } : {}),
      ...(typeof options.values.concurrency === 'number' ? { concurrency: options.values.concurrency } : {}),
      ...(options.values.retry !== undefined ? { retry: options.values.retry as RetryIR } : {}),
      ...(typeof options.values.timeoutMs === 'number' ? { timeoutMs: options.values.timeoutMs } : {}),
      ...(typeof options.values.unawareClients === 'string'
        ? { unawareClients: options.values.unawareClients as ToolIR['unawareClients'] }
        : {}),
      ...(options.values.idempotent === true ? { idempotent: true } : {}),
      ...(typeof options.values.priority === 'number' ? { priority: options.values.priority } : {}),
      ...(options.values.priorityFromCall === true ? { priorityFromCall: true } : {}),
      ...(typeof options.values.version === 'string' ? { version: options.values.version } : {}),
      target: {
        exportName,
        module: relativeModulePath(method.getSourceFile(), this.rootDir),
        method: method.getName(),
      },
      source: sourceReference(method.getNameNode(), this.rootDir),
      input: parameters.input,
      call: parameters.call,
      output,
      questions,
      ...(callbacks.length > 0 && { callbacks }),
    };
    return { tool, nameNode };
  }

  /** The generated module imports the class by name, so it needs a named export. */
  private exportNameOf(owner: ClassDeclaration): string | undefined {
    const className = owner.getName();
    const reportAt = owner.getNameNode() ?? owner;
    if (!className) {
      this.sink.error(
        DiagnosticCode.ClassNotExported,
        reportAt,
        'a class with @Task or @Tool methods needs a name',
        'Name the class and export it: `export class Reports { ... }`.',
      );
      return undefined;
    }
    const exportNames: string[] = [];
    for (const [exportName, declarations] of owner.getSourceFile().getExportedDeclarations()) {
      if (exportName !== 'default' && declarations.includes(owner)) exportNames.push(exportName);
    }
    if (exportNames.length === 0) {
      this.sink.error(
        DiagnosticCode.ClassNotExported,
        reportAt,
        `class '${className}' has @Task or @Tool methods but is not exported by name from its module`,
        `The generated module imports it: write \`export class ${className}\`.`,
      );
      return undefined;
    }
    return exportNames.includes(className) ? className : [...exportNames].sort()[0];
  }

  private checkEligible(method: MethodDeclaration, label: string): boolean {
    let eligible = true;
    const reject = (node: Node, message: string, hint: string): void => {
      this.sink.error(DiagnosticCode.MethodNotEligible, node, `${label}: ${message}`, hint);
      eligible = false;
    };
    const nameNode = method.getNameNode();
    if (!Node.isIdentifier(nameNode))
      reject(
        nameNode,
        'the method name must be a plain identifier',
        'Rename the method, e.g. `async buildReport(...)`.',
      );
    if (method.isStatic())
      reject(
        nameNode,
        'static methods cannot be tools',
        'Make it an instance method; the server calls it on the instance you register.',
      );
    if (method.hasModifier(SyntaxKind.PrivateKeyword) || method.hasModifier(SyntaxKind.ProtectedKeyword)) {
      reject(
        nameNode,
        'private and protected methods cannot be tools',
        'Make the method public; the generated module calls it.',
      );
    }
    const typeParameters = method.getTypeParameters();
    const firstTypeParameter = typeParameters[0];
    if (firstTypeParameter) {
      this.sink.error(
        DiagnosticCode.GenericType,
        firstTypeParameter,
        `${label}: generic methods are not supported`,
        'Use concrete parameter types: the schema is generated once, not per call.',
      );
      eligible = false;
    }
    return eligible;
  }

  private readOptions(decorator: Decorator, allowed: Readonly<Record<string, OptionKind>>): ParsedOptions | undefined {
    const call = decorator.getCallExpression();
    const decoratorName = `@${decorator.getName()}`;
    if (!call) {
      this.sink.error(
        DiagnosticCode.InvalidOption,
        decorator,
        `${decoratorName} must be called`,
        `Write ${decoratorName}() or ${decoratorName}({ ... }).`,
      );
      return undefined;
    }
    const [argument, ...extra] = call.getArguments();
    const values: { [key: string]: JsonValue } = {};
    const nodes: { [key: string]: Node } = {};
    if (!argument) return { values, nodes };
    let valid = true;
    for (const node of extra) {
      this.sink.error(
        DiagnosticCode.InvalidOption,
        node,
        `${decoratorName} takes one options object`,
        'Remove the extra argument.',
      );
      valid = false;
    }
    if (!Node.isObjectLiteralExpression(argument)) {
      this.sink.error(
        DiagnosticCode.NotStaticLiteral,
        argument,
        `${decoratorName} options must be an object literal`,
        'Write the options inline, e.g. { ttlMs: 60000 }: mcp-taskgen reads them without running your code.',
      );
      return undefined;
    }
    for (const property of argument.getProperties()) {
      if (!Node.isPropertyAssignment(property)) {
        this.sink.error(
          DiagnosticCode.NotStaticLiteral,
          property,
          `${decoratorName} options must be written as 'key: literal'`,
          'Spread, shorthand and methods cannot be read without running your code.',
        );
        valid = false;
        continue;
      }
      const key = staticPropertyName(property.getNameNode());
      const kind = key === undefined ? undefined : allowed[key];
      if (key === undefined || kind === undefined) {
        this.sink.error(
          DiagnosticCode.InvalidOption,
          property.getNameNode(),
          `${decoratorName} has no option '${property.getName()}'`,
          `Known options: ${Object.keys(allowed).join(', ')}.`,
        );
        valid = false;
        continue;
      }
      const initializer = property.getInitializerOrThrow();
      const evaluated = evaluateLiteral(initializer);
      if (!evaluated.ok) {
        this.sink.error(
          DiagnosticCode.NotStaticLiteral,
          evaluated.node,
          `${decoratorName} option '${key}' must be a literal`,
          'Write the value inline: mcp-taskgen reads it without running your code.',
        );
        valid = false;
        continue;
      }
      if (kind === 'retry' || kind === 'timeout') {
        const problems = kind === 'retry' ? retryProblems(evaluated.value) : timeoutProblems(evaluated.value);
        for (const { field, message } of problems) {
          this.sink.error(
            DiagnosticCode.InvalidPolicy,
            (field && nestedInitializer(initializer, field)) || initializer,
            `${decoratorName} option '${key}': ${message}`,
            'See the Policies page of the docs for each option and its default.',
          );
        }
        if (problems.length > 0) {
          valid = false;
          continue;
        }
      }
      const problem = optionProblem(kind, evaluated.value);
      if (problem) {
        this.sink.error(
          POLICY_KINDS.has(kind) ? DiagnosticCode.InvalidPolicy : DiagnosticCode.InvalidOption,
          initializer,
          `${decoratorName} option '${key}' ${problem}`,
          'See the TaskOptions documentation.',
        );
        valid = false;
        continue;
      }
      values[key] = evaluated.value;
      nodes[key] = initializer;
    }
    return valid ? { values, nodes } : undefined;
  }

  private readParameters(
    method: MethodDeclaration,
    label: string,
  ): { input: ObjectTypeIR | RefTypeIR; call: CallArgumentIR[] } | undefined {
    const parameters = method.getParameters();
    const lastIndex = parameters.length - 1;
    let valid = true;
    let hasContext = false;
    const dataParameters: ParameterDeclaration[] = [];
    parameters.forEach((parameter, index) => {
      if (this.isContextParameter(parameter)) {
        if (index === lastIndex) {
          hasContext = true;
        } else {
          this.sink.error(
            DiagnosticCode.ContextNotLast,
            parameter,
            `${label}: the TaskContext parameter must be the last one`,
            'Move it to the end of the parameter list.',
          );
          valid = false;
        }
        return;
      }
      if (parameter.isRestParameter()) {
        this.sink.error(
          DiagnosticCode.MethodNotEligible,
          parameter,
          `${label}: rest parameters cannot be described by a schema`,
          'Take an array parameter instead.',
        );
        valid = false;
        return;
      }
      dataParameters.push(parameter);
    });
    const context: CallArgumentIR[] = hasContext ? [{ kind: 'context' }] : [];
    const only = dataParameters[0];
    if (dataParameters.length === 1 && only && this.isObjectParameter(only)) {
      const read = this.readObjectParameter(only, label);
      return valid && read ? { input: read.input, call: [...read.call, ...context] } : undefined;
    }
    const properties: PropertyIR[] = [];
    for (const parameter of dataParameters) {
      const property = this.readPositionalParameter(parameter, label);
      if (property) properties.push(property);
      else valid = false;
    }
    if (!valid) return undefined;
    const call: CallArgumentIR[] = properties.map((property) => ({ kind: 'property', name: property.name }));
    return { input: { kind: 'object', properties }, call: [...call, ...context] };
  }

  /**
   * `TaskContext<{ approval: Approval }>` types what `ctx.input` returns; `@NeedsInput` is what
   * the schema is generated from. The two must name the same questions with the same answer
   * types, or the method would be typed against answers the client is never asked for.
   */
  private checkContextQuestions(method: MethodDeclaration, questions: readonly Decorator[], label: string): boolean {
    const context = method.getParameters().find((parameter) => this.isContextParameter(parameter));
    const typeNode = context?.getTypeNode();
    const questionMap = typeNode && Node.isTypeReference(typeNode) ? typeNode.getTypeArguments()[0] : undefined;
    if (!questionMap) return true;
    const declared = new Map<string, Type>();
    for (const decorator of questions) {
      const call = decorator.getCallExpression();
      const name = call?.getArguments()[0];
      const answer = call?.getTypeArguments()[0];
      const value = name ? evaluateLiteral(name) : undefined;
      if (value?.ok && typeof value.value === 'string' && answer) declared.set(value.value, answer.getType());
    }
    let agrees = true;
    for (const property of questionMap.getType().getProperties()) {
      const name = property.getName();
      const typed = property.getTypeAtLocation(questionMap);
      const answer = declared.get(name);
      if (!answer) {
        this.sink.error(
          DiagnosticCode.InvalidQuestion,
          questionMap,
          `${label}: its TaskContext types a question '${name}' that no @NeedsInput('${name}') on the method declares`,
          `Declare it with @NeedsInput<...>('${name}'), or remove it from the TaskContext type argument.`,
        );
        agrees = false;
      } else if (!typed.isAssignableTo(answer) || !answer.isAssignableTo(typed)) {
        this.sink.error(
          DiagnosticCode.InvalidQuestion,
          questionMap,
          `${label}: question '${name}' has one answer type in its TaskContext and another in @NeedsInput`,
          'Use the same type in both places (a named interface keeps them together).',
        );
        agrees = false;
      }
    }
    return agrees;
  }

  private isContextParameter(parameter: ParameterDeclaration): boolean {
    return withoutUndefined(parameter.getType()).some((member) => this.tags.roleOfType(member) === 'context');
  }

  /**
   * One parameter of object type is the whole input; anything else is positional. Records, Dates
   * and the like are objects to the checker but not to the schema: they are found out after
   * reading and then treated as positional.
   */
  private isObjectParameter(parameter: ParameterDeclaration): boolean {
    const members = withoutUndefined(parameter.getType());
    const type = members[0];
    if (members.length !== 1 || !type) return false;
    const isObjectLike =
      type.isObject() || (type.isIntersection() && type.getIntersectionTypes().every((member) => member.isObject()));
    if (!isObjectLike || type.isArray() || type.isReadonlyArray() || type.isTuple()) return false;
    return type.getCallSignatures().length === 0 && this.tags.roleOfType(type) === undefined;
  }

  private readObjectParameter(
    parameter: ParameterDeclaration,
    label: string,
  ): { input: ObjectTypeIR | RefTypeIR; call: CallArgumentIR[] } | undefined {
    const node = parameter.getTypeNode() ?? parameter.getNameNode();
    const subject = `parameter '${parameter.getName()}' of ${label}`;
    const { type, includesUndefined } = this.types.readOptionalAware(parameter.getType(), { node, subject });
    if (!type) return undefined;
    if (type.kind === 'object' || type.kind === 'ref') return { input: type, call: [{ kind: 'input' }] };
    // An object to the checker that is not an object schema (a record, a Date): one named argument.
    const property = this.positionalProperty(parameter, type, includesUndefined, subject);
    return (
      property && {
        input: { kind: 'object', properties: [property] },
        call: [{ kind: 'property', name: property.name }],
      }
    );
  }

  private readPositionalParameter(parameter: ParameterDeclaration, label: string): PropertyIR | undefined {
    const nameNode = parameter.getNameNode();
    if (!Node.isIdentifier(nameNode)) {
      this.sink.error(
        DiagnosticCode.UnnamedParameter,
        nameNode,
        `${label}: a destructured parameter needs a name when the method has several parameters`,
        'Take one object parameter (`input: Input`) or give each parameter a plain name.',
      );
      return undefined;
    }
    const name = nameNode.getText();
    const subject = `parameter '${name}' of ${label}`;
    const site = {
      node: parameter.getTypeNode() ?? nameNode,
      subject,
      integer: hasJsDocTag(parameter, 'integer'),
    };
    const { type, includesUndefined } = this.types.readOptionalAware(parameter.getType(), site);
    return type && this.positionalProperty(parameter, type, includesUndefined, subject);
  }

  /** A parameter as a property of the input object: tags, default and optionality applied. */
  private positionalProperty(
    parameter: ParameterDeclaration,
    read: TypeIR,
    includesUndefined: boolean,
    subject: string,
  ): PropertyIR | undefined {
    // `@param` tags of the method are about this parameter; other tags on it are constraints.
    const tags = jsDocTags(parameter).filter((tag) => tag.name !== 'param');
    reportUnknownTags(tags, subject, this.sink);
    const type = applyConstraints(read, tags, subject, this.sink);
    const annotations = readAnnotations(tags, subject, this.sink);
    if (!type || !annotations) return undefined;
    const initializer = parameter.getInitializer();
    // A non-literal initialiser still makes the parameter optional; the method applies it itself.
    const evaluated = initializer ? evaluateLiteral(initializer) : undefined;
    const description = parameterDescription(parameter);
    return {
      name: parameter.getName(),
      type,
      optional: parameter.isOptional() || initializer !== undefined || includesUndefined,
      ...(description !== undefined ? { description } : {}),
      ...(evaluated?.ok ? { default: evaluated.value } : {}),
      ...annotations,
    };
  }

  private readOutput(method: MethodDeclaration, kind: 'task' | 'tool', label: string): OutputIR | undefined {
    const returnType = method.getReturnType();
    const returnTypeNode = method.getReturnTypeNode();
    const isPromise = returnType.getSymbol()?.getName() === 'Promise' && returnType.getTypeArguments().length === 1;
    if (!isPromise && kind === 'task') {
      this.sink.error(
        DiagnosticCode.TaskNotAsync,
        returnTypeNode ?? method.getNameNode(),
        `${label}: @Task methods must be async (return a Promise), found '${returnType.getText(method)}'`,
        'Declare the method `async`; use @Tool for a quick synchronous tool.',
      );
      return undefined;
    }
    const awaited = isPromise ? (returnType.getTypeArguments()[0] as Type) : returnType;
    if (awaited.isVoid() || awaited.isUndefined()) return { result: 'none' };
    const role = this.tags.roleOfType(awaited);
    if (role === 'toolResult') return { result: 'tool-result' };
    const element = awaited.isArray() || awaited.isReadonlyArray() ? awaited.getArrayElementType() : undefined;
    if (role === 'content' || (element && this.tags.roleOfType(element) === 'contentBlock'))
      return { result: 'content' };
    const siteNode =
      isPromise && returnTypeNode && Node.isTypeReference(returnTypeNode)
        ? (returnTypeNode.getTypeArguments()[0] ?? returnTypeNode)
        : (returnTypeNode ?? method.getNameNode());
    const subject = `return type of ${label}`;
    const type = this.types.read(awaited, { node: siteNode, subject });
    if (!type) return undefined;
    switch (type.kind) {
      case 'string':
      case 'enum':
      case 'template':
        return { result: 'text', type };
      case 'object':
      case 'ref':
        return { result: 'structured', type };
      case 'union':
        // A union of objects is still an object: `outputSchema` `{ type: 'object', anyOf: [...] }`.
        if (type.members.every((member) => member.kind === 'object' || member.kind === 'ref'))
          return { result: 'structured', type };
        this.sink.warning(
          DiagnosticCode.OutputNotStructured,
          siteNode,
          `${subject}: the result is sent as JSON text without an outputSchema, because MCP's structuredContent must be an object and this union has ${type.members.some((member) => member.kind === 'null') ? "'null'" : 'members that are not objects'}`,
          'Return an object to get an outputSchema and structuredContent, e.g. `{ item: Item | null }`.',
        );
        return { result: 'json', type };
      default:
        return { result: 'json', type };
    }
  }

  /**
   * The hooks the method makes: every `<ctx>.callback<Payload>('name', ...)` in its body whose
   * receiver is a `TaskContext`. One name may be made more than once (keys `name`, `name#2`),
   * always with the same payload type.
   */
  private readCallbacks(method: MethodDeclaration, kind: 'task' | 'tool', label: string): CallbackIR[] | undefined {
    const found = new Map<string, { ir: CallbackIR; shape: string }>();
    let valid = true;
    const fail = (node: Node, message: string, hint: string) => {
      this.sink.error(DiagnosticCode.InvalidCallback, node, `${label}: ${message}`, hint);
      valid = false;
    };
    for (const call of method.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      const callee = call.getExpression();
      if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'callback') continue;
      const receiver = withoutUndefined(callee.getExpression().getType());
      if (!receiver.some((member) => this.tags.roleOfType(member) === 'context')) continue;
      if (kind === 'tool') {
        fail(call, 'ctx.callback needs a task, and a @Tool method never runs as one', 'Make the method a @Task.');
        continue;
      }
      const [nameArgument] = call.getArguments();
      const name = nameArgument ? evaluateLiteral(nameArgument) : undefined;
      if (!name?.ok || typeof name.value !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(name.value)) {
        fail(
          nameArgument ?? call,
          'ctx.callback needs a string literal name of 1 to 64 letters, digits, `_`, `-` or `.` as its first argument',
          "Write ctx.callback<Payload>('ci', { timeoutMs: 3_600_000 }).",
        );
        continue;
      }
      const typeArgument = call.getTypeArguments()[0];
      if (!typeArgument) {
        fail(
          call,
          `ctx.callback('${name.value}') needs the payload type as its type argument`,
          `Write ctx.callback<{ status: string }>('${name.value}', ...).`,
        );
        continue;
      }
      const subject = `payload of callback '${name.value}' on ${label}`;
      const read = this.types.read(typeArgument.getType(), { node: typeArgument, subject });
      if (!read) {
        valid = false;
        continue;
      }
      if (read.kind !== 'object' && read.kind !== 'ref') {
        fail(
          typeArgument,
          `${subject}: a callback payload must be an object (the POSTed JSON body), not ${describeKind(read)}`,
          'Wrap the value in an object: { value: ... }.',
        );
        continue;
      }
      const shape = JSON.stringify(read);
      const earlier = found.get(name.value);
      if (earlier && earlier.shape !== shape) {
        fail(
          typeArgument,
          `callback '${name.value}' is made with two payload types`,
          'Use one payload type per callback name, or give the callbacks different names.',
        );
        continue;
      }
      if (!earlier) {
        found.set(name.value, {
          shape,
          ir: { name: name.value, payload: read, source: sourceReference(call, this.rootDir) },
        });
      }
    }
    if (!valid) return undefined;
    return [...found.values()]
      .map((entry) => entry.ir)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private readQuestions(decorators: readonly Decorator[], label: string): QuestionIR[] | undefined {
    const questions: QuestionIR[] = [];
    const names = new Set<string>();
    let valid = true;
    for (const decorator of decorators) {
      const question = this.readQuestion(decorator, label);
      if (!question) {
        valid = false;
        continue;
      }
      if (names.has(question.name)) {
        this.sink.error(
          DiagnosticCode.InvalidQuestion,
          decorator,
          `${label}: question '${question.name}' is declared twice`,
          'Give each @NeedsInput question its own name.',
        );
        valid = false;
        continue;
      }
      names.add(question.name);
      questions.push(question);
    }
    return valid ? questions : undefined;
  }

  private readQuestion(decorator: Decorator, label: string): QuestionIR | undefined {
    const call: CallExpression | undefined = decorator.getCallExpression();
    if (!call) {
      this.sink.error(
        DiagnosticCode.InvalidQuestion,
        decorator,
        '@NeedsInput must be called',
        "Write @NeedsInput<{ approve: boolean }>('approval', { message: '...' }).",
      );
      return undefined;
    }
    const [nameArgument, optionsArgument] = call.getArguments();
    const name = nameArgument ? evaluateLiteral(nameArgument) : undefined;
    if (!name?.ok || typeof name.value !== 'string') {
      this.sink.error(
        DiagnosticCode.InvalidQuestion,
        nameArgument ?? call,
        `${label}: @NeedsInput needs a string literal name as its first argument`,
        "Write @NeedsInput<Answer>('approval').",
      );
      return undefined;
    }
    let message: string | undefined;
    let upfront = false;
    if (optionsArgument) {
      const options = evaluateLiteral(optionsArgument);
      const value = options.ok ? options.value : undefined;
      const record = value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
      const onlyKnownKeys = record && Object.keys(record).every((key) => key === 'message' || key === 'upfront');
      if (
        !options.ok ||
        !onlyKnownKeys ||
        (record?.message !== undefined && typeof record.message !== 'string') ||
        (record?.upfront !== undefined && typeof record.upfront !== 'boolean')
      ) {
        this.sink.error(
          DiagnosticCode.InvalidQuestion,
          options.ok ? optionsArgument : options.node,
          `${label}: @NeedsInput options must be a literal { message?: string; upfront?: boolean }`,
          "Write { message: 'Deploy to production?' } inline.",
        );
        return undefined;
      }
      message = record?.message as string | undefined;
      upfront = record?.upfront === true;
    }
    const typeArgument = call.getTypeArguments()[0];
    if (!typeArgument) {
      this.sink.error(
        DiagnosticCode.InvalidQuestion,
        call,
        `${label}: @NeedsInput('${name.value}') needs the answer type as its type argument`,
        `Write @NeedsInput<{ approve: boolean }>('${name.value}').`,
      );
      return undefined;
    }
    const subject = `answer of question '${name.value}' on ${label}`;
    const read = this.types.read(typeArgument.getType(), { node: typeArgument, subject });
    if (!read) return undefined;
    const answer = read.kind === 'ref' ? this.types.resolve(read)?.type : read.kind === 'object' ? read : undefined;
    const nested = answer?.properties.find((property) => !isElicitationType(property.type));
    if (!answer || nested) {
      const what = nested
        ? `property '${nested.name}' is ${describeKind(nested.type)}`
        : `the answer is ${describeKind(read)}`;
      this.sink.error(
        DiagnosticCode.InvalidQuestion,
        typeArgument,
        `${subject}: elicitation answers must be flat objects of strings, numbers, booleans and string-literal unions; ${what}`,
        'Ask several questions, or flatten the answer into primitive properties.',
      );
      return undefined;
    }
    return {
      name: name.value,
      ...(message !== undefined ? { message } : {}),
      ...(upfront ? { upfront } : {}),
      answer,
      source: sourceReference(decorator, this.rootDir),
    };
  }
}

function describeKind(type: TypeIR): string {
  switch (type.kind) {
    case 'object':
    case 'ref':
      return 'an object';
    case 'native-enum':
      return 'an enum with number values';
    case 'array':
    case 'integer':
    case 'enum':
    case 'unknown':
      return `an ${type.kind}`;
    default:
      return `a ${type.kind}`;
  }
}

function withoutUndefined(type: Type): Type[] {
  return type.isUnion() ? type.getUnionTypes().filter((member) => !member.isUndefined()) : [type];
}

interface PolicyProblem {
  /** The `retry` field it is about, when one. */
  readonly field?: string;
  readonly message: string;
}

const RETRY_FIELDS = ['attempts', 'backoff', 'delayMs', 'maxDelayMs', 'jitter'];
/** What the runtime uses for a field left out (the same defaults as `DEFAULT_RETRY_POLICY`). */
const RETRY_DEFAULTS = { delayMs: 1000, maxDelayMs: 60_000 };

/** The problems of a `retry` literal; the registry checks the same rules at start-up. */
function retryProblems(value: JsonValue): PolicyProblem[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ message: 'must be an object such as { attempts: 5, backoff: "exponential", delayMs: 1000 }' }];
  }
  const problems: PolicyProblem[] = [];
  for (const field of Object.keys(value)) {
    if (!RETRY_FIELDS.includes(field)) {
      problems.push({ field, message: `has no field '${field}' (known: ${RETRY_FIELDS.join(', ')})` });
    }
  }
  const { attempts, backoff, delayMs, maxDelayMs, jitter } = value as { readonly [key: string]: JsonValue };
  if (attempts !== undefined && !(typeof attempts === 'number' && Number.isInteger(attempts) && attempts >= 1)) {
    problems.push({
      field: 'attempts',
      message: `attempts must be a whole number of 1 or more (it counts the first run), got ${JSON.stringify(attempts)}`,
    });
  }
  if (backoff !== undefined && backoff !== 'exponential' && backoff !== 'fixed') {
    problems.push({
      field: 'backoff',
      message: `backoff must be 'exponential' or 'fixed', got ${JSON.stringify(backoff)}`,
    });
  }
  let delaysValid = true;
  for (const [field, delay] of [
    ['delayMs', delayMs],
    ['maxDelayMs', maxDelayMs],
  ] as const) {
    if (delay !== undefined && !(typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) {
      problems.push({
        field,
        message: `${field} must be a number of milliseconds of 0 or more, got ${JSON.stringify(delay)}`,
      });
      delaysValid = false;
    }
  }
  const first = typeof delayMs === 'number' ? delayMs : RETRY_DEFAULTS.delayMs;
  const longest = typeof maxDelayMs === 'number' ? maxDelayMs : RETRY_DEFAULTS.maxDelayMs;
  if (delaysValid && longest < first) {
    problems.push({
      field: maxDelayMs !== undefined ? 'maxDelayMs' : 'delayMs',
      message: `maxDelayMs (${longest}) must not be below delayMs (${first})`,
    });
  }
  if (jitter !== undefined && typeof jitter !== 'boolean') {
    problems.push({ field: 'jitter', message: `jitter must be true or false, got ${JSON.stringify(jitter)}` });
  }
  return problems;
}

function timeoutProblems(value: JsonValue): PolicyProblem[] {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
    ? []
    : [{ message: `must be a positive number of milliseconds, got ${JSON.stringify(value)}` }];
}

/** The initializer of `field` inside an object literal, to report a problem where it is written. */
function nestedInitializer(node: Node, field: string): Node | undefined {
  if (!Node.isObjectLiteralExpression(node)) return undefined;
  const property = node.getProperty(field);
  if (!property) return undefined;
  return Node.isPropertyAssignment(property) ? property.getInitializer() : property;
}

function optionProblem(kind: OptionKind, value: JsonValue): string | undefined {
  switch (kind) {
    case 'retry':
    case 'timeout':
      // Checked with their own code before (retryProblems, timeoutProblems).
      return undefined;
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'taskSupport':
      return value === 'optional' || value === 'required' ? undefined : "must be 'optional' or 'required'";
    case 'ttl':
      return value === null || (typeof value === 'number' && Number.isFinite(value) && value > 0)
        ? undefined
        : 'must be a positive number of milliseconds, or null';
    case 'duration':
      return typeof value === 'number' && Number.isFinite(value) && value > 0
        ? undefined
        : 'must be a positive number of milliseconds';
    case 'positiveInteger':
      return typeof value === 'number' && Number.isInteger(value) && value > 0
        ? undefined
        : 'must be a positive integer';
    case 'unawareClients':
      return value === 'auto' || value === 'handle' || value === 'inline'
        ? undefined
        : "must be 'auto', 'handle' or 'inline'";
    case 'policyBoolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'priority':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PRIORITY
        ? undefined
        : `must be a whole number from 0 to ${MAX_PRIORITY} (lower runs first)`;
    case 'version':
      return typeof value === 'string' && value.trim().length > 0 && value.length <= MAX_VERSION_LENGTH
        ? undefined
        : `must be a non-empty string of at most ${MAX_VERSION_LENGTH} characters`;
  }
}
