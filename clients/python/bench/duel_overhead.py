"""What the SDK adds to a duel request, over a bare httpx POST on a keep-alive connection.

    python bench/duel_overhead.py [--url http://127.0.0.1:8080] [--calls 5000] [--runs 5]

Without --url it starts a joust server (JOUST_BIN, as the tests do) on a fresh data dir. Each
run times `--calls` bare POSTs to /v1/experiments/{id}/duels (status checked, body read, nothing
parsed) and as many `client.duel(id, deadline=..., fallback=...)` calls (parsed into a Duel),
interleaved in rounds of `--round` calls so that both see the same server and machine state, and
prints both p50 and p90 and the p50 difference. The target: at most 0.3 ms at p50.

Wall-clock latencies swing with the machine's load, so it also measures the client-side CPU
time per call of both against a canned answer (httpx.MockTransport: no network, no server),
which isolates what the SDK's own code costs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

from joust_client import Client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def one_run(url: str, experiment_id: int, calls: int, round_size: int) -> tuple[float, ...]:
    path = f"/v1/experiments/{experiment_id}/duels"
    bare_times: list[float] = []
    sdk_times: list[float] = []
    with httpx.Client(base_url=url, timeout=5.0) as bare, Client(url, timeout=5.0) as client:
        for _ in range(20):  # warm both connections
            bare.post(path)
            client.duel(experiment_id, deadline=0.5, fallback="bm25")
        clock = time.perf_counter
        for _ in range(calls // round_size):
            for _ in range(round_size):
                started = clock()
                response = bare.post(path)
                if response.status_code != 200:
                    raise SystemExit(f"bare POST answered {response.status_code}")
                bare_times.append(clock() - started)
            for _ in range(round_size):
                started = clock()
                duel = client.duel(experiment_id, deadline=0.5, fallback="bm25")
                sdk_times.append(clock() - started)
                if not duel.in_experiment:
                    raise SystemExit(f"the SDK fell back: {duel.fallback_reason}")
    ms = 1000.0
    return (
        percentile(bare_times, 0.5) * ms,
        percentile(bare_times, 0.9) * ms,
        percentile(sdk_times, 0.5) * ms,
        percentile(sdk_times, 0.9) * ms,
    )


CANNED_DUEL = json.dumps(
    {
        "concluded": False,
        "duel_id": "01a212af-0429-7e13-9822-4e9e1de9a1ef",
        "duel_token": "AQAAAAAAAAABAAAAAAAAAAAAAAGiEq8EKQAAAaIS5fKpAAAAAAAAAAEBohKvBCl-E5giTp4d6a",
        "experiment_id": 1,
        "expires_at": "2026-11-25T13:29:49.481Z",
        "rankers": ["bm25", "bert"],
    }
).encode()


def client_cpu_per_call(batches: int = 200, batch: int = 200) -> tuple[float, float]:
    """Median CPU microseconds per call, bare httpx and SDK, against a canned answer."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=CANNED_DUEL)

    url = "http://joust.invalid"
    bare = httpx.Client(base_url=url, transport=httpx.MockTransport(answer))
    sdk_http = httpx.Client(base_url=url, transport=httpx.MockTransport(answer))
    client = Client(url, http_client=sdk_http)
    bare_times, sdk_times = [], []
    clock = time.process_time
    for _ in range(batches):
        started = clock()
        for _ in range(batch):
            bare.post("/v1/experiments/1/duels").read()
        bare_times.append((clock() - started) / batch)
        started = clock()
        for _ in range(batch):
            client.duel(1, deadline=0.05, fallback="bm25")
        sdk_times.append((clock() - started) / batch)
    bare.close()
    client.close()
    us = 1e6
    return statistics.median(bare_times) * us, statistics.median(sdk_times) * us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running joust server (else one is started)")
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--round", type=int, default=100, help="calls per round of each kind")
    args = parser.parse_args()

    server = None
    url = args.url
    if url is None:
        from joust_server import JoustServer, fresh_data_dir

        server = JoustServer(fresh_data_dir("bench"))
        url = server.start()
    try:
        with Client(url) as client:
            experiment = client.create_experiment(
                f"duel-overhead-{time.time_ns()}", ["bm25", "bert", "colbert"]
            )
        differences = []
        print(f"{args.runs} runs of {args.calls} calls each, against {url}")
        print("run  bare p50  bare p90   sdk p50   sdk p90  p50 diff (ms)")
        for run in range(1, args.runs + 1):
            bare50, bare90, sdk50, sdk90 = one_run(url, experiment.id, args.calls, args.round)
            differences.append(sdk50 - bare50)
            print(
                f"{run:>3} {bare50:9.3f} {bare90:9.3f} {sdk50:9.3f} {sdk90:9.3f}"
                f" {sdk50 - bare50:+9.3f}"
            )
        print(
            f"p50 difference: median {statistics.median(differences):+.3f} ms,"
            f" range {min(differences):+.3f} .. {max(differences):+.3f} ms (target: <= 0.3 ms)"
        )
        bare_cpu, sdk_cpu = client_cpu_per_call()
        print(
            f"client CPU per call (canned answer): bare {bare_cpu:.1f} us, SDK {sdk_cpu:.1f} us,"
            f" difference {sdk_cpu - bare_cpu:+.1f} us"
        )
    finally:
        if server is not None:
            server.stop()
            server.remove_data()


if __name__ == "__main__":
    main()
