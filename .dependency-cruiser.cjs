/**
 * The import rules `npm run lint` enforces (dependency-cruiser): no import cycle anywhere, and
 * the one-way layers of docs/design/layers.md. `test/repository/layers.test.ts` proves that each
 * rule still fires on a forbidden import, so a renamed folder cannot make a rule match nothing.
 *
 * Type-only imports count like any other: a layer that may not see another may not name its types.
 */

/** An npm package by name, whether it resolved into node_modules or not. */
const npm = (...names) => `(^|node_modules/)(${names.map((name) => name.replace('/', '\\/')).join('|')})(/|$)`;

/**
 * Each folder of `src/` (and the CLI folders) with the repository folders it may import, beside
 * its own. Anything under `src/` or `cli/` not listed is forbidden to it. `may` entries are
 * folders (ending in `/`) or single files.
 */
const LAYERS = [
  {
    name: 'jsonrpc',
    path: 'src/jsonrpc/',
    may: [],
    why: 'the JSON-RPC error class and code table: a leaf every layer that answers or reads errors shares',
  },
  { name: 'decorators', path: 'src/decorators/', may: [], why: 'decorators are inert marks' },
  {
    name: 'engine',
    path: 'src/engine/',
    may: ['src/jsonrpc/'],
    why: 'the engine knows no wire format, transport, runtime or observer backend',
  },
  {
    name: 'observe',
    path: 'src/observe/',
    may: ['src/jsonrpc/', 'src/engine/'],
    why: 'observers hear the facts the engine emits',
  },
  {
    name: 'tools',
    path: 'src/tools/',
    may: ['src/jsonrpc/', 'src/decorators/', 'src/engine/', 'src/observe/logger.ts', 'src/observe/tracing.ts'],
    why: 'tools run methods; of observe they see only the Logger contract and the no-op tracing API, never a backend, the host or a wire format',
  },
  {
    name: 'runtime-memory',
    path: 'src/runtime/memory/',
    may: ['src/jsonrpc/', 'src/engine/', 'src/observe/'],
    why: 'a runtime implements the engine contract and knows no other runtime, wire format or host',
  },
  {
    name: 'runtime-bullmq',
    path: 'src/runtime/bullmq/',
    may: ['src/jsonrpc/', 'src/engine/', 'src/observe/'],
    why: 'a runtime implements the engine contract and knows no other runtime, wire format or host',
  },
  {
    name: 'protocol',
    path: 'src/protocol/',
    may: ['src/jsonrpc/', 'src/engine/', 'src/tools/'],
    why: 'adapters translate wire and engine; they never see a runtime (Redis) or the host',
  },
  {
    name: 'http',
    path: 'src/http/',
    may: ['src/jsonrpc/', 'src/protocol/rpc-error.ts'],
    why: 'HTTP plumbing shared by host and dashboard knows requests and responses, not tasks',
  },
  {
    name: 'dashboard',
    path: 'src/dashboard/',
    may: ['src/jsonrpc/', 'src/engine/', 'src/http/', 'src/protocol/'],
    why: 'the dashboard reads through the engine as a client would; the host mounts it, not the reverse',
  },
  {
    name: 'host',
    path: 'src/host/',
    may: [
      'src/jsonrpc/',
      'src/decorators/',
      'src/engine/',
      'src/observe/',
      'src/tools/',
      'src/runtime/memory/',
      'src/runtime/bullmq/',
      'src/protocol/',
      'src/http/',
      'src/dashboard/',
    ],
    why: 'the host composes the layers below it',
  },
  {
    name: 'client',
    path: 'src/client/',
    may: ['src/jsonrpc/'],
    why: 'the client knows no server code: it speaks only the wire',
  },
  {
    name: 'testing',
    path: 'src/testing/',
    may: [
      'src/jsonrpc/',
      'src/client/',
      'src/engine/',
      'src/host/',
      'src/observe/',
      'src/tools/',
      'src/runtime/memory/',
    ],
    why: 'the test kit composes a host on the memory runtime with a client',
  },
  {
    name: 'manifest-entry',
    path: 'src/manifest/',
    may: ['src/tools/'],
    why: 'the entry point generated code imports: the manifest format, nothing that serves',
  },
  { name: 'generator', path: 'src/generator/', may: [], why: 'the generator reads source and writes text' },
  {
    name: 'root-entry',
    path: 'src/index.ts',
    may: [
      'src/jsonrpc/',
      'src/decorators/',
      'src/engine/',
      'src/observe/',
      'src/tools/',
      'src/runtime/memory/',
      'src/runtime/bullmq/',
      'src/protocol/',
      'src/http/',
      'src/host/',
    ],
    why: 'the server entry point; the client and the test kit are entry points of their own',
  },
  {
    name: 'cli-task',
    path: 'cli/task/',
    may: ['src/client/'],
    why: 'mcp-task is built on the client alone, with no protocol logic of its own',
  },
  { name: 'cli-task-bin', path: 'cli/mcp-task.ts', may: ['cli/task/'], why: 'the bin only wires the process' },
  {
    name: 'cli-taskgen-bin',
    path: 'cli/mcp-taskgen.ts',
    may: ['src/generator/'],
    why: 'the bin only wires the process',
  },
  {
    name: 'scaffolder',
    path: 'cli/create-mcp-task-server/',
    may: [],
    why: 'the scaffolder is a package of its own and ships without this one',
  },
];

