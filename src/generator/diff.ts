/**
 * A short unified-style excerpt of the first difference between two texts, for `--check`
 * output. Not a full diff: enough to show what changed, without a dependency.
 */

export function diffExcerpt(before: string, after: string, maxChangedLines = 8, contextLines = 2): string {
  const oldLines = before.split('\n');
  const newLines = after.split('\n');
  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const removed = oldLines.slice(prefix, oldLines.length - suffix);
  const added = newLines.slice(prefix, newLines.length - suffix);
  const contextStart = Math.max(0, prefix - contextLines);
  const lines = [`@@ line ${prefix + 1} @@`];
  for (const line of oldLines.slice(contextStart, prefix)) lines.push(`  ${line}`);
  lines.push(...clip(removed, '- ', maxChangedLines), ...clip(added, '+ ', maxChangedLines));
  return lines.join('\n');
}

function clip(lines: readonly string[], marker: string, max: number): string[] {
  const shown = lines.slice(0, max).map((line) => `${marker}${line}`);
  if (lines.length > max) shown.push(`${marker}... ${lines.length - max} more line(s)`);
  return shown;
}
