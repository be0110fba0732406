/** The package manager running us, from `npm_config_user_agent` (`pnpm/9.1.0 npm/? node/v20.12.0 linux x64`). */

export type PackageManager = 'npm' | 'pnpm' | 'yarn' | 'bun';

export function detectPackageManager(userAgent: string | undefined): PackageManager {
  const name = userAgent?.split(' ')[0]?.split('/')[0];
  return name === 'pnpm' || name === 'yarn' || name === 'bun' ? name : 'npm';
}

/** The commands to run after scaffolding into `directory` (relative to where the user is). */
export function nextSteps(manager: PackageManager, directory: string): string[] {
  const steps = directory === '.' ? [] : [`cd ${quoteIfNeeded(directory)}`];
  steps.push(manager === 'yarn' ? 'yarn' : `${manager} install`);
  steps.push(manager === 'npm' || manager === 'bun' ? `${manager} run dev` : `${manager} dev`);
  return steps;
}

function quoteIfNeeded(directory: string): string {
  return /^[\w\-./@~]+$/.test(directory) ? directory : `"${directory}"`;
}
