// Metrics and conversions against a live server: a purchase on the other ranker's document is
// recorded once per event id, refused when the document was not shown, and the experiment then
// says its click and purchase champions differ.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ConflictError, InvalidError, JoustClient, type Experiment } from "../src/index.ts";
import { removeDataDir, startJoust, type JoustServer } from "./support/joust-server.ts";
import { eventually } from "./support/wait.ts";

describe("conversions", () => {
  let server: JoustServer;
  let client: JoustClient;
  let experiment: Experiment;

  before(async () => {
    server = await startJoust({});
    client = new JoustClient({ baseUrl: server.baseUrl });
    experiment = await client.createExperiment({
      name: "conversions",
      rankers: ["x", "y"],
      policy: { name: "uniform" },
      seed: 3,
      metrics: [{ name: "purchase", credit: "first", window_seconds: 86400 }],
    });
  });

  after(async () => {
    await server.stop();
    removeDataDir(server.dataDir);
  });

  it("records a purchase once and shows the metrics side by side", async () => {
    assert.deepEqual(
      experiment.metrics?.map((m) => m.name),
      ["click", "purchase"],
    );
    let duel = await client.duel(experiment.id);
    while (duel.rankers[0] === duel.rankers[1]) duel = await client.duel(experiment.id);
    const lists = Object.fromEntries(duel.rankers.map((r) => [r, [`${r}-1`, `${r}-2`]]));
    const shown = await client.interleave(duel, lists);
    const team = (r: string): string => {
      const doc = shown.documents.find((d) => d.ranker === r);
      assert.ok(doc, `a document of ${r} is shown`);
      return doc.id;
    };
    const token = shown.token;
    assert.ok(token !== null);
    const [first, second] = duel.rankers as [string, string];
    const clicked = await client.clicks(shown, { clicked: [team(first)] });
    assert.equal(clicked?.winner, first);

    const purchase = { metric: "purchase", document: team(second), eventId: "order-1", value: 20 };
    assert.equal((await client.conversion(shown, purchase))?.status, "recorded");
    assert.equal((await client.conversion(shown, purchase))?.status, "duplicate");
    const batch = await client.conversions([
      {
        interleaving_token: token,
        metric: "purchase",
        document: team(second),
        value: 20,
        event_id: "order-1",
      },
      { interleaving_token: token, metric: "refund", document: team(second), event_id: "order-2" },
    ]);
    assert.deepEqual([batch.recorded, batch.duplicates, batch.rejected], [0, 1, 1]);
    await assert.rejects(
      client.conversion(shown, { ...purchase, document: team(first) }),
      (e) => e instanceof ConflictError && e.code === "conversion_conflict",
    );
    await assert.rejects(
      client.conversion(shown, { ...purchase, document: "not-shown", eventId: "order-3" }),
      (e) => e instanceof InvalidError && e.code === "conversion_not_shown",
    );

    const summary = (e: Experiment) => ({
      counts: Object.fromEntries((e.metrics ?? []).map((m) => [m.name, [m.outcomes, m.champion]])),
      agree: e.metrics_agree,
    });
    const seen = await eventually(
      () => client.experiment(experiment.id),
      (e) => summary(e).agree === false,
    );
    assert.deepEqual(summary(seen), {
      counts: { click: [1, first], purchase: [1, second] },
      agree: false,
    });
  });
});
