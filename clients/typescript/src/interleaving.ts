// The list shown for a duel, and the token its clicks go back with. For a duel the service did
// not issue, the list is the first ranker's own, made here without a request.

import type { Duel } from "./duel.js";
import type { InterleavingBody, ShownDocument } from "./wire.js";

export interface Interleaving {
  readonly experimentId: number;
  readonly duelId: string | null;
  /** The documents to show, in order, each with the ranker it counts for (if the method says). */
  readonly documents: readonly ShownDocument[];
  /** The shown document ids, in order. */
  readonly ids: readonly string[];
  /** Signed token for the clicks; null when nothing is recorded (fallback, concluded). */
  readonly token: string | null;
  /** The experiment's method; null for a list made locally. */
  readonly method: string | null;
  readonly inExperiment: boolean;
  readonly expiresAt: string | null;
  /** The position of the first document in the whole interleaving (0 for the first page). */
  readonly offset: number;
}

export function interleavingFromBody(body: InterleavingBody): Interleaving {
  return {
    experimentId: body.experiment_id,
    duelId: body.duel_id,
    documents: body.documents,
    ids: body.documents.map((document) => document.id),
    token: body.interleaving_token,
    method: body.method,
    inExperiment: true,
    expiresAt: body.expires_at,
    offset: body.offset,
  };
}

/** The list of a duel that records nothing: its first ranker's own results, as they are. */
export function localInterleaving(
  duel: Duel,
  lists: Readonly<Record<string, readonly string[]>>,
): Interleaving {
  const ranker = duel.rankers[0];
  // Duplicates count once, as the service's own interleaving does.
  const ids = [...new Set(ranker === undefined ? [] : (lists[ranker] ?? []))];
  return {
    experimentId: duel.experimentId,
    duelId: duel.id,
    documents: ids.map((id) => ({ id, ranker: ranker ?? null })),
    ids,
    token: null,
    method: null,
    inExperiment: false,
    expiresAt: null,
    offset: 0,
  };
}
