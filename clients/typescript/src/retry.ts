// Retrying calls that are safe to send again: the service records outcomes and clicks exactly
// once (a repeat answers "duplicate"), interleavings are deterministic, and reads change nothing.

import { backoffDelayMs, type BackoffOptions } from "./backoff.js";
import { JoustError, UnavailableError } from "./errors.js";
import { Sleep } from "./timers.js";

export interface RetryOptions extends BackoffOptions {
  /** Tries in all, the first included; 1 turns retrying off. */
  attempts: number;
}

export const defaultRetry: RetryOptions = { attempts: 3, baseDelayMs: 50, maxDelayMs: 2_000 };

export async function withRetry<T>(options: RetryOptions, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof JoustError) || !error.retryable || attempt + 1 >= options.attempts) {
        throw error;
      }
      const retryAfter = error instanceof UnavailableError ? error.retryAfterMs : undefined;
      await new Sleep(backoffDelayMs(attempt, options, retryAfter), true).done;
    }
  }
}
