#!/usr/bin/env node
/**
 * Empties the build output the package ships (`dist/src`, `dist/cli`) before `tsc` writes it
 * again. tsc never deletes: without this, a module renamed or removed in the source would live
 * on in dist/ and be packed and published. Other output under dist/ (the bench build) is left.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
for (const folder of ['dist/src', 'dist/cli']) rmSync(path.join(root, folder), { recursive: true, force: true });
