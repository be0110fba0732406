/** Raised when a manifest and the loaded classes disagree, before the server accepts traffic. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

/**
 * Thrown by a `@Task` method to fail its task at once, without the retries its `retry` policy
 * would otherwise give it: for errors that another attempt cannot fix (bad input, a refusal).
 * The task fails with this error's message, as any thrown error does.
 *
 * @example
 * ```ts
 * if (response.status === 404) throw new NonRetryableError(`no such repository: ${repo}`);
 * ```
 */
export class NonRetryableError extends Error {
  override readonly name: string = 'NonRetryableError';
}
