"""Typed answers of the service.

Each dataclass is built straight from the answer's JSON by its `from_json`, with no validation
beyond construction: the service's answers follow openapi.yaml, and the hot path (`Duel`) should
cost no more than reading the fields. Fields the service adds later are ignored until a release
names them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .errors import JoustError, error_for


def _parse_time(value: str) -> datetime:
    # The service writes RFC 3339 with a `Z`; fromisoformat reads `Z` only from Python 3.11 on.
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(slots=True)
class Duel:
    """The rankers to show for one query.

    `in_experiment` is True when the service chose the duel and gave a token: its interleaving,
    clicks and outcome count. It is False for a fallback (the service did not answer in time, or
    refused; `fallback_reason` says why and `error` holds the error) and for a concluded
    experiment (the service answered its champion, with no token: nothing is left to record).
    """

    rankers: list[str]
    token: str | None
    duel_id: str | None
    experiment_id: int
    expires_at: str | None
    concluded: bool
    in_experiment: bool
    fallback_reason: str | None = None
    error: JoustError | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Duel:
        token = data["duel_token"]
        return cls(
            data["rankers"],
            token,
            data["duel_id"],
            data["experiment_id"],
            data["expires_at"],
            data["concluded"],
            token is not None,
        )

    @classmethod
    def fallback(
        cls, experiment_id: int, rankers: list[str], reason: str, error: JoustError | None
    ) -> Duel:
        return cls(rankers, None, None, experiment_id, None, False, False, reason, error)


@dataclass(slots=True, frozen=True)
class ShownDocument:
    """One document of an interleaved list and the ranker it counts for (None: nobody)."""

    id: str
    ranker: str | None

    @property
    def team(self) -> str | None:
        """The ranker whose team drafted the document (another name for `ranker`)."""
        return self.ranker


@dataclass(slots=True)
class Interleaving:
    """The list to show for a duel.

    `in_experiment` is False when the list was made locally (a fallback or concluded duel, or
    the service did not answer in time with a deadline given): then `token` is None and posting
    its clicks is a no-op.
    """

    documents: list[ShownDocument]
    token: str | None
    method: str | None
    duel_id: str | None
    experiment_id: int
    expires_at: str | None
    in_experiment: bool
    fallback_reason: str | None = None
    error: JoustError | None = field(default=None, repr=False, compare=False)
    offset: int = 0
    """The position of the first document in the whole interleaving (0 for the first page)."""

    @property
    def ids(self) -> list[str]:
        """The shown document ids, in order."""
        return [document.id for document in self.documents]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Interleaving:
        return cls(
            [ShownDocument(d["id"], d.get("ranker")) for d in data["documents"]],
            data["interleaving_token"],
            data["method"],
            data["duel_id"],
            data["experiment_id"],
            data["expires_at"],
            True,
            offset=data.get("offset", 0),
        )

    @classmethod
    def local(
        cls, duel: Duel, ids: list[str], reason: str | None, error: JoustError | None
    ) -> Interleaving:
        shown = [ShownDocument(doc_id, None) for doc_id in ids]
        return cls(shown, None, None, duel.duel_id, duel.experiment_id, None, False, reason, error)


@dataclass(slots=True, frozen=True)
class PairOutcome:
    """One pair's result in a multi-ranker query: a ranker of the pair, or "tie"."""

    rankers: tuple[str, str]
    winner: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PairOutcome:
        first, second = data["rankers"]
        return cls((first, second), data["winner"])


def _pair_outcomes(data: dict[str, Any]) -> list[PairOutcome]:
    return [PairOutcome.from_json(pair) for pair in data.get("outcomes") or ()]


@dataclass(slots=True, frozen=True)
class OutcomeResult:
    """The service's record of a duel's outcome.

    `status` is "recorded", or "duplicate" when this outcome was already recorded (a retry):
    either way the outcome counts exactly once.
    """

    duel_id: str
    experiment_id: int
    status: str
    winner: str | None
    outcomes: list[PairOutcome]

    @property
    def duplicate(self) -> bool:
        return self.status == "duplicate"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutcomeResult:
        return cls(
            data["duel_id"],
            data["experiment_id"],
            data["status"],
            data.get("winner"),
            _pair_outcomes(data),
        )


