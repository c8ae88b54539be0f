// A duel answers within its deadline whatever the service does: stalls (before or during the
// answer), refused connections, 503s and 4xx all resolve to the fallback, never reject.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { JoustClient, TimeoutError, type Duel } from "../src/index.ts";
import { freePort, removeDataDir, startJoust, type JoustServer } from "./support/joust-server.ts";
import { startStallProxy, type ProxyMode, type StallProxy } from "./support/stall-proxy.ts";

const deadlineMs = 100;
// Room for timer and event-loop jitter on a busy CI machine; far below any stall.
const slackMs = 60;

describe("duel deadline and fallback", () => {
  let server: JoustServer;
  const proxies: StallProxy[] = [];
  let direct: JoustClient;
  let experimentId: number;

  /** A client whose every request meets the service in this mode. */
  async function clientBehind(mode: ProxyMode): Promise<[JoustClient, StallProxy]> {
    const proxy = await startStallProxy({ port: server.port }, mode);
    proxies.push(proxy);
    return [new JoustClient({ baseUrl: proxy.baseUrl }), proxy];
  }

  before(async () => {
    server = await startJoust();
    direct = new JoustClient({ baseUrl: server.baseUrl });
    const experiment = await direct.createExperiment({
      name: "deadline",
      rankers: ["bm25", "bert"],
    });
    experimentId = experiment.id;
  });

  after(async () => {
    for (const proxy of proxies) await proxy.close();
    await server.stop();
    removeDataDir(server.dataDir);
  });

  async function timedDuel(c: JoustClient, id = experimentId): Promise<[Duel, number]> {
    const start = performance.now();
    const duel = await c.duel(id, { deadlineMs, fallback: "bm25" });
    return [duel, performance.now() - start];
  }

  it("serves the experiment's duel when the service answers in time", async () => {
    const [client] = await clientBehind("forward");
    const [duel] = await timedDuel(client);
    assert.equal(duel.inExperiment, true);
    assert.equal(duel.fallbackReason, undefined);
    assert.equal(duel.rankers.length, 2);
    assert.equal(typeof duel.token, "string");
  });

  it("falls back within the deadline when the service holds the request", async () => {
    const [client] = await clientBehind("hold");
    const [duel, elapsed] = await timedDuel(client);
    assert.equal(duel.inExperiment, false);
    assert.equal(duel.fallbackReason, "deadline");
    assert.deepEqual(duel.rankers, ["bm25"]);
    assert.equal(duel.token, null);
    assert.ok(
      elapsed >= deadlineMs - 5,
      `fell back after ${elapsed.toFixed(1)} ms, before the deadline`,
    );
    assert.ok(elapsed < deadlineMs + slackMs, `fell back after ${elapsed.toFixed(1)} ms`);
  });

  it("falls back within the deadline when the answer stalls halfway", async () => {
    const [client] = await clientBehind("stall-body");
    const [duel, elapsed] = await timedDuel(client);
    assert.equal(duel.fallbackReason, "deadline");
    assert.ok(elapsed < deadlineMs + slackMs, `fell back after ${elapsed.toFixed(1)} ms`);
  });

  it("makes the fallback a duel that records nothing, with no request", async () => {
    const [client] = await clientBehind("hold");
    const [duel] = await timedDuel(client);
    const start = performance.now();
    const shown = await client.interleave(duel, { bm25: ["a", "b", "a", "c"], bert: ["x"] });
    assert.deepEqual(shown.ids, ["a", "b", "c"]);
    assert.equal(shown.token, null);
    assert.equal(await client.clicks(shown, { clickPositions: [0] }), undefined);
    assert.equal(await client.outcome(duel, { winner: "bm25" }), undefined);
    // Each of those would have waited on the held proxy until the client's timeout.
    assert.ok(performance.now() - start < 20);
  });

  it("falls back at once on 503 and on a 4xx", async () => {
    const [down] = await clientBehind("unavailable");
    const [unavailable, elapsed] = await timedDuel(down);
    assert.equal(unavailable.fallbackReason, "unavailable");
    assert.equal(unavailable.fallbackError?.status, 503);
    assert.ok(elapsed < deadlineMs);

    const [up] = await clientBehind("forward");
    const [unknown] = await timedDuel(up, 987_654);
    assert.equal(unknown.fallbackReason, "rejected");
    assert.equal(unknown.fallbackError?.code, "unknown_experiment");
  });

  it("falls back at once when the connection is refused", async () => {
    const refused = new JoustClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    const [duel, elapsed] = await timedDuel(refused);
    assert.equal(duel.fallbackReason, "connection");
    assert.equal(duel.fallbackError?.code, "connection_failed");
    assert.ok(elapsed < deadlineMs);
  });

  it("takes several fallback rankers", async () => {
    const [client] = await clientBehind("hold");
    const duel = await client.duel(experimentId, { deadlineMs: 20, fallback: ["bm25", "bm25"] });
    assert.deepEqual(duel.rankers, ["bm25", "bm25"]);
  });

  it("rejects with a TimeoutError at the deadline when no fallback is given", async () => {
    const [client] = await clientBehind("hold");
    const start = performance.now();
    await assert.rejects(client.duel(experimentId, { deadlineMs }), (error: unknown) => {
      assert.ok(error instanceof TimeoutError);
      assert.equal(error.code, "timeout");
      assert.equal(error.status, 0);
      return true;
    });
    assert.ok(performance.now() - start < deadlineMs + slackMs);
  });

  it("makes the buffer wait out a 503's Retry-After, then deliver", async () => {
    const duel = await direct.duel(experimentId);
    // "unavailable" closes each connection: the switch to "forward" holds for the retry.
    const [client, proxy] = await clientBehind("unavailable");
    // Backoff alone would retry within 50 ms; the proxy's Retry-After says 1 s.
    const buffer = client.outcomeBuffer({
      flushIntervalMs: 10,
      backoff: { baseDelayMs: 10, maxDelayMs: 50 },
    });
    const start = performance.now();
    assert.ok(buffer.addOutcome(duel, { winner: "tie" }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(buffer.stats.retries, 1, "retried before Retry-After");
    assert.equal(buffer.pending, 1);
    proxy.setMode("forward");
    const stats = await buffer.close();
    assert.ok(performance.now() - start >= 1_000);
    assert.equal(stats.recorded, 1);
    assert.equal(stats.pending, 0);
  });
});
