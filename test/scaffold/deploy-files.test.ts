/**
 * The default template's Dockerfile and compose.yaml say what the README's "Deploying" section
 * promises: Redis as BullMQ needs it, one server and N workers from one image, node (not npm)
 * as the command, a non-root multi-stage build, a health check on /healthz for both. With Docker Compose
 * on the machine, `docker compose config` validates the file too; without it, that one check
 * is skipped.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const template = path.resolve(import.meta.dirname, '../../templates/template-default');
const composeText = readFileSync(path.join(template, 'compose.yaml'), 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, Record<string, unknown> & { environment?: Record<string, string> }>;
};
const dockerfile = readFileSync(path.join(template, 'Dockerfile'), 'utf8');

describe('compose.yaml', () => {
  it('runs Redis with noeviction and append-only persistence', () => {
    const command = (compose.services.redis!.command as string[]).join(' ');
    expect(command).toContain('--maxmemory-policy noeviction');
    expect(command).toContain('--appendonly yes');
  });

  it('runs one server that leaves the work to N workers, all on that Redis, with node as the command', () => {
    const { server, worker } = compose.services;
    expect(server?.command).toEqual(['node', '--max-semi-space-size=4', 'dist/server.js']);
    expect(server?.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379', WORKERS: '0' });
    expect(worker?.command).toEqual(['node', 'dist/worker.js']);
    expect(worker?.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379' });
    expect(server?.environment?.REDIS_PREFIX).toBe(worker?.environment?.REDIS_PREFIX);
    expect((worker!.deploy as { replicas: number }).replicas).toBeGreaterThan(1);
    // Workers serve /healthz on HEALTH_PORT: the image's PORT, where its HEALTHCHECK asks.
    expect(worker?.environment?.HEALTH_PORT).toBe(/ENV [^\n]*PORT=(\d+)/.exec(dockerfile)?.[1]);
    expect(worker?.healthcheck).toBeUndefined();
    for (const service of [server, worker]) expect(service?.init).toBe(true);
  });

  const composeAvailable = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!composeAvailable)('is valid for docker compose (skipped without Docker Compose)', () => {
    const result = spawnSync('docker', ['compose', '-f', path.join(template, 'compose.yaml'), 'config', '--quiet'], {
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
  });
});

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, as the unprivileged node user', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^FROM \S+ AS build$/m);
    expect(dockerfile).toMatch(/^COPY --from=build /m);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('starts node on the built server, checks /healthz, and uses the Node major the floor names', () => {
    expect(dockerfile).toMatch(/^CMD \["node", "--max-semi-space-size=4", "dist\/server\.js"\]$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
    for (const from of dockerfile.match(/^FROM node:(\d+)/gm) ?? []) expect(from).toBe('FROM node:20');
  });

  it('leaves local builds, dependencies and secrets out of the build context', () => {
    const ignored = readFileSync(path.join(template, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.env']));
  });
});