@dataclass(slots=True, frozen=True)
class ClickResult:
    """The outcome the service recorded from an interleaving's clicks, and each ranker's credit."""

    duel_id: str
    experiment_id: int
    status: str
    method: str
    winner: str | None
    outcomes: list[PairOutcome]
    credit: dict[str, float]

    @property
    def duplicate(self) -> bool:
        return self.status == "duplicate"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClickResult:
        return cls(
            data["duel_id"],
            data["experiment_id"],
            data["status"],
            data["method"],
            data.get("winner"),
            _pair_outcomes(data),
            data["credit"],
        )


@dataclass(slots=True, frozen=True)
class BatchResult:
    """The answer to a batch of outcomes: counts, and per item a record or the item's error."""

    recorded: int
    duplicates: int
    rejected: int
    results: list[OutcomeResult | JoustError]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchResult:
        return cls(
            data["recorded"],
            data["duplicates"],
            data["rejected"],
            [item_result(item) for item in data["results"]],
        )


def item_result(item: dict[str, Any]) -> OutcomeResult | JoustError:
    """One batch item's result: its record, or the error it would have had alone."""
    if "error" in item:
        error = item["error"]
        return error_for(int(item["status"]), str(error["code"]), str(error["message"]))
    return OutcomeResult.from_json(item)


@dataclass(slots=True, frozen=True)
class ConversionResult:
    """The service's record of a conversion: "recorded", or "duplicate" for a retry (either way
    it counts exactly once per duel, metric and event id)."""

    duel_id: str
    experiment_id: int
    metric: str
    event_id: str
    status: str

    @property
    def duplicate(self) -> bool:
        return self.status == "duplicate"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConversionResult:
        return cls(
            data["duel_id"],
            data["experiment_id"],
            data["metric"],
            data["event_id"],
            data["status"],
        )


@dataclass(slots=True, frozen=True)
class ConversionBatchResult:
    """The answer to a batch of conversions: counts, and per item a record or the item's error."""

    recorded: int
    duplicates: int
    rejected: int
    results: list[ConversionResult | JoustError]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConversionBatchResult:
        def one(item: dict[str, Any]) -> ConversionResult | JoustError:
            if "error" in item:
                error = item["error"]
                return error_for(int(item["status"]), str(error["code"]), str(error["message"]))
            return ConversionResult.from_json(item)

        return cls(
            data["recorded"],
            data["duplicates"],
            data["rejected"],
            [one(item) for item in data["results"]],
        )


@dataclass(slots=True, frozen=True)
class MetricView:
    """One metric of an experiment: its settings, counts, win matrix, champion and decision."""

    name: str
    credit: str
    primary: bool
    outcomes: int
    ties: int
    champion: str | None
    champion_confident: bool
    decision: dict[str, Any]
    # {"rankers": [...], "wins": [[...]], "ties": [[...]]}; None above the matrix size limit.
    matrix: dict[str, Any] | None
    window_seconds: int | None = None
    missing: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MetricView:
        return cls(
            data["name"],
            data["credit"],
            data["primary"],
            data["outcomes"],
            data["ties"],
            data.get("champion"),
            data["champion_confident"],
            data["decision"],
            data.get("matrix"),
            data.get("window_seconds"),
            data.get("missing"),
        )


@dataclass(slots=True, frozen=True)
class UnitsView:
    """How the experiment treats units: the window in which a unit and query keep their duel,
    and whether evidence counts per query or per unit (`votes_counted` with `unit`)."""

    window_seconds: int
    aggregation: str
    votes_counted: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitsView:
        return cls(data["window_seconds"], data["aggregation"], data.get("votes_counted"))


@dataclass(slots=True, frozen=True)
class SegmentView:
    """One segment label's counts, win matrix (rows and columns: `SegmentsView.rankers`; None
    above 50 active rankers), champion and decision, from its own outcomes."""

    label: str
    outcomes: int
    ties: int
    wins: list[list[int]] | None
    champion: str | None
    champion_confident: bool
    # {"decided", "kind", "champion", "winners", "possible_best"}
    decision: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SegmentView:
        return cls(
            data["label"],
            data["outcomes"],
            data["ties"],
            data.get("wins"),
            data.get("champion"),
            data["champion_confident"],
            data["decision"],
        )


