/**
 * `node:fs` plus the part of Node 22's `fs.globSync` the conformance CLI uses: a pattern (or
 * several) of `/`-separated segments where `**` matches any number of directories, `*` any run of
 * characters within a segment and `?` one character; results are files relative to `cwd`.
 */
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(patterns, options = {}) {
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd);
  const matchers = (Array.isArray(patterns) ? patterns : [patterns]).map(patternToRegExp);
  let entries;
  try {
    entries = fs.readdirSync(cwd, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  const found = [];
  for (const entry of entries) {
    // `parentPath` from Node 20.12, `path` before it.
    const relative = path
      .relative(cwd, path.join(entry.parentPath ?? entry.path, entry.name))
      .split(path.sep)
      .join('/');
    if (matchers.some((matcher) => matcher.test(relative))) found.push(relative);
  }
  return found;
}

/** Exported for its test. */
export function patternToRegExp(pattern) {
  const segments = String(pattern).split('/');
  let source = '';
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      source += last ? '.*' : '(?:[^/]+/)*';
      return;
    }
    const escaped = segment
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]');
    source += last ? escaped : `${escaped}/`;
  });
  return new RegExp(`^${source}$`);
}
