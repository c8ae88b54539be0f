"""The search backend's request path, with the three joust calls a query makes.

    GET  /search?q=...   ask joust for a duel, rank with the duel's rankers, show their
                         interleaving, remember what was shown
    POST /feedback       {"search_id": ..., "clicked": [document ids]}: the page reports its
                         clicks once the user is done with it; they go to joust through the
                         SDK's outcome buffer, off the request path

joust is never allowed to slow a search down or break it: both calls have a deadline, past which
the page shows a ranker's own list and leaves the experiment out of it.
"""

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from joust_client import Client, Interleaving, OutcomeBuffer

from .corpus import Document
from .rankers import Ranker

# How many shown result pages wait for their clicks. A page whose clicks never come is
# forgotten when newer ones push it out; its duel then simply has no outcome.
MAX_PENDING_PAGES = 100_000


@dataclass(frozen=True)
class SearchSettings:
    experiment_id: int
    default_ranker: str  # served when joust is not asked, too slow or failing
    deadline: float = 0.05  # seconds a search waits for each joust call, the duel and the interleaving
    results_per_page: int = 10


@dataclass(frozen=True)
class ResultPage:
    search_id: str
    ids: list[str]  # the documents shown, in order
    rankers: list[str]  # the rankers compared; the default ranker alone on a fallback
    in_experiment: bool  # whether the page's clicks count in the experiment


class SearchBackend:
    def __init__(
        self,
        documents: Mapping[str, Document],
        rankers: Mapping[str, Ranker],
        client: Client,
        buffer: OutcomeBuffer,
        settings: SearchSettings,
    ):
        self.documents, self.rankers = documents, rankers
        self.client, self.buffer, self.settings = client, buffer, settings
        self._pending: OrderedDict[str, Interleaving] = OrderedDict()
        self._lock = threading.Lock()
        # Pages served, and those shown outside the experiment (a deadline passed, joust failed):
        # a rising share of the latter says the deadline is too tight or joust is in trouble.
        self.pages_served = 0
        self.pages_outside_experiment = 0

    def search(self, query: str) -> ResultPage:
        settings = self.settings
        # 1. Which rankers to compare for this query. With a fallback the SDK never raises: past
        #    the deadline, or with joust down, the duel is the default ranker alone and is not
        #    part of the experiment (duel.in_experiment is False).
        duel = self.client.duel(
            settings.experiment_id, deadline=settings.deadline, fallback=settings.default_ranker
        )
        # 2. Each of the duel's rankers ranks the query (a self-duel names one ranker twice).
        lists = {
            name: self.rankers[name].rank(query, settings.results_per_page) for name in set(duel.rankers)
        }
        # 3. joust interleaves them and signs what it showed, so it can credit the clicks later.
        #    With a deadline this never raises either: a late or failed answer shows the duel's
        #    first ranker's list, out of the experiment. A fallback duel makes no request at all.
        shown = self.client.interleave(duel, lists, deadline=settings.deadline)
        search_id = uuid.uuid4().hex
        with self._lock:
            self.pages_served += 1
            self.pages_outside_experiment += not shown.in_experiment
            self._pending[search_id] = shown
            while len(self._pending) > MAX_PENDING_PAGES:
                self._pending.popitem(last=False)
        return ResultPage(search_id, shown.ids, list(duel.rankers), shown.in_experiment)

    def feedback(self, search_id: str, clicked: list[str]) -> bool:
        """Hands a page's clicks to the outcome buffer; False for an unknown or repeated page.

        No clicks at all is sent too: joust records the duel as a tie, which counts the query
        without favouring either ranker."""
        with self._lock:
            shown = self._pending.pop(search_id, None)
        if shown is None:
            return False
        # Never blocks: the buffer posts in the background, in batches, and retries while joust
        # is unavailable. It answers False only when it is full, which costs one outcome.
        self.buffer.add_clicks(shown, clicked=clicked)
        return True