@dataclass(slots=True, frozen=True)
class SegmentsView:
    """The experiment's segment limit, the active rankers (the rows and columns of each
    segment's wins) and its segments."""

    max_segments: int
    rankers: list[str]
    segments: list[SegmentView]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SegmentsView:
        return cls(
            data["max_segments"],
            data["rankers"],
            [SegmentView.from_json(s) for s in data["segments"]],
        )


@dataclass(slots=True, frozen=True)
class PolicySpec:
    name: str
    params: dict[str, Any]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PolicySpec:
        return cls(data["name"], data.get("params") or {})


@dataclass(slots=True, frozen=True)
class InterleavingSettings:
    method: str
    options: dict[str, Any]
    max_length: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InterleavingSettings:
        return cls(data["method"], data.get("options") or {}, data.get("max_length"))


@dataclass(slots=True, frozen=True)
class Ranker:
    name: str
    index: int
    active: bool
    wins: int
    losses: int
    ties: int
    comparisons: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ranker:
        return cls(
            data["name"],
            data["index"],
            data["active"],
            data["wins"],
            data["losses"],
            data["ties"],
            data["comparisons"],
        )


@dataclass(slots=True, frozen=True)
class RankerRef:
    """A ranker as adding or retiring it answers."""

    name: str
    index: int
    active: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankerRef:
        return cls(data["name"], data["index"], data["active"])


@dataclass(slots=True, frozen=True)
class Champion:
    """The current best ranker and the evidence for it (`basis`; see docs/api.md)."""

    ranker: str | None
    basis: str
    confident: bool
    condorcet_candidate: str | None
    copeland_leaders: list[str]
    copeland_score: int
    policy_belief: str | None
    contenders: list[str]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Champion:
        return cls(
            data["ranker"],
            data["basis"],
            data["confident"],
            data["condorcet_candidate"],
            data["copeland_leaders"],
            data["copeland_score"],
            data["policy_belief"],
            data["contenders"],
        )


@dataclass(slots=True, frozen=True)
class MissingEvidence:
    """What a possible best ranker lacks against one rival: the estimate that it wins, its
    anytime-valid bounds, the comparisons so far and roughly how many more are needed."""

    rival: str
    comparisons: float
    preference: float
    lower: float
    upper: float
    outcomes_needed: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MissingEvidence:
        return cls(
            data["rival"],
            data["comparisons"],
            data["preference"],
            data["lower"],
            data["upper"],
            data["outcomes_needed"],
        )


@dataclass(slots=True, frozen=True)
class Contender:
    """A ranker that may still be best, with the evidence it lacks, the most needed first
    (`missing` is cut to 16)."""

    ranker: str
    missing: list[MissingEvidence]
    missing_total: int
    #: How many of the missing rivals were never compared with it (they are listed last).
    never_compared: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Contender:
        return cls(
            data["ranker"],
            [MissingEvidence.from_json(m) for m in data["missing"]],
            data["missing_total"],
            data["never_compared"],
        )


@dataclass(slots=True, frozen=True)
class Decision:
    """Whether joust is sure which ranker is best, at error probability delta (docs/api.md,
    "The decision"); until then, the rankers that may still be best (cut to 32)."""

    decided: bool
    kind: str
    champion: str | None
    winners: list[str]
    possible_best: list[Contender]
    possible_best_total: int
    outcomes_needed: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            data["decided"],
            data["kind"],
            data["champion"],
            data["winners"],
            [Contender.from_json(c) for c in data["possible_best"]],
            data["possible_best_total"],
            data["outcomes_needed"],
        )


