/**
 * Every citation in the code and the docs leads somewhere a reader of the repository can follow:
 *
 * - a § reference names a file of the repository (a path before it on the line, or the target of
 *   the Markdown link it is written in; with neither, the citing file itself), and that file has
 *   the section's anchor (`§4.9.3` is `#s4-9-3`);
 * - "decision N" is an entry of docs/design/decisions.md (`#decision-N`);
 * - a Markdown file named in the text exists;
 * - no issue number is cited, and none of the team's notes that live outside the repository.
 *
 * The root README is left out while it is being rewritten. The checker is tested on samples first,
 * so a rule cannot stop matching without this file failing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'cli', 'docs', 'test', 'bench', 'examples', 'templates', 'scripts'];
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', '.tmp', 'cache', '.vitepress-cache']);
const TEXT = /\.(ts|mts|cts|mjs|cjs|js|json|md|yaml|yml|vue|css|html|sh|txt)$|^(Dockerfile|_gitignore)$/;
const DECISIONS = 'docs/design/decisions.md';

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('.tmp')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (TEXT.test(entry.name)) yield full;
  }
}

const allFiles = SCANNED.flatMap((dir) => [...filesUnder(path.join(repoRoot, dir))]).map((file) =>
  path.relative(repoRoot, file).split(path.sep).join('/'),
);

/** GitHub-style slug of a heading's text, for links to headings without an explicit anchor. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
/** The anchors a Markdown file offers: `{#id}` on headings, `id="…"` attributes, heading slugs. */
function anchorsOf(repoPath: string): Set<string> {
  let anchors = anchorCache.get(repoPath);
  if (anchors) return anchors;
  anchors = new Set();
  const text = readFileSync(path.join(repoRoot, repoPath), 'utf8');
  for (const match of text.matchAll(/\{#([\w-]+)\}/g)) anchors.add(match[1] as string);
  for (const match of text.matchAll(/\b(?:id|name)="([\w-]+)"/g)) anchors.add(match[1] as string);
  for (const match of text.matchAll(/^#{1,6}\s+(.*?)(?:\s*\{#[\w-]+\})?\s*$/gm)) anchors.add(slug(match[1] as string));
  anchorCache.set(repoPath, anchors);
  return anchors;
}

/** A path as cited from `file`, relative to the repository root, or undefined when no such file. */
function resolve(file: string, cited: string): string | undefined {
  const candidates = [
    path.posix.normalize(path.posix.join(path.posix.dirname(file), cited)),
    path.posix.normalize(cited),
  ];
  return candidates.find((candidate) => {
    const full = path.join(repoRoot, candidate);
    return !candidate.startsWith('..') && existsSync(full) && statSync(full).isFile();
  });
}

/** Whether some file of the repository is called `name` (a bare `README.md` in a template's text). */
const isSomeFile = (name: string) => allFiles.some((file) => file === name || file.endsWith(`/${name}`));

// Spelled in pieces so that this file does not cite them itself.
const OUTSIDE_NOTES = [
  ['bullmq', 'notes'].join('-'),
  ['protocol', 'digest'].join(' '),
  ['sdk', 'hosting'].join('-'),
  ['perf', 'anchors'].join('-'),
  ['style', 'anchors'].join('-'),
  ['peers', 'md'].join('.'),
];
const ISSUE_WORD = new RegExp(`\\b${['iss', 'ues?'].join('')}\\s+#?\\d+`, 'i');
const HASH_NUMBER = /(^|[\s([{,;"'`])#(\d+)\b/g;
const REPO_ISSUE = /\b[\w.-]+\/[\w.-]+#\d+\b/;
const SECTION = /§\s?(\d+(?:\.\d+)*)/g;
const MD_LINK = /\[([^\]]*)\]\(([^)\s]+)\)/g;
const MD_PATH = /(?:^|[\s(`'"])((?:\.{1,2}\/)?[\w.-]+(?:\/[\w.-]+)*\.md)\b/g;
const URL = /https?:\/\/[^\s)>\]]+/g;
const DECISION = /\bdecision\s+(\d+)/gi;

/** A CSS colour such as `#067647`, not an issue: after a colon or in quotes, or before a semicolon. */
function isColour(line: string, index: number, digits: string): boolean {
  if (![3, 4, 6, 8].includes(digits.length)) return false;
  const before = line.slice(0, index);
  const after = line.slice(index + 1 + digits.length);
  return /:\s*$/.test(before) || /["']$/.test(before) || /^\s*;/.test(after);
}

/** The problems of one file's citations, as `file:line: what`. */
function citationProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const at = `${file}:${index + 1}`;
    const report = (what: string) => problems.push(`${at}: ${what}`);

    for (const url of line.match(URL) ?? []) {
      if (/\/(issues|pull)\/\d+/.test(url)) report(`cites an issue number: ${url}`);
    }
    const prose = line.replace(URL, '');
    if (ISSUE_WORD.test(line)) report(`cites an issue number: ${line.match(ISSUE_WORD)?.[0]}`);
    if (REPO_ISSUE.test(prose)) report(`cites an issue number: ${prose.match(REPO_ISSUE)?.[0]}`);
    for (const match of prose.matchAll(HASH_NUMBER)) {
      const hashAt = (match.index ?? 0) + (match[1] as string).length;
      if (!isColour(prose, hashAt, match[2] as string)) report(`cites an issue number: #${match[2]}`);
    }
    for (const note of OUTSIDE_NOTES) {
      if (line.toLowerCase().includes(note)) report(`cites "${note}", which is not in the repository`);
    }

    for (const match of line.matchAll(DECISION)) {
      if (!anchorsOf(DECISIONS).has(`decision-${match[1]}`)) report(`"${match[0]}" is not an entry of ${DECISIONS}`);
    }

    // Markdown links whose text holds a §: the link's target must exist and have the anchor.
    const linked = new Set<number>();
    for (const link of line.matchAll(MD_LINK)) {
      const [whole, label, target] = link as unknown as [string, string, string];
      if (!label.includes('§')) continue;
      for (let i = link.index ?? 0; i < (link.index ?? 0) + whole.length; i++) linked.add(i);
      const [targetPath, anchor] = target.split('#') as [string, string | undefined];
      const resolved = targetPath === '' ? file : resolve(file, targetPath);
      if (!resolved) report(`${label} links to ${targetPath}, which does not exist`);
      else if (anchor && !anchorsOf(resolved).has(anchor))
        report(`${label} links to ${resolved}#${anchor}, no such anchor`);
    }

    for (const section of line.matchAll(SECTION)) {
      const sectionAt = section.index ?? 0;
      if (linked.has(sectionAt)) continue;
      const anchor = `s${(section[1] as string).replace(/\./g, '-')}`;
      const paths = [...line.slice(0, sectionAt).matchAll(MD_PATH)];
      const cited = paths.at(-1)?.[1];
      const target = cited === undefined ? file : resolve(file, cited);
      if (!target) {
        report(`§${section[1]} cites ${cited}, which does not exist`);
      } else if (!target.endsWith('.md') || !anchorsOf(target).has(anchor)) {
        report(
          cited === undefined
            ? `§${section[1]} names no file of the repository`
            : `§${section[1]}: ${target} has no section #${anchor}`,
        );
      }
    }

    for (const mention of line.matchAll(MD_PATH)) {
      const cited = mention[1] as string;
      if (line.includes(`://${cited}`) || /:\/\/\S*$/.test(line.slice(0, mention.index ?? 0))) continue;
      if (!resolve(file, cited) && !isSomeFile(cited)) report(`names ${cited}, which is not in the repository`);
    }
  });
  return problems;
}

describe('the citation checker', () => {
  // Names of documents that do not exist, spelled in pieces for the self-contained check.
  const md = (name: string) => `${name}.${'md'}`;
  const check = (text: string, file = 'src/host/example.ts') => citationProblems(file, text);
  const rules = 'docs/design/protocol-rules.md';

  it('accepts citations that resolve, and text that only looks like one', () => {
    for (const text of [
      `the task is cancelled first (${rules} §4.8)`,
      `both (${rules} §5.4, §5.5)`,
      'the same in every process (docs/design/bullmq.md §2)',
      `(${DECISIONS}, decision 6)`,
      '#!/usr/bin/env node',
      '  --muted: #667085; --line: #e4e7ec;',
      'const colour = { ok: "#067647" };',
      '# A heading',
      '## 2. A numbered heading',
      '&#8203; and https://example.org/page#12',
      'see README.md',
    ]) {
      expect(check(text), text).toEqual([]);
    }
    expect(
      check('[§4.4](design/protocol-rules.md#s4-4) and [§9](design/protocol-rules.md#s9)', `docs/${md('x')}`),
    ).toEqual([]);
    expect(check('as §4.2 says', rules)).toEqual([]);
  });

  it('rejects each kind of citation that does not resolve', () => {
    const issue = ['iss', 'ue'].join('');
    for (const text of [
      '(§4.4)',
      `${rules} §4.99`,
      `${md('nowhere')} §2`,
      `${issue} 12`,
      `${issue}s 12 and 15`,
      'since #10 the limits',
      '(#3758)',
      'owner/repo#1853',
      'https://github.com/owner/repo/issues/1853',
      'decision 99',
      `architecture ${'decision'} 42`,
      `${OUTSIDE_NOTES[0]} §4`,
      `the ${OUTSIDE_NOTES[1]}`,
      `see docs/design/${md('missing')}`,
    ]) {
      expect(check(text), text).not.toEqual([]);
    }
    expect(check(`[§4.4](design/${md('missing')}#s4-4)`, `docs/${md('x')}`)).not.toEqual([]);
    expect(check('[§4.4](design/protocol-rules.md#s4-44)', `docs/${md('x')}`)).not.toEqual([]);
  });
});

describe('every citation in the repository', () => {
  it('resolves', () => {
    const self = path
      .relative(repoRoot, import.meta.filename)
      .split(path.sep)
      .join('/');
    const problems = allFiles
      .filter((file) => file !== self)
      .flatMap((file) => citationProblems(file, readFileSync(path.join(repoRoot, file), 'utf8')));
    expect(problems).toEqual([]);
  });
});
