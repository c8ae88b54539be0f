"""python -m search_backend --joust-url URL: runs the example and prints what joust found."""

import argparse
import contextlib
import signal
import sys
import threading

from joust_client import JoustError

from .driver import Run, RunConfig, Summary


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m search_backend", description=__doc__)
    parser.add_argument("--joust-url", required=True)
    parser.add_argument("--api-key", help="an ingest or admin key, when the server has keys")
    parser.add_argument("--queries", type=int, default=RunConfig.max_queries, help="at most this many")
    parser.add_argument("--seconds", type=float, default=RunConfig.max_seconds, help="at most this long")
    parser.add_argument(
        "--keep-going", action="store_true", help="do not stop once the champion is confident"
    )
    parser.add_argument("--users", type=int, default=RunConfig.users, help="concurrent simulated users")
    parser.add_argument(
        "--rankers",
        default=",".join(RunConfig.rankers),
        help="the rankers compared, of bm25, tfidf, term_count, title (default: %(default)s)",
    )
    parser.add_argument("--policy", help="the experiment's policy (default: joust's `auto`)")
    parser.add_argument("--seed", type=int, default=RunConfig.seed)
    parser.add_argument("--port", type=int, default=0, help="the backend's port (default: any free one)")
    parser.add_argument(
        "--serve",
        action="store_true",
        help="keep the backend serving searches after the users stop, until Ctrl-C",
    )
    args = parser.parse_args()
    config = RunConfig(
        args.joust_url,
        api_key=args.api_key,
        rankers=tuple(args.rankers.split(",")),
        policy=args.policy,
        max_queries=args.queries,
        max_seconds=args.seconds,
        stop_when_confident=not args.keep_going,
        users=args.users,
        seed=args.seed,
        backend_port=args.port,
    )
    try:
        run = Run(config, log=lambda line: print(line, flush=True))
    except JoustError as error:
        sys.exit(f"joust at {config.joust_url} refused or did not answer: {error}")
    closing_timeout = None
    try:
        print(f"{config.users} simulated users searching {run.server.url} ...", flush=True)
        print_summary(run.simulate_users())
        if args.serve:
            print(f"the backend keeps serving: curl '{run.server.url}/search?q=json+encoder'")
            print("and the dashboard stays up; Ctrl-C stops", flush=True)
            wait_for_ctrl_c()
    except KeyboardInterrupt:
        closing_timeout = 2.0  # joust may be stopping too: do not wait long for the last clicks
        print("stopped", flush=True)
    except JoustError as error:
        closing_timeout = 2.0
        sys.exit(f"joust stopped answering: {error}")
    finally:
        run.close(closing_timeout)


def print_summary(summary: Summary) -> None:
    rate = summary.queries / max(summary.seconds, 1e-9)
    if summary.outcomes_to_confident is None:
        confident_after = "not yet: run longer (--queries, --seconds)"
    else:
        confident_after = f"{summary.outcomes_to_confident} outcomes, {summary.seconds_to_confident:.1f} s"
    by_mrr = sorted(summary.offline_mrr.items(), key=lambda item: -item[1])
    rows = [
        ("queries", f"{summary.queries} in {summary.seconds:.1f} s ({rate:.0f}/s)"),
        ("outside experiment", f"{summary.pages_outside_experiment} (joust missed a deadline)"),
        ("outcomes recorded", f"{summary.outcomes_recorded}"),
        ("outcomes lost", f"{summary.outcomes_dropped} dropped, {summary.outcomes_rejected} rejected"),
        ("champion", f"{summary.champion} ({summary.basis})"),
        ("confident", "yes" if summary.confident else "no"),
        ("confident after", confident_after),
        ("wins", ", ".join(f"{name} {wins}" for name, wins in summary.wins.items())),
        ("offline MRR", ", ".join(f"{name} {mrr:.3f}" for name, mrr in by_mrr)),
        ("dashboard", summary.dashboard_url),
    ]
    print()
    for label, value in rows:
        print(f"{label:<20}{value}", flush=True)


def wait_for_ctrl_c() -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()


if __name__ == "__main__":
    main()
