/**
 * One cold generator run in a fresh process, for run.ts: prints how long loading the generator
 * (ts-morph and its bundled TypeScript) and `generate()` took, as JSON.
 *
 *     node --conditions=mcp-task-server-source --import tsx bench/generator/cold-run.ts <tsconfig> <out>
 */
const [tsconfig, out] = process.argv.slice(2);
if (!tsconfig || !out) throw new Error('usage: cold-run.ts <tsconfig> <out>');
const started = performance.now();
const { generate, hasErrors } = await import('../../src/generator/index.js');
const loaded = performance.now();
const result = generate({ tsconfig, out });
const finished = performance.now();
if (hasErrors(result.diagnostics))
  throw new Error(`the synthetic project has errors: ${result.diagnostics[0]?.message}`);
process.stdout.write(
  `${JSON.stringify({ importMs: loaded - started, generateMs: finished - loaded, tools: result.ir.tools.length })}\n`,
);
