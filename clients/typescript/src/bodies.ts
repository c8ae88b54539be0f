// Request bodies from the SDK's camelCase arguments, checked where a mistake would otherwise
// only show up as a 422 much later (in a buffer, far from the call that made it).

import type { ClickSpec, ClicksInput, OutcomeInput, OutcomeSpec } from "./wire.js";

export function outcomeBody(duelToken: string, outcome: OutcomeSpec): OutcomeInput {
  // Loosened: a caller from plain JavaScript may have passed none of the three.
  const given: Partial<Record<keyof OutcomeSpec, unknown>> = outcome;
  if (outcome.winner !== undefined) return { duel_token: duelToken, winner: outcome.winner };
  if (outcome.credits !== undefined) return { duel_token: duelToken, credits: outcome.credits };
  if (given.ordering !== undefined) {
    // The service refuses a whole batch over one empty tied group: refuse it here, at the call.
    if (outcome.ordering.some((place) => typeof place !== "string" && place.length === 0)) {
      throw new TypeError("an ordering's tied group names one or more rankers");
    }
    return { duel_token: duelToken, ordering: outcome.ordering };
  }
  throw new TypeError("an outcome needs one of winner, credits or ordering");
}

export function clicksBody(interleavingToken: string, clicks: ClickSpec): ClicksInput {
  const given: Partial<Record<keyof ClickSpec, unknown>> = clicks;
  if (clicks.clicked !== undefined) {
    return { interleaving_token: interleavingToken, clicks: clicks.clicked };
  }
  if (given.clickPositions !== undefined) {
    return { interleaving_token: interleavingToken, click_positions: clicks.clickPositions };
  }
  throw new TypeError("clicks need one of clicked or clickPositions");
}
