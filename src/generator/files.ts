/**
 * The only part of the generator that touches the disk. Generation produces a file map in memory;
 * writing and `--check` both compare that map with what is on disk, so they cannot disagree.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { diffExcerpt } from './diff.js';
import { isGeneratedByTaskgen } from './header.js';

/** Absolute path → full file content. */
export type FileMap = ReadonlyMap<string, string>;

export type WriteStatus = 'written' | 'unchanged' | 'refused';

export interface WriteResult {
  readonly path: string;
  readonly status: WriteStatus;
}

/** `extra`: a file next to the outputs that carries our header but that this run did not produce. */
export type CheckStatus = 'current' | 'stale' | 'missing' | 'extra';

export interface CheckResult {
  readonly path: string;
  readonly status: CheckStatus;
  /** For stale files: an excerpt of the first difference (disk → generated). */
  readonly diff?: string;
  /** The file on disk was not written by mcp-taskgen. */
  readonly foreign?: boolean;
}

/**
 * Writes files whose content changed, and nothing at all if any target exists without our header:
 * overwriting a hand-written file because of a wrong `--out` would lose work.
 */
export function writeGenerated(files: FileMap): WriteResult[] {
  const plan = [...files].map(([filePath, content]) => {
    const existing = readIfExists(filePath);
    const status: WriteStatus =
      existing === undefined
        ? 'written'
        : existing === content
          ? 'unchanged'
          : isGeneratedByTaskgen(existing)
            ? 'written'
            : 'refused';
    return { path: filePath, content, status };
  });
  if (plan.some((entry) => entry.status === 'refused')) {
    return plan.map((entry) => ({ path: entry.path, status: entry.status === 'refused' ? 'refused' : 'unchanged' }));
  }
  for (const entry of plan) {
    if (entry.status !== 'written') continue;
    mkdirSync(path.dirname(entry.path), { recursive: true });
    // Write-then-rename: watchers and concurrent readers never see a half-written module.
    const temporary = `${entry.path}.${process.pid}.tmp`;
    writeFileSync(temporary, entry.content);
    renameSync(temporary, entry.path);
  }
  return plan.map(({ path: filePath, status }) => ({ path: filePath, status }));
}

export function checkGenerated(files: FileMap): CheckResult[] {
  const produced = [...files].map(([filePath, content]): CheckResult => {
    const existing = readIfExists(filePath);
    if (existing === undefined) return { path: filePath, status: 'missing' };
    if (existing === content) return { path: filePath, status: 'current' };
    return {
      path: filePath,
      status: 'stale',
      diff: diffExcerpt(existing, content),
      ...(isGeneratedByTaskgen(existing) ? {} : { foreign: true }),
    };
  });
  return [...produced, ...extraGenerated(files).map((filePath): CheckResult => ({ path: filePath, status: 'extra' }))];
}

/**
 * Files in the output directories that start with our header but are not in `files`: left over
 * from a renamed `--out`, say. Only the header counts, so hand-written neighbours are never listed.
 */
export function extraGenerated(files: FileMap): string[] {
  const extra: string[] = [];
  for (const dir of new Set([...files.keys()].map((filePath) => path.dirname(filePath)))) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const entry of entries.sort()) {
      const filePath = path.join(dir, entry);
      if (files.has(filePath) || !/\.[cm]?tsx?$/.test(entry)) continue;
      const content = readIfExists(filePath);
      if (content !== undefined && isGeneratedByTaskgen(content)) extra.push(filePath);
    }
  }
  return extra;
}

function readIfExists(filePath: string): string | undefined {
  try {
    return readFileSync(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
