// The whole backend flow against a live server with API keys: experiments, duels, interleaving,
// clicks and outcomes (retries are "duplicate"), the buffer, reads, paging, ETag polling, key
// scopes and the typed errors.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import {
  ConflictError,
  ForbiddenError,
  InvalidError,
  JoustClient,
  JoustError,
  NotFoundError,
  SERVER_ERROR_CODES,
  UnauthorizedError,
  type Experiment,
} from "../src/index.ts";
import { removeDataDir, startJoust, type JoustServer } from "./support/joust-server.ts";
import { eventually } from "./support/wait.ts";

// K1, K2 and K3, long enough for the entropy the service asks of a configured key.
const keys = {
  admin: "K1-admin-key-for-tests-0123456789",
  ingest: "K2-ingest-key-for-tests-0123456789",
  read: "K3-read-key-for-tests-0123456789",
};

/** Each ranker's results for a query, made up from its name, with one document in common. */
function listsFor(rankers: readonly string[]): Record<string, string[]> {
  return Object.fromEntries(rankers.map((r) => [r, [`${r}-1`, "shared", `${r}-2`]]));
}

function expectError(
  kind: abstract new (...args: never[]) => JoustError,
  status: number,
  code: string,
): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.ok(error.message.length > 0);
    return true;
  };
}

