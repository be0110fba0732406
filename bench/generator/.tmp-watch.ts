import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeSyntheticProject } from './synthetic-project.js';
const project = writeSyntheticProject(path.join(import.meta.dirname, '.tmp/project'));
const cpu = () => (process.cpuUsage().user + process.cpuUsage().system) / 1000;
const { ProjectSession } = await import('../../src/generator/reader/read-project.js');
const { emitTaskModule } = await import('../../src/generator/emit/module.js');
const session = ProjectSession.open({ tsconfig: project.tsconfig, exclude: [project.out] }) as InstanceType<typeof ProjectSession>;
session.read();
const original = readFileSync(project.sampleFile, 'utf8');
const rows: number[][] = [];
for (let i = 0; i < 8; i++) {
  writeFileSync(project.sampleFile, original.replace('/** Searches records. */', `/** Searches records (${i}). */`));
  const a = cpu();
  session.refresh([project.sampleFile]);
  const b = cpu();
  const { ir } = session.read();
  const c = cpu();
  emitTaskModule(ir, { projectDir: path.dirname(project.tsconfig), outFile: project.out });
  const d = cpu();
  rows.push([b - a, c - b, d - c, ...(globalThis as any).__T]);
}
writeFileSync(project.sampleFile, original);
console.log(rows.map((r) => r.map((x) => Math.round(x)).join('/')).join('  '));