/** npm packages a layer must not import, by layer name. */
const FORBIDDEN_PACKAGES = {
  tools: {
    packages: ['@modelcontextprotocol/server', 'bullmq', 'ioredis', 'pino', 'pino-pretty', 'prom-client'],
    why: 'tools know no transport, no Redis and no observer backend',
  },
  protocol: { packages: ['bullmq', 'ioredis'], why: 'adapters never see Redis' },
  'runtime-memory': { packages: ['bullmq', 'ioredis'], why: 'the memory runtime runs without Redis' },
  client: {
    packages: ['@modelcontextprotocol/server', 'bullmq', 'ioredis', 'pino', 'prom-client'],
    why: 'the client knows no server, runtime or observer backend',
  },
};

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const matches = (entry) => (entry.endsWith('/') ? `^${escapeRegExp(entry)}` : `^${escapeRegExp(entry)}$`);
const covers = (entry, path) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry);

/** Refuses a table whose folders could import each other in a circle (then folder cycles could pass). */
function assertOneWay(layers) {
  const layerOf = (path) => layers.find((layer) => covers(layer.path, path) || covers(path, layer.path));
  const edges = new Map(
    layers.map((layer) => [layer.name, layer.may.map((entry) => layerOf(entry)?.name).filter(Boolean)]),
  );
  const state = new Map();
  const visit = (name, trail) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'open') throw new Error(`layer table has a circle: ${[...trail, name].join(' → ')}`);
    state.set(name, 'open');
    for (const next of edges.get(name) ?? []) visit(next, [...trail, name]);
    state.set(name, 'done');
  };
  for (const layer of layers) visit(layer.name, []);
}

assertOneWay(LAYERS);

const layerRules = LAYERS.map((layer) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.path} may import only ${layer.may.length ? layer.may.join(', ') : 'itself'}: ${layer.why}`,
  severity: 'error',
  from: { path: matches(layer.path) },
  to: { path: '^(src|cli)/', pathNot: [matches(layer.path), ...layer.may.map(matches)] },
}));

const packageRules = Object.entries(FORBIDDEN_PACKAGES).map(([name, rule]) => {
  const layer = LAYERS.find((candidate) => candidate.name === name);
  return {
    name: `packages-${name}`,
    comment: `${layer.path} imports none of ${rule.packages.join(', ')}: ${rule.why}`,
    severity: 'error',
    from: { path: matches(layer.path) },
    to: { path: npm(...rule.packages) },
  };
});

/** Anything that is not a file of the repository or a Node built-in: npm packages, resolved or not. */
const PACKAGE_TYPES = [
  'npm',
  'npm-dev',
  'npm-optional',
  'npm-peer',
  'npm-bundled',
  'npm-no-pkg',
  'npm-unknown',
  'unknown',
];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module may reach itself through its imports (type-only and dynamic imports included).',
      severity: 'error',
      from: { pathNot: '^templates/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-templates',
      comment:
        'A template may close a circle only with a dynamic import: the one-file template defines its class, ' +
        'then loads the generated manifest that refers to it.',
      severity: 'error',
      from: { path: '^templates/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['dynamic-import'] } },
    },
    {
      name: 'no-circular-folders',
      comment: 'No folder of src/ or cli/ may reach itself through the imports of its modules.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src|cli)/' },
      to: { circular: true },
    },
    {
      name: 'layer-unlisted',
      comment: 'Every folder of src/ belongs to a layer: add a new one to LAYERS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((layer) => matches(layer.path)) },
      to: {},
    },
    {
      name: 'packages-engine',
      comment:
        'src/engine/ imports no npm package, only Node built-ins: the engine is SDK-free and knows no runtime or observer backend',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { dependencyTypes: PACKAGE_TYPES },
    },
    ...layerRules,
    ...packageRules,
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^test/generator/fixtures/', '(^|/)\\.tmp'] },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: ['.ts', '.mts', '.js', '.mjs'],
      conditionNames: ['mcp-task-server-source', 'import', 'node', 'default'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