describe("backend flow", () => {
  let server: JoustServer;
  let admin: JoustClient;
  let ingest: JoustClient;
  let reader: JoustClient;
  let experiment: Experiment;

  before(async () => {
    server = await startJoust({
      apiKeys: `admin:${keys.admin},ingest:${keys.ingest},read:${keys.read}`,
    });
    admin = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.admin });
    ingest = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.ingest });
    reader = new JoustClient({ baseUrl: server.baseUrl, apiKey: keys.read });
    experiment = await admin.createExperiment({
      name: "backend-flow",
      rankers: ["bm25", "bert"],
      policy: { name: "uniform" },
      seed: 7,
    });
  });

  after(async () => {
    await server.stop();
    removeDataDir(server.dataDir);
  });

  it("creates an experiment", () => {
    assert.equal(experiment.status, "running");
    assert.deepEqual(
      experiment.rankers.map((r) => r.name),
      ["bm25", "bert"],
    );
    assert.equal(experiment.interleaving.method, "team_draft");
  });

  it("tells each key's scope", async () => {
    assert.equal(await admin.keyScope(), "admin");
    assert.equal(await ingest.keyScope(), "ingest");
    assert.equal(await reader.keyScope(), "read");
  });

  it("serves a duel, interleaves it and records its clicks exactly once", async () => {
    const duel = await ingest.duel(experiment.id, { deadlineMs: 2_000, fallback: "bm25" });
    assert.equal(duel.inExperiment, true);
    assert.equal(duel.rankers.length, 2);
    const shown = await ingest.interleave(duel, listsFor(duel.rankers));
    assert.equal(shown.inExperiment, true);
    assert.equal(shown.method, "team_draft");
    assert.ok(shown.ids.includes("shared"));
    assert.deepEqual(
      shown.ids,
      shown.documents.map((d) => d.id),
    );
    const first = await ingest.clicks(shown, { clickPositions: [0] });
    assert.equal(first?.status, "recorded");
    assert.equal(first.method, "team_draft");
    // A retry (a lost answer, say) is a success that counts nothing.
    const again = await ingest.clicks(shown, { clickPositions: [0] });
    assert.equal(again?.status, "duplicate");
    const byId = await ingest.clicks(shown, { clicked: [shown.ids[0] ?? ""] });
    assert.equal(byId?.status, "duplicate");
  });

  it("records an outcome exactly once and refuses a different one", async () => {
    const duel = await ingest.duel(experiment.id);
    const winner = duel.rankers[0] ?? "";
    assert.equal((await ingest.outcome(duel, { winner }))?.status, "recorded");
    assert.equal((await ingest.outcome(duel, { winner }))?.status, "duplicate");
    // The policy is uniform over distinct rankers: a tie differs from the recorded winner.
    await assert.rejects(
      ingest.outcome(duel, { winner: "tie" }),
      expectError(ConflictError, 409, "outcome_conflict"),
    );
  });

  it("refuses an empty tied group at the call, before any buffer", async () => {
    const duel = await ingest.duel(experiment.id);
    await assert.rejects(
      ingest.outcome(duel, { ordering: [[], ...duel.rankers] }),
      /tied group names one or more rankers/,
    );
  });

  it("records a batch with per-item results", async () => {
    const duel = await ingest.duel(experiment.id);
    const result = await ingest.outcomes([
      { duel_token: duel.token ?? "", winner: "tie" },
      { duel_token: "not-a-token", winner: "tie" },
    ]);
    assert.equal(result.recorded, 1);
    assert.equal(result.rejected, 1);
    const refused = result.results[1];
    assert.ok(refused !== undefined && "error" in refused);
    assert.equal(refused.error.code, "invalid_token");
  });

  it("delivers outcomes and clicks through the buffer", async () => {
    const fresh = await admin.createExperiment({ name: "buffered", rankers: ["a", "b", "c"] });
    const failures: string[] = [];
    const buffer = ingest.outcomeBuffer({
      maxBatch: 100,
      flushIntervalMs: 50,
      onError: (error) => failures.push(`${error.status} ${error.code}: ${error.message}`),
    });
    const outcomes = 300;
    const clicked = 20;
    for (let i = 0; i < outcomes; i++) {
      const duel = await ingest.duel(fresh.id);
      assert.equal(buffer.addOutcome(duel, { winner: duel.rankers[i % 2] ?? "" }), true);
    }
    for (let i = 0; i < clicked; i++) {
      const duel = await ingest.duel(fresh.id);
      const shown = await ingest.interleave(duel, listsFor(duel.rankers));
      assert.equal(buffer.addClicks(shown, { clickPositions: [i % 2] }), true);
    }
    const errors: JoustError[] = [];
    const rejecting = ingest.outcomeBuffer({ onError: (error) => errors.push(error) });
    const refused = await ingest.duel(fresh.id);
    rejecting.addOutcome(refused, { winner: "not-a-ranker" });

    const stats = await buffer.close();
    assert.deepEqual(failures, []);
    assert.deepEqual(stats, {
      pending: 0,
      dropped: 0,
      recorded: outcomes + clicked,
      duplicates: 0,
      rejected: 0,
      retries: 0,
    });
    const rejected = await rejecting.close();
    assert.equal(rejected.rejected, 1);
    assert.equal(errors[0]?.status, 422);

    const counted = await eventually(
      () => reader.experiment(fresh.id),
      (e) => e.outcomes_applied + e.ties_recorded === outcomes + clicked,
    );
    assert.equal(counted.outcomes_applied + counted.ties_recorded, outcomes + clicked);
  });

  it("reads the experiment, its matrix and its history", async () => {
    const read = await reader.experiment(experiment.id);
    assert.equal(read.id, experiment.id);
    assert.ok(read.outcomes_applied + read.ties_recorded >= 2);
    // Until decided, each ranker that may be best says what evidence it lacks.
    const decision = read.decision;
    assert.ok(decision !== undefined);
    assert.ok(decision.decided || decision.possible_best.length > 0);
    for (const contender of decision.possible_best) {
      assert.ok(
        contender.never_compared >= 0 && contender.never_compared <= contender.missing_total,
      );
    }
    const matrix = await reader.matrix(experiment.id);
    assert.deepEqual(matrix.rankers, ["bm25", "bert"]);
    assert.equal(matrix.wins.length, 2);
    const history = await reader.history(experiment.id, { since: new Date(0), maxPoints: 10 });
    assert.equal(history.experiment_id, experiment.id);
    assert.deepEqual(history.rankers, ["bm25", "bert"]);
    assert.ok(Array.isArray(history.points));
  });

  it("pages through every experiment", async () => {
    for (let i = 0; i < 5; i++) {
      await admin.createExperiment({ name: `page-${i}`, rankers: ["x", "y"] });
    }
    const ids: number[] = [];
    for await (const summary of reader.experiments({ pageSize: 2 })) ids.push(summary.id);
    const onePage = await reader.listExperiments({ limit: 200 });
    assert.deepEqual(
      ids,
      onePage.experiments.map((e) => e.id),
    );
    assert.ok(ids.length >= 7);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );
    const second = await reader.listExperiments({ limit: 2, after: ids[1] ?? 0 });
    assert.deepEqual(
      second.experiments.map((e) => e.id),
      ids.slice(2, 4),
    );
  });

  it("polls with If-None-Match: undefined while nothing changed", async () => {
    const quiet = await admin.createExperiment({ name: "polled", rankers: ["p", "q"] });
    const first = await reader.pollExperiment(quiet.id);
    assert.ok(first !== undefined);
    assert.equal(first.value.id, quiet.id);
    assert.notEqual(first.etag, "");
    assert.equal(await reader.pollExperiment(quiet.id, first.etag), undefined);
    const matrix = await reader.pollMatrix(quiet.id);
    assert.ok(matrix !== undefined);
    assert.equal(await reader.pollMatrix(quiet.id, matrix.etag), undefined);

    const duel = await ingest.duel(quiet.id);
    await ingest.outcome(duel, { winner: "tie" });
    const changed = await eventually(
      () => reader.pollExperiment(quiet.id, first.etag),
      (polled) => polled !== undefined,
    );
    assert.ok(changed !== undefined);
    assert.notEqual(changed.etag, first.etag);
  });

  it("serves a concluded experiment's champion with nothing to record", async () => {
    const done = await admin.createExperiment({ name: "concluded", rankers: ["m", "n"] });
    await admin.setStatus(done.id, "concluded");
    const duel = await ingest.duel(done.id, { deadlineMs: 2_000, fallback: "m" });
    assert.equal(duel.concluded, true);
    assert.equal(duel.inExperiment, false);
    assert.equal(duel.fallbackReason, undefined);
    const shown = await ingest.interleave(duel, listsFor(duel.rankers));
    assert.equal(shown.token, null);
    assert.equal(await ingest.outcome(duel, { winner: "m" }), undefined);
  });

  it("changes rankers and deletes experiments", async () => {
    const changing = await admin.createExperiment({ name: "rankers", rankers: ["r1", "r2"] });
    assert.equal((await admin.addRanker(changing.id, "r3")).active, true);
    assert.equal((await admin.retireRanker(changing.id, "r1")).active, false);
    await assert.rejects(
      admin.retireRanker(changing.id, "r2"),
      expectError(ConflictError, 409, "too_few_rankers"),
    );
    await admin.deleteExperiment(changing.id);
    await assert.rejects(
      reader.experiment(changing.id),
      expectError(NotFoundError, 404, "unknown_experiment"),
    );
  });

  it("raises typed errors for 401, 403, 404, 409 and 422", async () => {
    const anonymous = new JoustClient({ baseUrl: server.baseUrl });
    await assert.rejects(
      anonymous.experiment(experiment.id),
      expectError(UnauthorizedError, 401, "unauthorized"),
    );
    const wrongKey = new JoustClient({ baseUrl: server.baseUrl, apiKey: "nope" });
    await assert.rejects(wrongKey.keyScope(), expectError(UnauthorizedError, 401, "unauthorized"));
    await assert.rejects(
      reader.createExperiment({ name: "not allowed", rankers: ["a", "b"] }),
      expectError(ForbiddenError, 403, "forbidden"),
    );
    await assert.rejects(reader.duel(experiment.id), expectError(ForbiddenError, 403, "forbidden"));
    await assert.rejects(
      reader.experiment(987_654),
      expectError(NotFoundError, 404, "unknown_experiment"),
    );
    const paused = await admin.createExperiment({ name: "paused", rankers: ["a", "b"] });
    await admin.setStatus(paused.id, "paused");
    await assert.rejects(
      ingest.duel(paused.id),
      expectError(ConflictError, 409, "experiment_paused"),
    );
    await assert.rejects(
      admin.createExperiment({ name: "reserved", rankers: ["a", "tie"] }),
      expectError(InvalidError, 422, "reserved_name"),
    );
    // Every code the service sent is one the SDK's union names.
    try {
      await admin.createExperiment({ name: "one ranker", rankers: ["a"] });
      assert.fail("a one-ranker experiment was accepted");
    } catch (error) {
      assert.ok(error instanceof InvalidError);
      assert.ok((SERVER_ERROR_CODES as readonly string[]).includes(error.code), error.code);
    }
  });
});
