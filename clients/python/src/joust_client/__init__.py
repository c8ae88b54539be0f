"""The Python client of joust, online ranker evaluation with dueling bandits.

from joust_client import Client
client = Client("http://127.0.0.1:8080", api_key=None)
duel = client.duel(experiment_id, deadline=0.05, fallback="bm25")  # never raises
shown = client.interleave(duel, {name: results[name] for name in duel.rankers})
buffer = client.outcome_buffer()
buffer.add_clicks(shown, clicked=["doc-3"])                        # never blocks
"""

from ._buffer_state import OnError, PendingItem
from ._export import AsyncExportRows, ExportRows
from .async_buffer import AsyncOutcomeBuffer
from .async_client import AsyncClient
from .buffer import OutcomeBuffer
from .client import Client
from .errors import (
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    JoustError,
    NotFound,
    PayloadTooLarge,
    ServerError,
    Timeout,
    TransportError,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
)
from .models import (
    BatchResult,
    Champion,
    ClickResult,
    Contender,
    ConversionBatchResult,
    ConversionResult,
    Decision,
    Duel,
    Experiment,
    ExperimentPage,
    ExperimentSummary,
    History,
    HistoryPoint,
    Interleaving,
    InterleavingSettings,
    Matrix,
    MetricView,
    MissingEvidence,
    OutcomeResult,
    PairOutcome,
    PolicySpec,
    Ranker,
    RankerRef,
    SegmentsView,
    SegmentView,
    ShownDocument,
    UnitsView,
)

__all__ = [
    "AsyncClient",
    "AsyncExportRows",
    "AsyncOutcomeBuffer",
    "BadRequest",
    "BatchResult",
    "Champion",
    "ClickResult",
    "Client",
    "Conflict",
    "Contender",
    "ConversionBatchResult",
    "ConversionResult",
    "Decision",
    "Duel",
    "Experiment",
    "ExperimentPage",
    "ExperimentSummary",
    "ExportRows",
    "Forbidden",
    "Gone",
    "History",
    "HistoryPoint",
    "Interleaving",
    "InterleavingSettings",
    "Invalid",
    "JoustError",
    "Matrix",
    "MetricView",
    "MissingEvidence",
    "NotFound",
    "OnError",
    "OutcomeBuffer",
    "OutcomeResult",
    "PairOutcome",
    "PayloadTooLarge",
    "PendingItem",
    "PolicySpec",
    "Ranker",
    "RankerRef",
    "SegmentView",
    "SegmentsView",
    "ServerError",
    "ShownDocument",
    "Timeout",
    "TransportError",
    "Unauthorized",
    "Unavailable",
    "UnitsView",
    "UnsupportedMediaType",
]
