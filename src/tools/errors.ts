/** Raised when a manifest and the loaded classes disagree, before the server accepts traffic. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}
