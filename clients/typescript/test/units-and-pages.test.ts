// Units, segments and pages against a live server: the same unit and query keep their duel,
// and a later page continues the same interleaving.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { JoustClient } from "../src/index.ts";
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
});
