// Exports against live servers: every outcome once in pages, then only the new ones from the
// cursor; and an export that goes on across a restart of the server mid-export.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";

import { JoustClient, type ExportRow } from "../src/index.ts";
import {
  freePort,
  freshDataDir,
  removeDataDir,
  startJoust,
  type JoustServer,
} from "./support/joust-server.ts";
import { eventually } from "./support/wait.ts";

async function postOutcomes(
  client: JoustClient,
  experiment: number,
  n: number,
): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let i = 0; i < n; i++) {
    const duel = await client.duel(experiment);
    const winner = i % 3 === 0 ? "tie" : (duel.rankers[i % 2] ?? "tie");
    assert.equal((await client.outcome(duel, { winner }))?.status, "recorded");
    ids.add(duel.id as string);
  }
  return ids;
}

async function collect(rows: AsyncIterable<ExportRow>): Promise<string[]> {
  const ids: string[] = [];
  for await (const row of rows) ids.push(row.duel_id as string);
  return ids;
}

describe("exports", () => {
  const dataDir = freshDataDir();
  let server: JoustServer | undefined;

  after(async () => {
    await server?.stop();
    removeDataDir(dataDir);
  });

  it("lists every outcome once, resumes from the cursor, and survives a restart", async () => {
    const port = await freePort();
    server = await startJoust({ dataDir, port });
    const client = new JoustClient({ baseUrl: server.baseUrl, timeoutMs: 2_000 });
    const experiment = await client.createExperiment({
      name: "export",
      rankers: ["bm25", "bert", "colbert"],
    });
    const posted = await postOutcomes(client, experiment.id, 30);
    // Rows become final once every older transaction has ended.
    await eventually(
      () => collect(client.outcomeRows(experiment.id, { pageSize: 7 })),
      (ids) => ids.length === 30,
    );
    const rows = client.outcomeRows(experiment.id, { pageSize: 7 });
    const ids = await collect(rows);
    assert.equal(new Set(ids).size, ids.length, "no row twice");
    assert.deepEqual(new Set(ids), posted);
    assert.ok(rows.cursor !== undefined);

    const later = await postOutcomes(client, experiment.id, 2);
    const fresh = await eventually(
      () => collect(client.outcomeRows(experiment.id, { after: rows.cursor as string })),
      (found) => found.length === 2,
    );
    assert.deepEqual(new Set(fresh), later);

    // Mid-export the server stops and starts again on the same data: the export goes on.
    const all = new Set([...posted, ...later]);
    const seen: string[] = [];
    for await (const row of client.outcomeRows(experiment.id, { pageSize: 5, retryWaitMs: 200 })) {
      seen.push(row.duel_id as string);
      if (seen.length === 12) {
        await server.stop();
        server = await startJoust({ dataDir, port });
      }
    }
    assert.equal(new Set(seen).size, seen.length, "no row twice across the restart");
    assert.deepEqual(new Set(seen), all);
  });

  it("refuses a forged cursor", async () => {
    const client = new JoustClient({ baseUrl: (server as JoustServer).baseUrl });
    await assert.rejects(collect(client.outcomeRows(1, { after: "forged" })), (error: unknown) => {
      return (error as { code?: string }).code === "invalid_cursor";
    });
  });
});
