#!/usr/bin/env node
/**
 * After `changeset version`: points every template's mcp-task-server dependency at the version
 * just set, so an app scaffolded by the new create-mcp-task-server installs the framework
 * released with it (the two packages share one version).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const templates = path.join(root, 'templates');
for (const name of readdirSync(templates).filter((entry) => entry.startsWith('template-'))) {
  const file = path.join(templates, name, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  manifest.dependencies['mcp-task-server'] = `^${version}`;
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  process.stderr.write(`${path.relative(root, file)}: mcp-task-server ^${version}\n`);
}
