/**
 * The per-test Redis scope the BullMQ tests share: a fresh key prefix for every test, and,
 * after it, whatever the test started closed (the last started first) before every key under
 * the prefix is deleted. Call `useRedisScope()` once in a `describe`; read `scope.prefix`
 * inside a test or hook (it changes test by test).
 */
import { afterEach, beforeEach } from 'vitest';
import { deleteKeysUnder, randomPrefix } from '../bullmq/support.js';

/** What a test of a BullMQ `describe` reads its prefix from and hands what it starts to. */
export interface RedisScope {
  /** This test's key prefix (on the shared Redis, so never one another test uses). */
  readonly prefix: string;
  /** Runs `close` after the test, before its keys are deleted; the last added runs first. */
  onClose(close: () => Promise<unknown>): void;
}

/** Registers the scope's hooks in the current `describe` and returns it. */
export function useRedisScope(): RedisScope {
  let prefix = '';
  let closers: (() => Promise<unknown>)[] = [];
  beforeEach(() => {
    prefix = randomPrefix();
    closers = [];
  });
  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    await deleteKeysUnder(prefix);
  });
  return {
    get prefix() {
      return prefix;
    },
    onClose: (close) => {
      closers.push(close);
    },
  };
}
