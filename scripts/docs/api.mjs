#!/usr/bin/env node
/**
 * Generates the API reference into `docs/api/` (Markdown for VitePress, plus the sidebar in
 * `docs/api/typedoc-sidebar.json`) from the package's public entry points. Run by
 * `npm run docs:api`, which `docs:build` and `docs:dev` call first; the output is not committed.
 *
 * TypeDoc needs the TypeScript compiler API, which TypeScript 7, the compiler the rest of the
 * repository uses, does not have. So this folder is a private workspace of its own whose
 * devDependencies are TypeDoc and TypeScript 5.9: npm installs both under
 * `scripts/docs/node_modules`, where TypeDoc finds 5.9 and nothing else does (the root's `tsc`
 * stays TypeScript 7). The check below fails the build if TypeDoc loaded any other version.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Application, OptionDefaults } from 'typedoc';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/**
 * The public entry points, as the package publishes them: every subpath of `exports` with a
 * source file (the `mcp-task-server-source` condition), named by the import path users write.
 * A new subpath export gets its own section of the reference with no change here.
 */
const packageJson = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
export const ENTRY_POINTS = Object.entries(packageJson.exports)
  .filter(([, target]) => typeof target === 'object' && target['mcp-task-server-source'])
  .map(([subpath, target]) => [
    subpath === '.' ? packageJson.name : `${packageJson.name}/${subpath.slice(2)}`,
    path.normalize(target['mcp-task-server-source']),
  ]);
if (ENTRY_POINTS.length === 0) {
  console.error('package.json exports no subpath with a source file');
  process.exit(1);
}

const out = path.join(repoRoot, 'docs/api');
rmSync(out, { recursive: true, force: true });

const app = await Application.bootstrapWithPlugins({
  entryPoints: ENTRY_POINTS.map(([, source]) => path.join(repoRoot, source)),
  tsconfig: path.join(repoRoot, 'docs/api.tsconfig.json'),
  plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
  out,
  docsRoot: path.join(repoRoot, 'docs'),
  name: 'API reference',
  readme: 'none',
  entryFileName: 'index.md',
  hidePageHeader: true,
  hideBreadcrumbs: true,
  // `npm run typecheck` checks the sources with TypeScript 7; TypeScript 5 infers a few of them
  // differently (implicit `any` in self-referencing initialisers), which does not change what is documented.
  skipErrorChecking: true,
  // Re-exports from dependencies (the `z` of zod that the client hands to generated code) are theirs to document.
  excludeExternals: true,
  // The generator's own marks on the decorator and type declarations.
  blockTags: [...OptionDefaults.blockTags, '@mcpTaskgen'],
  excludePrivate: true,
  excludeInternal: true,
  // Warnings about symbols without a doc comment belong to the doc-comment test, not to the site build.
  validation: { notExported: false, invalidLink: true, rewrittenLink: true, notDocumented: false },
  treatWarningsAsErrors: false,
  logLevel: 'Warn',
  // The reference lists the entry points in the order above, the root first.
  sortEntryPoints: false,
  sidebar: { autoConfiguration: true, format: 'vitepress', pretty: true, collapsed: true },
});

const version = app.getTypeScriptVersion();
if (!version.startsWith('5.')) {
  console.error(`The API reference must be built with TypeScript 5.x (typescript5), but loaded ${version}`);
  process.exit(1);
}

const project = await app.convert();
if (!project) {
  console.error('TypeDoc could not convert the entry points');
  process.exit(1);
}
// Name each module after the import path users write, not after its file (or its `@module` tag).
for (const child of project.children ?? []) {
  const file = child.sources?.[0]?.fullFileName;
  const entry = ENTRY_POINTS.find(([, source]) => file === path.join(repoRoot, source));
  if (!entry) {
    console.error(`The API reference has a module '${child.name}' (${file}) that no entry point names`);
    process.exit(1);
  }
  child.name = entry[0];
}
await app.generateOutputs(project);
if (app.logger.hasErrors()) process.exit(1);
console.log(`API reference: TypeScript ${version}, ${ENTRY_POINTS.length} entry points, written to docs/api`);
