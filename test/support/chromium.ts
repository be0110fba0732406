/**
 * Debian's Chromium for the browser tests (the dashboard, the documentation site). Like the
 * Redis tests: without it a suite is skipped with a notice, and in CI it fails.
 */
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function describeWithChromium(name: string, body: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`No Chromium at ${CHROMIUM}, and CI is set: install it (apt-get install -y chromium)`);
      });
    });
    return;
  }
  console.warn(`\n!! Skipping "${name}": no Chromium at ${CHROMIUM} (apt-get install -y chromium)\n`);
  describe.skip(name, body);
}
