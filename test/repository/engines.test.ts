/**
 * One Node floor for everything this repository ships: the framework, the scaffolder, every
 * template and the README say the same, and every dependency in the lockfile runs on it, so
 * `npm ci` on that Node prints no engine warning.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8'));

const FLOOR = '>=20.19';
const FLOOR_VERSION = semver.minVersion(FLOOR)!.version;

const manifests = [
  'package.json',
  'cli/create-mcp-task-server/package.json',
  ...readdirSync(path.join(repoRoot, 'templates'))
    .filter((name) => name.startsWith('template-'))
    .map((name) => `templates/${name}/package.json`),
];

describe(`the Node floor (${FLOOR})`, () => {
  it.each(manifests)('%s declares it', (manifest) => {
    expect(readJson(manifest).engines?.node).toBe(FLOOR);
  });

  it('is what the README says', () => {
    expect(readFileSync(path.join(repoRoot, 'README.md'), 'utf8')).toContain(
      `Node ${FLOOR_VERSION.replace(/\.0$/, '')}`,
    );
  });

  it('is met by every dependency in the lockfile', () => {
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { engines?: { node?: string }; link?: boolean }>;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => !entry.link && entry.engines?.node)
      .filter(([, entry]) => !semver.satisfies(FLOOR_VERSION, entry.engines!.node!))
      .map(([where, entry]) => `${where} wants node ${entry.engines!.node}`);
    expect(refusing).toEqual([]);
  });

  it('is met by the Node running these tests', () => {
    expect(semver.satisfies(process.versions.node, FLOOR), process.version).toBe(true);
  });
});
