/**
 * Static evaluation of decorator arguments and parameter initialisers. Only literal syntax is
 * accepted: the generator must know the value without running user code, and a constant
 * imported from elsewhere would silently go stale in the generated module.
 */
import { Node, SyntaxKind } from 'ts-morph';
import type { JsonValue } from '../ir.js';

export type Evaluation = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly node: Node };

export function evaluateLiteral(node: Node): Evaluation {
  if (Node.isParenthesizedExpression(node)) return evaluateLiteral(node.getExpression());
  // `{ ... } as const` and `satisfies` only change the type, not the value.
  if (Node.isAsExpression(node) || Node.isSatisfiesExpression(node)) return evaluateLiteral(node.getExpression());
  if (Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node)) return ok(node.getLiteralValue());
  if (Node.isNumericLiteral(node)) return ok(node.getLiteralValue());
  if (Node.isTrueLiteral(node)) return ok(true);
  if (Node.isFalseLiteral(node)) return ok(false);
  if (Node.isNullLiteral(node)) return ok(null);
  if (Node.isPrefixUnaryExpression(node)) {
    const operand = node.getOperand();
    const operator = node.getOperatorToken();
    if (Node.isNumericLiteral(operand) && (operator === SyntaxKind.MinusToken || operator === SyntaxKind.PlusToken)) {
      const value = operand.getLiteralValue();
      return ok(operator === SyntaxKind.MinusToken ? -value : value);
    }
    return { ok: false, node };
  }
  if (Node.isArrayLiteralExpression(node)) {
    const items: JsonValue[] = [];
    for (const element of node.getElements()) {
      const item = evaluateLiteral(element);
      if (!item.ok) return item;
      items.push(item.value);
    }
    return ok(items);
  }
  if (Node.isObjectLiteralExpression(node)) {
    const object: { [key: string]: JsonValue } = {};
    for (const property of node.getProperties()) {
      if (!Node.isPropertyAssignment(property)) return { ok: false, node: property };
      const key = staticPropertyName(property.getNameNode());
      if (key === undefined) return { ok: false, node: property.getNameNode() };
      const initializer = property.getInitializer();
      if (!initializer) return { ok: false, node: property };
      const value = evaluateLiteral(initializer);
      if (!value.ok) return value;
      object[key] = value.value;
    }
    return ok(object);
  }
  return { ok: false, node };
}

/** `a`, `'a'` and `1` are static keys; `[a]` is not. */
export function staticPropertyName(name: Node): string | undefined {
  if (Node.isIdentifier(name) || Node.isPrivateIdentifier(name)) return name.getText();
  if (Node.isStringLiteral(name) || Node.isNoSubstitutionTemplateLiteral(name)) return name.getLiteralValue();
  if (Node.isNumericLiteral(name)) return String(name.getLiteralValue());
  return undefined;
}

function ok(value: JsonValue): Evaluation {
  return { ok: true, value };
}
