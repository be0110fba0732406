/** The ES module half of `typescript5-hook.mjs`: `import ts from 'typescript'` loads `typescript5`. */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier === 'typescript' ? 'typescript5' : specifier, context);
}
