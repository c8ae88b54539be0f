// A duel: the rankers to show for one query, and the token its outcome goes back with. A duel
// the service did not issue (the fallback served on a timeout or an error) has no token, and
// the SDK makes everything that would record it a local no-op.

import type { JoustError } from "./errors.js";
import type { DuelBody } from "./wire.js";

/** Why a fallback was served instead of a duel of the experiment. */
export type FallbackReason =
  /** No answer within the deadline. */
  | "deadline"
  /** No connection, or it broke. */
  | "connection"
  /** 503 (database unreachable) or another 5xx. */
  | "unavailable"
  /** A 4xx: unknown or paused experiment, key not allowed, ... */
  | "rejected";

export interface Duel {
  readonly experimentId: number;
  /** The rankers to interleave, in the order chosen (the fallback ranker(s) for a fallback). */
  readonly rankers: readonly string[];
  /** Signed token for the outcome; null for a fallback or a concluded experiment. */
  readonly token: string | null;
  readonly id: string | null;
  /** True when the outcome of this duel counts: the service issued it with a token. */
  readonly inExperiment: boolean;
  /** The experiment is concluded: `rankers` is its champion, nothing is recorded. */
  readonly concluded: boolean;
  readonly expiresAt: string | null;
  /** Set on a fallback duel only. */
  readonly fallbackReason?: FallbackReason;
  /** What went wrong, on a fallback duel. */
  readonly fallbackError?: JoustError;
}

export function duelFromBody(body: DuelBody): Duel {
  return {
    experimentId: body.experiment_id,
    rankers: body.rankers,
    token: body.duel_token,
    id: body.duel_id,
    inExperiment: body.duel_token !== null,
    concluded: body.concluded,
    expiresAt: body.expires_at,
  };
}

export function fallbackDuel(
  experimentId: number,
  fallback: string | readonly string[],
  error: JoustError,
): Duel {
  return {
    experimentId,
    rankers: typeof fallback === "string" ? [fallback] : fallback,
    token: null,
    id: null,
    inExperiment: false,
    concluded: false,
    expiresAt: null,
    fallbackReason: reasonOf(error),
    fallbackError: error,
  };
}

function reasonOf(error: JoustError): FallbackReason {
  if (error.code === "timeout") return "deadline";
  if (error.status === 0) return "connection";
  if (error.status >= 500) return "unavailable";
  return "rejected";
}
