"""The offline answer to "which ranker is best", to set beside the one joust finds from clicks.

The simulated users know which document they want, so here the rankers can be scored directly:
mean reciprocal rank of the wanted document over fresh queries drawn the way the users draw
theirs. A real search team has no such labels; that is why it runs the online experiment.
"""

import random
from collections.abc import Mapping, Sequence

from .click_model import known_item_query
from .corpus import Document
from .rankers import Ranker


def mean_reciprocal_rank(
    rankers: Mapping[str, Ranker], documents: Sequence[Document], queries: int, seed: int, depth: int = 10
) -> dict[str, float]:
    rng = random.Random(seed)
    totals = dict.fromkeys(rankers, 0.0)
    for _ in range(queries):
        wanted = rng.choice(documents)
        query = known_item_query(wanted, rng)
        for name, ranker in rankers.items():
            results = ranker.rank(query, depth)
            if wanted.id in results:
                totals[name] += 1 / (results.index(wanted.id) + 1)
    return {name: total / queries for name, total in totals.items()}
