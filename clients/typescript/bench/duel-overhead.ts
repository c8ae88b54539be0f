// What the SDK adds to a duel request: p50/p90 of (a) a bare fetch POST to
// /v1/experiments/{id}/duels (reading its JSON) and (b) JoustClient.duel with a deadline and a
// fallback, interleaved request by request (so both see the same server and machine state),
// over several runs. Prints each run's p50 difference and their range. Target: at most 0.3 ms.
//
//   node --import tsx bench/duel-overhead.ts      (JOUST_URL=http://... to use a running server;
//                                                  else one is started from JOUST_BIN)

import { JoustClient } from "../src/index.ts";
import { removeDataDir, startJoust, type JoustServer } from "../test/support/joust-server.ts";

const runs = Number(process.env.RUNS ?? 5);
const perRun = Number(process.env.REQUESTS ?? 2_000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  let server: JoustServer | undefined;
  let baseUrl = process.env.JOUST_URL;
  if (baseUrl === undefined) {
    server = await startJoust();
    baseUrl = server.baseUrl;
  }
  try {
    const client = new JoustClient({ baseUrl });
    const { id } = await client.createExperiment({
      name: "bench",
      rankers: ["bm25", "bert", "colbert"],
    });
    const url = `${baseUrl}/v1/experiments/${id}/duels`;

    const bare = async (): Promise<void> => {
      const response = await fetch(url, {
        method: "POST",
        headers: { accept: "application/json" },
      });
      await response.json();
    };
    const sdk = async (): Promise<void> => {
      const duel = await client.duel(id, { deadlineMs: 1_000, fallback: "bm25" });
      if (!duel.inExperiment) throw new Error(`fallback served: ${String(duel.fallbackReason)}`);
    };
    const time = async (call: () => Promise<void>): Promise<number> => {
      const start = performance.now();
      await call();
      return performance.now() - start;
    };

    for (let i = 0; i < 500; i++) {
      await bare();
      await sdk();
    }
    const diffs: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const bareTimes: number[] = [];
      const sdkTimes: number[] = [];
      for (let i = 0; i < perRun; i++) {
        // Alternate which goes first, so neither always follows the other.
        if (i % 2 === 0) {
          bareTimes.push(await time(bare));
          sdkTimes.push(await time(sdk));
        } else {
          sdkTimes.push(await time(sdk));
          bareTimes.push(await time(bare));
        }
      }
      bareTimes.sort((a, b) => a - b);
      sdkTimes.sort((a, b) => a - b);
      const diff = percentile(sdkTimes, 0.5) - percentile(bareTimes, 0.5);
      diffs.push(diff);
      console.log(
        `run ${run}: bare fetch p50 ${percentile(bareTimes, 0.5).toFixed(3)} ms p90 ` +
          `${percentile(bareTimes, 0.9).toFixed(3)} ms | sdk duel p50 ${percentile(sdkTimes, 0.5).toFixed(3)} ms ` +
          `p90 ${percentile(sdkTimes, 0.9).toFixed(3)} ms | p50 difference ${diff.toFixed(3)} ms`,
      );
    }
    console.log(
      `p50 difference over ${runs} runs of ${perRun}: ${Math.min(...diffs).toFixed(3)} to ` +
        `${Math.max(...diffs).toFixed(3)} ms (target: at most 0.300 ms)`,
    );
  } finally {
    if (server !== undefined) {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  }
}

await main();
