// The buffer through an outage: the server is stopped (SIGTERM) while outcomes flow and some are
// added while it is down, then restarted on the same data dir and port. After close(), every
// outcome is counted exactly once: none lost, none twice.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";

import { JoustClient, type Duel } from "../src/index.ts";
import {
  freePort,
  freshDataDir,
  removeDataDir,
  startJoust,
  type JoustServer,
} from "./support/joust-server.ts";
import { eventually } from "./support/wait.ts";

const total = 2_000;

describe("outcome buffer across a server restart", () => {
  const dataDir = freshDataDir();
  let server: JoustServer | undefined;

  after(async () => {
    await server?.stop();
    removeDataDir(dataDir);
  });

  it("delivers every outcome exactly once", async () => {
    const port = await freePort();
    server = await startJoust({ dataDir, port });
    const client = new JoustClient({ baseUrl: server.baseUrl, timeoutMs: 2_000 });
    const experiment = await client.createExperiment({
      name: "restart",
      rankers: ["bm25", "bert", "colbert"],
    });
    // Duels are issued from memory; take them all while the server is up.
    const duels: Duel[] = [];
    while (duels.length < total) {
      const wave = Array.from({ length: Math.min(50, total - duels.length) }, () =>
        client.duel(experiment.id),
      );
      duels.push(...(await Promise.all(wave)));
    }

    const buffer = client.outcomeBuffer({
      maxBatch: 150,
      flushIntervalMs: 20,
      backoff: { baseDelayMs: 50, maxDelayMs: 400 },
    });
    const winnerOf = (duel: Duel, i: number): string =>
      i % 5 === 0 ? "tie" : (duel.rankers[i % 2] ?? "tie");

    const beforeStop = total / 2;
    for (let i = 0; i < beforeStop; i++) {
      assert.ok(buffer.addOutcome(duels[i] as Duel, { winner: winnerOf(duels[i] as Duel, i) }));
      // Let batches go out while outcomes keep coming, so the stop falls mid-stream.
      if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await server.stop();
    const whileDown = buffer.stats;
    for (let i = beforeStop; i < total; i++) {
      assert.ok(buffer.addOutcome(duels[i] as Duel, { winner: winnerOf(duels[i] as Duel, i) }));
    }
    assert.ok(buffer.pending >= total - beforeStop, `pending ${buffer.pending} while down`);
    // Let it fail against the stopped server for a while before the restart.
    await new Promise((resolve) => setTimeout(resolve, 300));
    server = await startJoust({ dataDir, port });

    const stats = await buffer.close();
    assert.equal(stats.pending, 0);
    assert.equal(stats.dropped, 0);
    assert.equal(stats.rejected, 0);
    assert.ok(stats.retries > 0, "the outage was never seen");
    // A batch whose answer was lost in the stop comes back as duplicates: still one count each.
    assert.equal(stats.recorded + stats.duplicates, total);
    assert.ok(whileDown.recorded > 0, "nothing was delivered before the stop");

    const counted = await eventually(
      () => client.experiment(experiment.id),
      (e) => e.outcomes_applied + e.ties_recorded >= total,
    );
    // Counts settle in the background: read again a little later, to see nothing arrives twice.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const settled = await client.experiment(experiment.id);
    assert.equal(counted.outcomes_applied + counted.ties_recorded, total);
    assert.equal(settled.outcomes_applied + settled.ties_recorded, total);
  });
});
