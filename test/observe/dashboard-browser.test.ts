/**
 * The task dashboard in a real browser: Playwright (playwright-core) driving Debian's Chromium.
 * The page shows the caller's running task and not another principal's, its progress moves
 * without a reload, a question is answered through the form generated from its schema and the
 * task completes, and a cancel works; a task's timeline shows its policies (priority, a repeated
 * idempotent create, a timed-out attempt and the retry waits). A screenshot is kept in
 * `.tmp/artifacts/`.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectV1, pollUntil, type RunningServer, startServer } from '../e2e/support.js';
import { CHROMIUM, describeWithChromium } from '../support/chromium.js';
import { OpsTools, opsManifest, PolicyTools, policyManifest, tokenAuth } from './ops-app.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const artifacts = path.join(repoRoot, '.tmp', 'artifacts');

async function startTask(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

describeWithChromium('the task dashboard in headless Chromium', () => {
  let running: RunningServer;
  let ann: Client;
  let bob: Client;
  let browser: Browser;
  let page: Page;
  let crawl: string;
  let publish: string;
  let bobsTask: string;

  beforeAll(async () => {
    running = await startServer({
      manifest: opsManifest,
      instances: [new OpsTools()],
      http: { auth: tokenAuth({ 'token-ann': 'ann', 'token-bob': 'bob' }) },
      dashboard: true,
    });
    ann = await connectV1(running.url, { token: 'token-ann' });
    bob = await connectV1(running.url, { token: 'token-bob' });
    bobsTask = await startTask(bob, 'crawl', { pages: 1000, pauseMs: 300 });
    crawl = await startTask(ann, 'crawl', { pages: 1000, pauseMs: 300 });
    publish = await startTask(ann, 'publish');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled([ann?.close(), bob?.close()]);
    await running?.close();
  });

  const row = (taskId: string) => page.locator(`tr[data-task-id="${taskId}"]`);

  it("shows the caller's running task, and not another principal's", async () => {
    await page.goto(`${new URL(running.url).origin}/dashboard#token=token-ann`);
    await row(crawl).waitFor();
    await expect.poll(() => row(crawl).locator('.status').textContent()).toBe('working');
    expect(await row(bobsTask).count()).toBe(0);
    expect(await page.locator('#who').textContent()).toBe('signed in as sub:ann');
    // The token left the address bar (and so the history) at once.
    expect(page.url()).not.toContain('token');
  });

  it('updates the progress without a reload', async () => {
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    const message = () => row(crawl).locator('.progress .message').textContent();
    await expect.poll(message, { timeout: 10_000 }).toMatch(/^page \d+ of 1000$/);
    const first = await message();
    await expect.poll(message, { timeout: 10_000 }).not.toBe(first);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  it('answers a question through the form made from its schema, and the task completes', async () => {
    await row(publish).click();
    const form = page.locator('form[data-question="approval"]');
    await form.waitFor();
    expect(await form.locator('strong').textContent()).toBe('Publish the report?');
    await form.locator('input[name="approve"]').check();
    await form.locator('input[name="note"]').fill('from the browser');
    await mkdir(artifacts, { recursive: true });
    await page.screenshot({ path: path.join(artifacts, 'dashboard.png') });
    if (process.env.UPDATE_DOCS_SCREENSHOT) {
      await copyFile(path.join(artifacts, 'dashboard.png'), path.join(repoRoot, 'docs', 'dashboard.png'));
    }
    await form.locator('button[type="submit"]').click();
    await expect
      .poll(() => page.locator('#detail .result').textContent(), { timeout: 10_000 })
      .toBe('published: from the browser');
    await expect.poll(() => row(publish).locator('.status').textContent()).toBe('completed');
    expect((await ann.experimental.tasks.getTask(publish)).status).toBe('completed');
  });

  it('cancels a running task', async () => {
    await row(crawl).click();
    await page.locator('#cancel').click();
    await expect.poll(() => row(crawl).locator('.status').textContent(), { timeout: 10_000 }).toBe('cancelled');
    await pollUntil(
      () => ann.experimental.tasks.getTask(crawl),
      (task) => task.status === 'cancelled',
    );
    expect((await bob.experimental.tasks.getTask(bobsTask)).status).toBe('working');
  });

  it('filters by status', async () => {
    await page.locator('#filter-status').selectOption('completed');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await row(publish).count()).toBe(1);
  });

  it("shows a task's policies on its timeline, and not another principal's task", async () => {
    const policies = await startServer({
      manifest: policyManifest,
      instances: [new PolicyTools()],
      http: { auth: tokenAuth({ 'token-ann': 'ann', 'token-bob': 'bob' }) },
      dashboard: true,
    });
    const [annPolicies, bobPolicies] = await Promise.all([
      connectV1(policies.url, { token: 'token-ann' }),
      connectV1(policies.url, { token: 'token-bob' }),
    ]);
    try {
      const lookup = await startTask(annPolicies, 'lookup', { term: 'otter' });
      expect(await startTask(annPolicies, 'lookup', { term: 'otter' })).toBe(lookup);
      const bobsLookup = await startTask(bobPolicies, 'lookup', { term: 'otter' });
      const flaky = await startTask(annPolicies, 'flaky', { label: 'browser' });
      await page.goto(`${new URL(policies.url).origin}/dashboard#token=token-ann`);
      await row(lookup).click();
      const entry = (kind: string) => page.locator(`#detail li[data-kind="${kind}"]`);
      await entry('idempotent_hit').first().waitFor();
      expect(await page.locator('#detail .priority').textContent()).toBe('priority 7 (lower runs first)');
      expect(await entry('created').textContent()).toContain('created (priority 7, ');
      expect(await row(bobsLookup).count()).toBe(0);

      await row(flaky).click();
      await expect.poll(() => entry('result').count(), { timeout: 15_000 }).toBe(1);
      expect(await entry('timeout').textContent()).toContain('attempt 1 of 3 timed out after 300 ms');
      expect(await entry('retry').allTextContents()).toEqual([
        expect.stringContaining('attempt 2 of 3 in 50 ms: timed out after 300 ms'),
        expect.stringContaining('attempt 3 of 3 in 50 ms: ECONNRESET'),
      ]);
    } finally {
      await Promise.allSettled([annPolicies.close(), bobPolicies.close()]);
      await policies.close();
    }
  }, 30_000);
});
