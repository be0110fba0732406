/**
 * Module resolve hook: when code inside the conformance package imports `fs` or `node:fs`, it
 * gets fs-with-glob.mjs instead. Every other importer, Node's own included, keeps the real one.
 */
const withGlob = new URL('./fs-with-glob.mjs', import.meta.url).href;
const CONFORMANCE_PACKAGE = '/node_modules/@modelcontextprotocol/conformance/';

export async function resolve(specifier, context, nextResolve) {
  const fromConformance = context.parentURL?.includes(CONFORMANCE_PACKAGE) ?? false;
  if (fromConformance && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: withGlob, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
