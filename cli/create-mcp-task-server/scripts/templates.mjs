#!/usr/bin/env node
/**
 * `node scripts/templates.mjs copy`: copies the repository's `templates/template-*` folders into
 * this package (prepack), so the published tarball carries them. `remove` deletes the copy again
 * (postpack), so the repository keeps a single source of truth.
 */
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const packageRoot = path.resolve(import.meta.dirname, '..');
const source = path.resolve(packageRoot, '../../templates');
const target = path.join(packageRoot, 'templates');
/** Left behind by trying a template in place; never part of a template. */
const SKIPPED = new Set(['node_modules', 'dist', '.env']);

const command = process.argv[2];
if (command === 'remove') {
  rmSync(target, { recursive: true, force: true });
} else if (command === 'copy') {
  if (!existsSync(source))
    throw new Error(`No templates at ${source}: pack this package from the repository checkout.`);
  rmSync(target, { recursive: true, force: true });
  const templates = readdirSync(source).filter((name) => name.startsWith('template-'));
  for (const name of templates) {
    cpSync(path.join(source, name), path.join(target, name), {
      recursive: true,
      filter: (file) => !SKIPPED.has(path.basename(file)),
    });
  }
  process.stderr.write(`copied ${templates.join(', ')} into ${path.relative(process.cwd(), target) || '.'}\n`);
} else {
  process.stderr.write('usage: node scripts/templates.mjs copy|remove\n');
  process.exitCode = 2;
}
