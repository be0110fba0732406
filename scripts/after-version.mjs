#!/usr/bin/env node
/**
 * Run by `npm run release:version` after `changeset version` has set the new version and written
 * the changelog entries:
 * - points every template's mcp-task-server dependency at that version, so an app scaffolded by
 *   the new create-mcp-task-server installs the framework released with it (the two packages
 *   share one version);
 * - drops the "nothing is released yet" note from CHANGELOG.md once there is a release above it.
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

const changelog = path.join(root, 'CHANGELOG.md');
const text = readFileSync(changelog, 'utf8');
const note = /\n+Nothing is released yet\.[\s\S]*?(?=\n## |\s*$)/;
if (/^## /m.test(text) && note.test(text)) {
  writeFileSync(changelog, `${text.replace(note, '').trimEnd()}\n`);
  process.stderr.write('CHANGELOG.md: removed the note for unreleased packages\n');
}
