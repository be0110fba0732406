/** Copies a template into the target folder and makes it the user's project. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Files stored under another name in the templates: npm leaves `.gitignore` out of published
 * packages (and would read it as the template's own ignore file).
 */
const RENAMED: Readonly<Record<string, string>> = { _gitignore: '.gitignore' };
/** Never copied, should a template folder hold them after being tried in place. */
const SKIPPED = new Set(['node_modules', 'dist', '.env', 'package-lock.json']);
/** The name the templates use for the project; replaced with the package name everywhere. */
export const NAME_PLACEHOLDER = 'my-task-server';

export interface WriteProjectOptions {
  readonly templateDirectory: string;
  readonly targetDirectory: string;
  readonly packageName: string;
}

/** Writes the project and returns the paths it wrote, relative to the target, sorted. */
export function writeProject(options: WriteProjectOptions): string[] {
  const written: string[] = [];
  const copy = (from: string, relative: string) => {
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue;
      const name = RENAMED[entry.name] ?? entry.name;
      const target = path.join(options.targetDirectory, relative, name);
      if (entry.isDirectory()) {
        mkdirSync(target, { recursive: true });
        copy(path.join(from, entry.name), path.join(relative, name));
        continue;
      }
      const text = readFileSync(path.join(from, entry.name), 'utf8');
      writeFileSync(target, personalise(name, text, options.packageName));
      written.push(path.join(relative, name).split(path.sep).join('/'));
    }
  };
  mkdirSync(options.targetDirectory, { recursive: true });
  copy(options.templateDirectory, '');
  return written.sort();
}

function personalise(fileName: string, text: string, packageName: string): string {
  if (fileName === 'package.json') {
    const manifest = JSON.parse(text) as Record<string, unknown>;
    return `${JSON.stringify({ ...manifest, name: packageName }, null, 2)}\n`;
  }
  return text.replaceAll(NAME_PLACEHOLDER, packageName);
}
