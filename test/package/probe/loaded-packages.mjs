// The packages this process has loaded so far: every ES module the loader hooks recorded, and
// every CommonJS module in require's cache (those `require`d by other CommonJS modules never
// pass the hooks). A package is named by the last node_modules folder in its path.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PACKAGE = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//;

export function loadedPackages() {
  const files = [
    ...readFileSync(process.env.MODULE_LOG, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'))
      .map((url) => fileURLToPath(url)),
    ...Object.keys(createRequire(import.meta.url).cache),
  ];
  const names = new Set();
  for (const file of files) {
    const match = PACKAGE.exec(file.split('\\').join('/'));
    if (match) names.add(match[1]);
  }
  return [...names].sort();
}