@dataclass(slots=True, frozen=True)
class Experiment:
    """An experiment's settings, counts, rankers and champion."""

    id: int
    name: str
    status: str
    policy: PolicySpec
    tie_rule: str
    interleaving: InterleavingSettings
    rankers_per_query: int
    attribution_window_secs: int
    seed: int
    created_at: datetime
    version: int
    updated_at: datetime
    duels_issued: int
    outcomes_applied: int
    ties_recorded: int
    rankers: list[Ranker]
    champion: Champion
    browser_clicks: dict[str, Any] | None = None
    # None from a server without decisions.
    decision: Decision | None = None
    decision_settings: dict[str, Any] | None = None
    stop_rule: dict[str, Any] | None = None
    webhook: dict[str, Any] | None = None
    # Empty, "click" and True from a server without metrics.
    metrics: list[MetricView] = field(default_factory=list)
    primary_metric: str = "click"
    metrics_agree: bool = True
    # None from a server without units and segments.
    units: UnitsView | None = None
    segments: SegmentsView | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Experiment:
        return cls(
            data["id"],
            data["name"],
            data["status"],
            PolicySpec.from_json(data["policy"]),
            data["tie_rule"],
            InterleavingSettings.from_json(data["interleaving"]),
            data["rankers_per_query"],
            data["attribution_window_secs"],
            data["seed"],
            _parse_time(data["created_at"]),
            data["version"],
            _parse_time(data["updated_at"]),
            data["duels_issued"],
            data["outcomes_applied"],
            data["ties_recorded"],
            [Ranker.from_json(r) for r in data["rankers"]],
            Champion.from_json(data["champion"]),
            data.get("browser_clicks"),
            Decision.from_json(data["decision"]) if data.get("decision") else None,
            data.get("decision_settings"),
            data.get("stop_rule"),
            data.get("webhook"),
            [MetricView.from_json(m) for m in data.get("metrics", [])],
            data.get("primary_metric", "click"),
            data.get("metrics_agree", True),
            UnitsView.from_json(data["units"]) if data.get("units") else None,
            SegmentsView.from_json(data["segments"]) if data.get("segments") else None,
        )


@dataclass(slots=True, frozen=True)
class ExperimentSummary:
    """An experiment as the list shows it (`rankers` is how many, retired ones included)."""

    id: int
    name: str
    status: str
    policy: PolicySpec
    rankers: int
    created_at: datetime
    version: int
    outcomes_applied: int
    ties_recorded: int
    champion: str | None
    champion_confident: bool
    # False from a server without decisions.
    decided: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExperimentSummary:
        return cls(
            data["id"],
            data["name"],
            data["status"],
            PolicySpec.from_json(data["policy"]),
            data["rankers"],
            _parse_time(data["created_at"]),
            data["version"],
            data["outcomes_applied"],
            data["ties_recorded"],
            data["champion"],
            data["champion_confident"],
            data.get("decided", False),
        )


@dataclass(slots=True, frozen=True)
class ExperimentPage:
    """One page of the experiment list; `next_after` is None on the last page."""

    experiments: list[ExperimentSummary]
    next_after: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExperimentPage:
        return cls(
            [ExperimentSummary.from_json(e) for e in data["experiments"]],
            data["next_after"],
        )


@dataclass(slots=True, frozen=True)
class Matrix:
    """Win and tie counts and the estimated preference matrix with its confidence bounds."""

    rankers: list[str]
    wins: list[list[int]]
    ties: list[list[int]]
    preference: list[list[float]]
    lower: list[list[float]]
    upper: list[list[float]]
    confidence: float
    version: int

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Matrix:
        return cls(
            data["rankers"],
            data["wins"],
            data["ties"],
            data["preference"],
            data["lower"],
            data["upper"],
            data["confidence"],
            data["version"],
        )


@dataclass(slots=True, frozen=True)
class HistoryPoint:
    at: datetime
    version: int
    outcomes_applied: int
    ties_recorded: int
    duels_issued: int
    champion: str | None
    basis: str
    confident: bool
    wins: list[int]
    losses: list[int]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryPoint:
        return cls(
            _parse_time(data["at"]),
            data["version"],
            data["outcomes_applied"],
            data["ties_recorded"],
            data["duels_issued"],
            data["champion"],
            data["basis"],
            data["confident"],
            data["wins"],
            data["losses"],
        )


@dataclass(slots=True, frozen=True)
class History:
    """An experiment's history points (thinned evenly by the service past `max_points`)."""

    experiment_id: int
    rankers: list[str]
    total_points: int
    points: list[HistoryPoint]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> History:
        return cls(
            data["experiment_id"],
            data["rankers"],
            data["total_points"],
            [HistoryPoint.from_json(p) for p in data["points"]],
        )
