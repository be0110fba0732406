/**
 * Where the templates are: `templates/` inside the published package (copied in at pack time), or
 * the repository's `templates/` when run from a checkout. Each is a `template-<name>` folder.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const packageRoot = path.resolve(import.meta.dirname, '..');
const PREFIX = 'template-';

export const DEFAULT_TEMPLATE = 'default';

export function findTemplatesRoot(): string {
  const candidates = [path.join(packageRoot, 'templates'), path.resolve(packageRoot, '../../templates')];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error(`create-mcp-task-server: no templates found (looked in ${candidates.join(', ')})`);
  return found;
}

/** The template names, `default` first. */
export function listTemplates(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.startsWith(PREFIX))
    .map((entry) => entry.name.slice(PREFIX.length))
    .sort((a, b) => Number(b === DEFAULT_TEMPLATE) - Number(a === DEFAULT_TEMPLATE) || a.localeCompare(b));
}

export function templateDirectory(root: string, name: string): string {
  return path.join(root, `${PREFIX}${name}`);
}
