/** npm's rules for the name of a new package (those `validate-npm-package-name` applies). */

const MAX_LENGTH = 214;
const RESERVED = new Set(['node_modules', 'favicon.ico']);
const NOT_URL_SAFE = /[^a-zA-Z0-9\-._~]/g;

/** What is wrong with `name` as the name of a new npm package; empty when nothing is. */
export function packageNameProblems(name: string): string[] {
  if (name.trim().length === 0) return ['it is empty'];
  const problems: string[] = [];
  if (name.length > MAX_LENGTH) problems.push(`it is longer than ${MAX_LENGTH} characters`);
  if (name.toLowerCase() !== name) problems.push('it has capital letters');
  if (RESERVED.has(name)) problems.push(`"${name}" is a reserved name`);

  const scoped = /^@([^/]+)\/([^/]+)$/.exec(name);
  if (name.startsWith('@') && !scoped) return [...problems, 'a scoped name must look like @scope/name'];
  const parts = scoped ? [scoped[1] as string, scoped[2] as string] : [name];
  for (const part of parts) {
    if (part.startsWith('.') || part.startsWith('_')) problems.push(`"${part}" starts with "${part[0]}"`);
    const unsafe = [...new Set(part.match(NOT_URL_SAFE))];
    if (unsafe.length > 0) problems.push(`it contains ${unsafe.map(describeCharacter).join(', ')}`);
  }
  return problems;
}

/** A valid package name close to `name`, for directory names such as "My App". */
export function toValidPackageName(name: string): string {
  const cleaned = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9\-._~]+/g, '-')
    .replace(/^[-._]+|-+$/g, '')
    .replace(/-{2,}/g, '-')
    .slice(0, MAX_LENGTH);
  return cleaned.length > 0 && !RESERVED.has(cleaned) ? cleaned : 'my-task-server';
}

function describeCharacter(character: string): string {
  return /\s/.test(character) ? 'spaces' : `"${character}"`;
}
