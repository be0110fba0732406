/**
 * Where `mcp-taskgen` takes its settings from, as TypeScript tools do: an explicit `--config`
 * file, else `mcp-taskgen.config.json` in the working directory, else the `"mcp-taskgen"` field
 * of its package.json, else defaults. Flags override whatever was found. Paths in a config file
 * are relative to that file's directory.
 *
 *     { "project": "tsconfig.json", "out": "src/__generated__/tasks.generated.ts", "include": ["src/tools/**"],
 *       "client": "../caller/src/__generated__/app.client.ts" }
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const CONFIG_FILE = 'mcp-taskgen.config.json';
export const PACKAGE_FIELD = 'mcp-taskgen';

export interface TaskgenConfig {
  /** The project's tsconfig.json. */
  readonly project?: string;
  /** The module to generate. */
  readonly out?: string;
  /** Globs selecting which of the tsconfig's files are scanned for decorators; default: all. */
  readonly include?: readonly string[];
  /** Where to write the typed client for the tools (`--client`); default: no client. */
  readonly client?: string;
}

export interface LoadedConfig {
  /** Settings with paths made absolute. */
  readonly config: TaskgenConfig;
  /** Where they came from (`mcp-taskgen.config.json`, `package.json#mcp-taskgen`), for messages. */
  readonly source?: string;
}

const KEYS: readonly (keyof TaskgenConfig)[] = ['project', 'out', 'include', 'client'];
const PATH_KEYS = ['project', 'out', 'client'] as const;

/** The settings that apply in `cwd`, or a message saying what is wrong with them. */
export function loadConfig(cwd: string, explicit?: string): LoadedConfig | string {
  if (explicit !== undefined) {
    const file = path.resolve(cwd, explicit);
    if (!existsSync(file)) return `cannot find the config file ${explicit}`;
    return fromFile(file, (json) => json, file);
  }
  const configFile = path.join(cwd, CONFIG_FILE);
  if (existsSync(configFile)) return fromFile(configFile, (json) => json, CONFIG_FILE);
  const packageFile = path.join(cwd, 'package.json');
  if (existsSync(packageFile)) {
    const loaded = fromFile(
      packageFile,
      (json) => (isRecord(json) ? json[PACKAGE_FIELD] : undefined),
      `package.json#${PACKAGE_FIELD}`,
    );
    if (typeof loaded === 'string' || loaded.source !== undefined) return loaded;
  }
  return { config: {} };
}

function fromFile(file: string, select: (json: unknown) => unknown, label: string): LoadedConfig | string {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return `cannot read ${label}: ${(error as Error).message}`;
  }
  const raw = select(json);
  if (raw === undefined) return { config: {} };
  const problem = validate(raw);
  if (problem) return `${label}: ${problem}`;
  const settings = raw as TaskgenConfig;
  const dir = path.dirname(file);
  return {
    source: label,
    config: {
      ...(settings.project !== undefined ? { project: path.resolve(dir, settings.project) } : {}),
      ...(settings.out !== undefined ? { out: path.resolve(dir, settings.out) } : {}),
      ...(settings.client !== undefined ? { client: path.resolve(dir, settings.client) } : {}),
      ...(settings.include !== undefined
        ? { include: settings.include.map((glob) => toPosix(path.resolve(dir, glob))) }
        : {}),
    },
  };
}

function validate(raw: unknown): string | undefined {
  if (!isRecord(raw)) return 'settings must be an object';
  for (const key of Object.keys(raw)) {
    if (!(KEYS as readonly string[]).includes(key)) return `unknown setting '${key}' (known: ${KEYS.join(', ')})`;
  }
  for (const key of PATH_KEYS) {
    const setting = raw[key];
    if (setting !== undefined && (typeof setting !== 'string' || setting === ''))
      return `'${key}' must be a path (a non-empty string), not ${excerpt(setting)}`;
  }
  const include = raw.include;
  if (
    include !== undefined &&
    (!Array.isArray(include) || !include.every((glob) => typeof glob === 'string' && glob !== ''))
  )
    return "'include' must be an array of globs";
  return undefined;
}

/**
 * A matcher for absolute file paths against absolute POSIX globs: `**` spans directories, `*` and
 * `?` stay within one, a glob naming a directory matches everything below it.
 */
export function globMatcher(globs: readonly string[]): (file: string) => boolean {
  const patterns = globs.map((glob) => globToRegExp(glob));
  return (file) => {
    const posix = toPosix(file);
    return patterns.some((pattern) => pattern.test(posix));
  };
}

export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob.charAt(index);
    if (char === '*' && glob.charAt(index + 1) === '*') {
      const slashFollows = glob.charAt(index + 2) === '/';
      source += slashFollows ? '(?:.*/)?' : '.*';
      index += slashFollows ? 2 : 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // What is below a match matches too, so a glob naming a directory selects the files inside it.
  return new RegExp(`^${source}(?:/.*)?$`);
}

/** A setting's JSON for a message, cut short: a config file can hold anything. */
function excerpt(setting: unknown): string {
  const json = JSON.stringify(setting) ?? String(setting);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function toPosix(filePath: string): string {
  return filePath.split(path.sep).join('/');
}
