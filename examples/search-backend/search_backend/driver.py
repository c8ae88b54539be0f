"""One run of the example: create the experiment, serve searches, let the users search until
the champion is confident (or a limit is reached), and report what joust found."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from joust_client import Client, Experiment, OutcomeBuffer

from .backend import SearchBackend, SearchSettings
from .corpus import load_corpus
from .http_app import SearchServer
from .offline_check import mean_reciprocal_rank
from .rankers import build_rankers
from .users import QueryCounter, SimulatedUser

# Team-Draft, joust's default method, with one option changed. In known-item search both rankers
# often put the wanted document first; by default that shared top document counts for whichever
# ranker drafted it, a coin flip, so the click says nothing about the rankers but still decides
# the duel. `no_credit` makes such a page a tie and lets only the documents the rankers disagree
# on decide: in our runs the champion became confident after several times fewer queries.
# Team-Draft is fair under random clicks with either option (docs/interleaving.md).
INTERLEAVING = {"method": "team_draft", "options": {"shared_prefix": "no_credit"}}


@dataclass(frozen=True)
class RunConfig:
    joust_url: str
    api_key: str | None = None
    # bm25 is the challenger, tfidf the ranker in production (served whenever joust is not
    # asked or too slow), term_count a deliberately naive baseline.
    rankers: tuple[str, ...] = ("bm25", "tfidf", "term_count")
    default_ranker: str = "tfidf"
    policy: str | None = None  # None: joust's default, `auto`
    max_queries: int = 50_000
    max_seconds: float = 300.0
    stop_when_confident: bool = True
    users: int = 4  # concurrent simulated users
    deadline: float = 0.05
    seed: int = 1  # the users' queries and clicks, and the experiment's policy
    backend_port: int = 0  # 0: any free port


@dataclass
class Summary:
    experiment_id: int
    dashboard_url: str
    backend_url: str
    documents: int
    index_seconds: float
    queries: int = 0
    pages_outside_experiment: int = 0
    seconds: float = 0.0
    outcomes_recorded: int = 0  # decided duels and ties
    champion: str | None = None
    basis: str = "none"
    confident: bool = False
    outcomes_to_confident: int | None = None  # when first read confident (every 0.25 s)
    seconds_to_confident: float | None = None
    wins: dict[str, int] = field(default_factory=dict)
    offline_mrr: dict[str, float] = field(default_factory=dict)
    outcomes_dropped: int = 0  # the buffer was full
    outcomes_rejected: int = 0  # joust refused them (4xx)


class Run:
    """The parts of a run that outlive the users: the backend keeps serving until `close`."""

    def __init__(self, config: RunConfig, log: Callable[[str], None] = print):
        self.config, self.log = config, log
        started = time.monotonic()
        self.documents = load_corpus()
        self.rankers = build_rankers(self.documents)
        index_seconds = time.monotonic() - started
        log(
            f"indexed {len(self.documents)} documents of the standard library's help in {index_seconds:.1f} s"
        )

        self.client = Client(config.joust_url, api_key=config.api_key)
        experiment = self.client.create_experiment(
            name=f"search-backend example ({' vs '.join(config.rankers)})",
            rankers=list(config.rankers),
            policy=config.policy,
            seed=config.seed,
            interleaving=INTERLEAVING,
        )
        self.experiment_id = experiment.id
        rankers = ", ".join(config.rankers)
        log(f"experiment {experiment.id}: rankers {rankers}, policy {experiment.policy.name}")

        # Each page's clicks are one request and one durable write; with more of them in flight
        # the server groups their writes, and the outcomes keep up with the users.
        self.buffer: OutcomeBuffer = self.client.outcome_buffer(click_concurrency=16)
        settings = SearchSettings(experiment.id, config.default_ranker, deadline=config.deadline)
        by_id = {document.id: document for document in self.documents}
        self.backend = SearchBackend(by_id, self.rankers, self.client, self.buffer, settings)
        self.server = SearchServer(("127.0.0.1", config.backend_port), self.backend)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.summary = Summary(
            experiment.id,
            f"{config.joust_url.rstrip('/')}/ui/experiments/{experiment.id}",
            self.server.url,
            len(self.documents),
            index_seconds,
        )
        log(f"dashboard: {self.summary.dashboard_url}")

    def simulate_users(self) -> Summary:
        config, summary = self.config, self.summary
        counter = QueryCounter(config.max_queries)
        users = [
            SimulatedUser(self.server.url, self.documents, counter, seed=config.seed * 1000 + number)
            for number in range(config.users)
        ]
        started = time.monotonic()
        for user in users:
            user.start()
        try:
            self._watch(users, counter, started)
        except BaseException:
            counter.stop.set()  # Ctrl-C, or joust went away: the users stop too
            raise
        for user in users:
            user.join()
            if user.error is not None:
                raise RuntimeError(f"a simulated user failed: {user.error}") from user.error
        summary.seconds = time.monotonic() - started
        summary.queries = self.backend.pages_served
        summary.pages_outside_experiment = self.backend.pages_outside_experiment
        # Let the buffer post what the last users clicked, so the result counts it.
        self.buffer.flush(timeout=30)
        self._read_result()
        summary.offline_mrr = mean_reciprocal_rank(
            {name: self.rankers[name] for name in config.rankers}, self.documents, 500, seed=config.seed
        )
        return summary

    def _watch(self, users: list[SimulatedUser], counter: QueryCounter, started: float) -> None:
        """Reads the experiment as the users search, as the dashboard does, and stops them at
        the first confident champion or at the limits."""
        config, summary = self.config, self.summary
        last_report = started
        while any(user.is_alive() for user in users):
            time.sleep(0.25)
            elapsed = time.monotonic() - started
            experiment = self.client.experiment(self.experiment_id)
            if experiment.champion.confident and summary.outcomes_to_confident is None:
                summary.outcomes_to_confident = _outcomes(experiment)
                summary.seconds_to_confident = elapsed
                if config.stop_when_confident:
                    counter.stop.set()
            if elapsed > config.max_seconds:
                counter.stop.set()
            if time.monotonic() - last_report >= 2:
                last_report = time.monotonic()
                self.log(_progress(counter.count, experiment))

    def _read_result(self) -> None:
        experiment = self.client.experiment(self.experiment_id)
        summary = self.summary
        summary.outcomes_recorded = _outcomes(experiment)
        champion = experiment.champion
        summary.champion, summary.basis, summary.confident = (
            champion.ranker,
            champion.basis,
            champion.confident,
        )
        summary.wins = {ranker.name: ranker.wins for ranker in experiment.rankers}
        summary.outcomes_dropped = self.buffer.dropped
        summary.outcomes_rejected = self.buffer.rejected

    def close(self, timeout: float | None = None) -> None:
        """Stops the backend and sends the clicks still pending, waiting at most `timeout`
        seconds (None: the buffer's own limit, 30 s)."""
        self.server.shutdown()
        self.buffer.close(timeout)
        self.client.close()


def _outcomes(experiment: Experiment) -> int:
    return experiment.outcomes_applied + experiment.ties_recorded


def _progress(queries: int, experiment: Experiment) -> str:
    champion = experiment.champion
    state = "confident" if champion.confident else "not yet confident"
    outcomes = _outcomes(experiment)
    return f"  {queries} queries, {outcomes} outcomes: champion {champion.ranker} ({champion.basis}), {state}"
