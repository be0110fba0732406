/**
 * Recognises the framework's own declarations by symbol, never by identifier text: a name is
 * followed through every alias (`import { Task as T }`, re-exports, `dist/*.d.ts`) to its
 * declaration, which counts only if its JSDoc carries `@mcpTaskgen <role>`. A user's own `Task`
 * function, or ours renamed, is therefore classified correctly.
 */
import { type Symbol as MorphSymbol, type Node, type Type, ts } from 'ts-morph';

export type TaskgenRole =
  | 'task'
  | 'tool'
  | 'needsInput'
  | 'context'
  | 'integer'
  | 'content'
  | 'contentBlock'
  | 'toolResult';

const ROLES: ReadonlySet<string> = new Set<TaskgenRole>([
  'task',
  'tool',
  'needsInput',
  'context',
  'integer',
  'content',
  'contentBlock',
  'toolResult',
]);

export class TaskgenTags {
  private readonly roles = new Map<ts.Symbol, TaskgenRole | undefined>();

  roleOfSymbol(symbol: MorphSymbol | undefined): TaskgenRole | undefined {
    if (!symbol) return undefined;
    const target = symbol.isAlias() ? (symbol.getAliasedSymbol() ?? symbol) : symbol;
    const key = target.compilerSymbol;
    if (!this.roles.has(key)) this.roles.set(key, roleFromDeclarations(target.getDeclarations()));
    return this.roles.get(key);
  }

  /** The role of what an expression such as `T` in `@T()` or `mts.Task` in `@mts.Task()` refers to. */
  roleOfExpression(expression: Node): TaskgenRole | undefined {
    return this.roleOfSymbol(expression.getSymbol());
  }

  /**
   * Whether the expression refers to nothing the checker can find, such as a name imported from
   * a module that does not resolve. Such a decorator may well be ours; it must not vanish silently.
   */
  isUnresolved(expression: Node): boolean {
    const symbol = expression.getSymbol();
    if (!symbol) return true;
    const target = symbol.isAlias() ? symbol.getAliasedSymbol() : symbol;
    return !target || target.getDeclarations().length === 0;
  }

  /** `TaskContext` is an interface, `Integer` an alias: check the alias first, then the type's own symbol. */
  roleOfType(type: Type): TaskgenRole | undefined {
    return this.roleOfSymbol(type.getAliasSymbol()) ?? this.roleOfSymbol(type.getSymbol());
  }
}

function roleFromDeclarations(declarations: readonly Node[]): TaskgenRole | undefined {
  for (const declaration of declarations) {
    for (const tag of ts.getJSDocTags(declaration.compilerNode)) {
      if (tag.tagName.text !== 'mcpTaskgen') continue;
      const role = ts.getTextOfJSDocComment(tag.comment)?.trim();
      if (role && ROLES.has(role)) return role as TaskgenRole;
    }
  }
  return undefined;
}
