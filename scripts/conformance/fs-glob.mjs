/**
 * Preloaded (`--import`) by run.mjs on a Node without `fs.globSync`: registers the resolve hook
 * in fs-glob-hooks.mjs, which serves the conformance CLI a `node:fs` that has one.
 */
import { register } from 'node:module';

register('./fs-glob-hooks.mjs', import.meta.url);
