/**
 * Loaded with `node --import` in the API reference's process only: every `typescript` that
 * process imports or requires becomes the `typescript5` devDependency (TypeScript 5.x under
 * another name). TypeDoc drives the TypeScript compiler API, which TypeScript 7, the compiler
 * the rest of the repository uses, does not have.
 */
import Module, { register } from 'node:module';

register(new URL('./typescript5-resolve.mjs', import.meta.url));

// `createRequire(...)('typescript')` goes through the CommonJS resolver, which the hook above does not see.
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveTypescript5(request, ...rest) {
  return resolveFilename.call(this, request === 'typescript' ? 'typescript5' : request, ...rest);
};
