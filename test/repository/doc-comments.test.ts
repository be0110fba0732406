/**
 * Every public export explains itself in an editor hover: each entry point the package exports
 * is walked to the declarations behind its names (through re-exports and aliases), and each
 * declaration, every overload included, must carry a non-empty doc comment. The entry points
 * people start from also carry an `@example`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Node, Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The package's entry points, as `exports` names them (by the source condition). */
const entryPoints = Object.entries(
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).exports as Record<
    string,
    string | Record<string, string>
  >,
).flatMap(([subpath, target]) =>
  typeof target === 'object' && target['mcp-task-server-source']
    ? [{ subpath, file: path.join(repoRoot, target['mcp-task-server-source']) }]
    : [],
);

/** The symbols a newcomer meets first: their hover shows how to use them. */
const NEEDS_EXAMPLE = [
  'createTaskServer',
  'runTaskServer',
  'createTaskWorker',
  'Task',
  'NeedsInput',
  'Tool',
  'TaskContext',
  'connectTaskClient',
  'createTestHarness',
];

const project = new Project({
  tsConfigFilePath: path.join(repoRoot, 'tsconfig.json'),
  skipAddingFilesFromTsConfig: true,
  skipFileDependencyResolution: true,
});

type Docs = { text: string; tags: string[] };

/** The doc comments that belong to `node`, from the statement that carries them. */
function docsOf(node: Node): Docs[] {
  const holder = Node.isVariableDeclaration(node) ? node.getVariableStatement() : node;
  if (!holder || !Node.isJSDocable(holder)) return [];
  return holder.getJsDocs().map((doc) => ({
    text: `${doc.getDescription()}${doc
      .getTags()
      .map((tag) => tag.getCommentText() ?? '')
      .join('')}`.trim(),
    tags: doc.getTags().map((tag) => tag.getTagName()),
  }));
}

/** The declarations a reader hovers: each overload of a function, else the declaration itself. */
function documentedParts(node: Node): Node[] {
  if (Node.isFunctionDeclaration(node) && node.getOverloads().length > 0) return node.getOverloads();
  return [node];
}

const where = (node: Node) =>
  `${path.relative(repoRoot, node.getSourceFile().getFilePath())}:${node.getStartLineNumber()}`;

/** A re-export of another package's symbol is documented where this package exports it. */
function reExportDocs(entry: string, name: string): Docs[] {
  const file = project.getSourceFileOrThrow(entry);
  for (const declaration of file.getExportDeclarations()) {
    const specifier = declaration
      .getNamedExports()
      .find((each) => (each.getAliasNode() ?? each.getNameNode()).getText() === name);
    if (specifier) {
      // An export declaration takes no JSDoc node of its own: read the comment before it.
      return declaration
        .getLeadingCommentRanges()
        .map((range) => range.getText())
        .filter((text) => text.startsWith('/**'))
        .map((text) => ({
          text: text
            .replace(/^\/\*\*|\*\/$/g, '')
            .replace(/^\s*\*/gm, '')
            .trim(),
          tags: [],
        }));
    }
  }
  return [];
}

describe.each(entryPoints)('the public exports of $subpath', ({ file }) => {
  const source = project.addSourceFileAtPath(file);
  project.resolveSourceFileDependencies();
  const exports = [...source.getExportedDeclarations()].sort(([a], [b]) => a.localeCompare(b));

  it('exist', () => {
    expect(exports.length).toBeGreaterThan(0);
  });

  it('each have a doc comment on every declaration', () => {
    const missing: string[] = [];
    for (const [name, declarations] of exports) {
      for (const declaration of declarations) {
        const foreign = declaration.getSourceFile().isInNodeModules();
        const parts = foreign ? [source] : documentedParts(declaration);
        for (const part of parts) {
          const docs = foreign ? reExportDocs(file, name) : docsOf(part);
          if (!docs.some((doc) => doc.text.length > 0)) {
            missing.push(`${foreign ? path.relative(repoRoot, file) : where(part)} ${name}`);
          }
        }
      }
    }
    expect(missing, `exports without a doc comment:\n${missing.join('\n')}`).toEqual([]);
  });

  it('show an @example on the entry points people start from', () => {
    const missing = exports
      .filter(([name]) => NEEDS_EXAMPLE.includes(name))
      .flatMap(([name, declarations]) =>
        declarations
          .flatMap(documentedParts)
          .filter((part) => !docsOf(part).some((doc) => doc.tags.includes('example')))
          .map((part) => `${where(part)} ${name}`),
      );
    expect(missing, `entry points without an @example:\n${missing.join('\n')}`).toEqual([]);
  });
});

it('every symbol that needs an @example is exported somewhere', () => {
  const exported = new Set(
    entryPoints.flatMap(({ file }) => [...project.addSourceFileAtPath(file).getExportedDeclarations().keys()]),
  );
  expect(NEEDS_EXAMPLE.filter((name) => !exported.has(name))).toEqual([]);
});
