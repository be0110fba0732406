/** Name conversions shared by the reader (tool names) and the emitters (identifiers). */

/** `buildReport` → `build_report`, `slowCompute2` → `slow_compute2`, `getHTTPStatus` → `get_http_status`. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** `build_report` → `BuildReport`, `files.read-all` → `FilesReadAll`. */
export function toPascalCase(name: string): string {
  const pascal = name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  // An identifier cannot start with a digit, and an empty name still needs an identifier.
  return /^[A-Za-z]/.test(pascal) ? pascal : `Tool${pascal}`;
}

/** Code-unit order: locale-independent, so output is the same on every machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
