// Request bodies from the SDK's camelCase arguments, checked where a mistake would otherwise
// only show up as a 422 much later (in a buffer, far from the call that made it).

import type { ClickSpec, ClicksInput, OutcomeInput, OutcomeSpec } from "./wire.js";

export function outcomeBody(duelToken: string, outcome: OutcomeSpec): OutcomeInput {
  if (outcome.winner !== undefined) return { duel_token: duelToken, winner: outcome.winner };
  if (outcome.credits !== undefined) return { duel_token: duelToken, credits: outcome.credits };
  if (outcome.ordering !== undefined) return { duel_token: duelToken, ordering: outcome.ordering };
  throw new TypeError("an outcome needs one of winner, credits or ordering");
}

export function clicksBody(interleavingToken: string, clicks: ClickSpec): ClicksInput {
  if (clicks.clicked !== undefined) {
    return { interleaving_token: interleavingToken, clicks: clicks.clicked };
  }
  if (clicks.clickPositions !== undefined) {
    return { interleaving_token: interleavingToken, click_positions: clicks.clickPositions };
  }
  throw new TypeError("clicks need one of clicked or clickPositions");
}
