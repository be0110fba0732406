declare const integerBrand: unique symbol;

/**
 * A number the generated schema requires to be an integer (`"type": "integer"`, `z.int()`).
 * Plain numbers are assignable to it; the JSDoc tag `@integer` on a `number` does the same.
 * @mcpTaskgen integer
 */
export type Integer = number & { readonly [integerBrand]?: 'integer' };
