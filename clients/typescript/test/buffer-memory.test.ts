// The buffer's memory is bounded: with the service down, add() refuses beyond maxPending
// (counted as dropped) and never blocks; close() with a timeout gives up; a buffer alone does
// not keep a Node process alive.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { JoustClient, type Duel, type Interleaving } from "../src/index.ts";
import { freePort } from "./support/joust-server.ts";

/** A duel as the service would issue it (the token is not checked: nothing answers). */
function duel(i: number): Duel {
  return {
    experimentId: 1,
    rankers: ["a", "b"],
    token: `token-${i}`,
    id: `duel-${i}`,
    inExperiment: true,
    concluded: false,
    expiresAt: null,
  };
}

describe("outcome buffer memory bound", () => {
  it("refuses items beyond maxPending while the service is down, without blocking", async () => {
    const client = new JoustClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    // The first fetch of a process loads Node's HTTP client: not what this test times.
    await assert.rejects(client.keyScope());
    const buffer = client.outcomeBuffer({ maxPending: 10, maxBatch: 4, flushIntervalMs: 5 });
    const start = performance.now();
    const accepted: boolean[] = [];
    for (let i = 0; i < 1_000; i++) accepted.push(buffer.addOutcome(duel(i), { winner: "a" }));
    const shown: Interleaving = {
      experimentId: 1,
      duelId: "x",
      documents: [],
      ids: [],
      token: "interleaving-token",
      method: "team_draft",
      inExperiment: true,
      expiresAt: null,
      offset: 0,
    };
    accepted.push(buffer.addClicks(shown, { clickPositions: [0] }));
    assert.ok(performance.now() - start < 100, "adding blocked");
    assert.equal(accepted.filter(Boolean).length, 10);
    assert.deepEqual(accepted.slice(0, 10), Array<boolean>(10).fill(true));
    assert.equal(buffer.pending, 10);
    assert.equal(buffer.dropped, 991);

    // Failing deliveries keep the items: they leave only when the service answers for them.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(buffer.pending, 10);
    assert.ok(buffer.stats.retries > 0);

    const closing = performance.now();
    const stats = await buffer.close({ timeoutMs: 200 });
    assert.ok(performance.now() - closing < 1_000, "close did not give up in time");
    assert.equal(stats.pending, 10);
    assert.equal(stats.recorded, 0);
    assert.equal(
      buffer.addOutcome(duel(0), { winner: "a" }),
      false,
      "a closed buffer took an item",
    );
    assert.equal(buffer.dropped, 992);
  });

  it("does not keep the process alive with items pending", () => {
    const script = join(
      dirname(fileURLToPath(import.meta.url)),
      "fixtures/pending-buffer-exits.ts",
    );
    const start = performance.now();
    const run = spawnSync(process.execPath, ["--import", "tsx", script], {
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /pending 3/);
    // The buffer's retry waits grow to seconds; an exit this soon means none of them held on.
    assert.ok(performance.now() - start < 8_000);
  });
});
