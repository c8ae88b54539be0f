// When to try again after a failure that may pass (a 503, a lost connection): exponential
// backoff with full jitter, so many clients that failed together do not come back together,
// but never sooner than the service's Retry-After.

export interface BackoffOptions {
  /** Delay cap of the first retry, in ms. */
  baseDelayMs: number;
  /** The longest wait between two tries, in ms. */
  maxDelayMs: number;
}

export const defaultBackoff: BackoffOptions = { baseDelayMs: 100, maxDelayMs: 10_000 };

/** The wait before retry number `attempt` (0 for the first retry). */
export function backoffDelayMs(
  attempt: number,
  options: BackoffOptions,
  retryAfterMs?: number,
): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.min(attempt, 30));
  const jittered = Math.random() * cap;
  return retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
}
