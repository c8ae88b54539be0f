// Units, segments and pages against a live server: the same unit and query keep their duel,
// a later page continues the same interleaving, and the experiment reports each segment.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { JoustClient, type SegmentView } from "../src/index.ts";
import { removeDataDir, startJoust, type JoustServer } from "./support/joust-server.ts";

/** Each ranker's 25 results, every other one shared. */
function listsFor(rankers: readonly string[]): Record<string, string[]> {
  return Object.fromEntries(
    rankers.map((r) => [r, Array.from({ length: 25 }, (_, i) => (i % 2 ? `${r}-${i}` : `s-${i}`))]),
  );
}

describe("units and pages", () => {
  let server: JoustServer;
  let client: JoustClient;

  before(async () => {
    server = await startJoust();
    client = new JoustClient({ baseUrl: server.baseUrl });
  });

  after(async () => {
    await server.stop();
    removeDataDir(server.dataDir);
  });

  it("keeps a unit's duel for a query and continues its list on page 2", async () => {
    const experiment = await client.createExperiment({
      name: "units",
      rankers: ["bm25", "bert", "colbert"],
    });
    const ask = { unit: "user-1", query: "shoes", segment: "mobile" };
    const first = await client.duel(experiment.id, ask);
    const again = await client.duel(experiment.id, ask);
    assert.equal(again.id, first.id);
    assert.deepEqual(again.rankers, first.rankers);
    const lists = listsFor(first.rankers);
    const page1 = await client.interleave(first, lists);
    const page2 = await client.interleave(first, lists, { page: 2 });
    assert.equal(page1.offset, 0);
    assert.equal(page2.offset, 10);
    assert.ok(page2.ids.length > 0);
    assert.ok(page2.ids.every((id) => !page1.ids.includes(id)));
    assert.deepEqual((await client.interleave(again, lists, { offset: 10 })).ids, page2.ids);
  });

  it("reports the experiment's units and each segment's counts and decision", async () => {
    const experiment = await client.createExperiment({
      name: "segments",
      rankers: ["bm25", "bert"],
      policy: { name: "uniform" },
      units: { window_seconds: 600, aggregation: "unit" },
      segments: { max_segments: 3 },
    });
    const { units, segments } = experiment;
    assert.ok(units && segments, "a server with units and segments");
    assert.equal(units.window_seconds, 600);
    assert.equal(units.aggregation, "unit");
    assert.equal(segments.max_segments, 3);
    assert.deepEqual(segments.segments, []);
    const duel = await client.duel(experiment.id, {
      unit: "user-2",
      query: "boots",
      segment: "tablet",
    });
    // The uniform policy always draws two distinct rankers, so the outcome is decisive.
    const [first, second] = duel.rankers;
    assert.ok(first !== undefined && first !== second);
    await client.outcome(duel, { winner: first });
    // The label is registered by the duel; its counts follow once the outcome is applied.
    const applied = (s: SegmentView | undefined) => s !== undefined && s.outcomes + s.ties > 0;
    const deadline = Date.now() + 30_000;
    let view = await client.experiment(experiment.id);
    while (!applied(view.segments?.segments[0]) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      view = await client.experiment(experiment.id);
    }
    assert.ok(view.segments);
    const [tablet] = view.segments.segments;
    assert.ok(tablet);
    assert.equal(tablet.label, "tablet");
    assert.deepEqual([tablet.outcomes, tablet.ties], [1, 0]);
    assert.deepEqual(view.segments.rankers, ["bm25", "bert"]);
    assert.equal(tablet.wins?.length, 2);
    assert.equal(tablet.decision.decided, false);
    assert.ok(Array.isArray(tablet.decision.possible_best));
  });
});
