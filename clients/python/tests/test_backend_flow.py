"""A search backend's whole flow against a live server, with the sync client."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from joust_client import (
    Client,
    Conflict,
    Duel,
    Experiment,
    Invalid,
    JoustError,
    NotFound,
    PendingItem,
)

from conftest import eventually


def results_for(ranker: str) -> list[str]:
    """A ranker's made-up result list: its own top documents around shared ones."""
    return [f"{ranker}-1", "shared-1", f"{ranker}-2", "shared-2", f"{ranker}-3"]


def test_backend_flow(client: Client) -> None:
    experiment = client.create_experiment(
        "backend-flow", ["bm25", "bert", "colbert"], policy="rucb", seed=7
    )
    assert isinstance(experiment, Experiment)
    assert [r.name for r in experiment.rankers] == ["bm25", "bert", "colbert"]
    assert experiment.policy.name == "rucb"

    rejected: list[tuple[PendingItem, JoustError]] = []
    recorded_directly = 0
    with client.outcome_buffer(
        max_batch=100,
        flush_interval=0.05,
        on_error=lambda item, error: rejected.append((item, error)),
    ) as buffer:
        for query in range(300):
            duel = client.duel(experiment.id, deadline=1.0, fallback="bm25")
            assert duel.in_experiment, duel.fallback_reason
            assert duel.fallback_reason is None
            assert len(duel.rankers) == 2
            if query % 3 == 0:
                # joust interleaves and credits the clicks
                shown = client.interleave(duel, {name: results_for(name) for name in duel.rankers})
                assert shown.in_experiment and shown.token
                assert shown.ids and len(set(shown.ids)) == len(shown.ids)
                result = client.clicks(shown, click_positions=[0])
                assert result is not None and result.status == "recorded"
                assert result.winner in (*duel.rankers, "tie")
                assert client.clicks(shown, click_positions=[0]).status == "duplicate"  # type: ignore[union-attr]
                recorded_directly += 1
            elif query % 3 == 1:
                outcome = client.outcome(duel, winner=duel.rankers[1])
                assert outcome is not None and outcome.status == "recorded"
                again = client.outcome(duel, winner=duel.rankers[1])
                assert again is not None and again.duplicate
                recorded_directly += 1
            else:
                assert buffer.add_outcome(duel, winner=duel.rankers[0])
        # An outcome the service can never accept is final: rejected, reported, not retried.
        fake = Duel(["bm25", "bert"], "not-a-token", None, experiment.id, None, False, True)
        assert buffer.add_outcome(fake, winner="bm25")
        assert buffer.flush(timeout=10)
    assert recorded_directly == 200
    assert buffer.recorded == 100 and buffer.duplicates == 0
    assert buffer.rejected == 1 and buffer.pending == 0 and buffer.dropped == 0
    assert [(item.kind, error.code, error.status) for item, error in rejected] == [
        ("outcome", "invalid_token", 400)
    ]

    def all_counted() -> bool:
        current = client.experiment(experiment.id)
        return current.outcomes_applied + current.ties_recorded == 300

    eventually(all_counted)
    current = client.experiment(experiment.id)
    assert sum(r.wins for r in current.rankers) == current.outcomes_applied
    assert current.version > experiment.version
    # Until decided, each ranker that may be best says what evidence it lacks.
    decision = current.decision
    assert decision is not None
    assert decision.decided or decision.possible_best
    for contender in decision.possible_best:
        assert 0 <= contender.never_compared <= contender.missing_total

    matrix = client.matrix(experiment.id)
    assert matrix.rankers == ["bm25", "bert", "colbert"]
    total_wins = sum(sum(row) for row in matrix.wins)
    assert total_wins == current.outcomes_applied
    assert 0 < matrix.confidence < 1

    history = client.history(experiment.id, since=datetime.now(timezone.utc) - timedelta(hours=1))
    assert history.experiment_id == experiment.id
    assert history.rankers == ["bm25", "bert", "colbert"]
    assert len(history.points) == history.total_points or history.total_points > 500


def test_pagination_and_polling(client: Client) -> None:
    created = [client.create_experiment(f"page-{i}", ["a", "b"]).id for i in range(5)]
    listed = [summary.id for summary in client.iter_experiments(page_size=2)]
    assert listed == sorted(listed)
    assert set(created) <= set(listed)
    first = client.list_experiments(limit=2)
    assert len(first.experiments) == 2 and first.next_after == first.experiments[-1].id

    experiment_id = created[0]
    experiment, etag = client.poll_experiment(experiment_id)
    assert experiment is not None and etag
    unchanged, same_etag = client.poll_experiment(experiment_id, etag)
    assert unchanged is None and same_etag == etag
    client.set_status(experiment_id, "paused")
    changed, new_etag = client.poll_experiment(experiment_id, etag)
    assert changed is not None and changed.status == "paused" and new_etag != etag

    matrix, matrix_etag = client.poll_matrix(experiment_id)
    assert matrix is not None and matrix_etag
    assert client.poll_matrix(experiment_id, matrix_etag) == (None, matrix_etag)


def test_typed_errors(client: Client) -> None:
    with pytest.raises(NotFound) as not_found:
        client.experiment(987654321)
    assert not_found.value.status == 404 and not_found.value.code == "unknown_experiment"

    with pytest.raises(Invalid) as invalid:
        client.create_experiment("reserved", ["tie", "bm25"])
    assert invalid.value.status == 422 and invalid.value.code == "reserved_name"

    experiment = client.create_experiment("errors", ["bm25", "bert"])
    duel = client.duel(experiment.id)
    assert client.outcome(duel, winner=duel.rankers[0]) is not None
    other = "tie" if duel.rankers[0] != duel.rankers[1] else None
    if other is not None:
        with pytest.raises(Conflict) as conflict:
            client.outcome(duel, winner=other)
        assert conflict.value.status == 409 and conflict.value.code == "outcome_conflict"

    client.set_status(experiment.id, "paused")
    with pytest.raises(Conflict) as paused:
        client.duel(experiment.id)
    assert paused.value.code == "experiment_paused"
    # A 4xx on the hot path is a fallback when one is given, with the reason kept.
    served = client.duel(experiment.id, deadline=1.0, fallback="bm25")
    assert not served.in_experiment and served.fallback_reason == "experiment_paused"
    assert served.rankers == ["bm25", "bm25"]
    unknown = client.duel(987654321, deadline=1.0, fallback=["bm25", "bert"])
    assert unknown.fallback_reason == "unknown_experiment" and unknown.rankers == ["bm25", "bert"]


def test_concluded_experiment_serves_its_champion_locally(client: Client) -> None:
    experiment = client.create_experiment("concluded", ["bm25", "bert"])
    for _ in range(20):
        duel = client.duel(experiment.id)
        client.outcome(duel, winner="bert" if "bert" in duel.rankers else duel.rankers[0])
    client.set_status(experiment.id, "concluded")
    duel = client.duel(experiment.id, deadline=1.0, fallback="bm25")
    assert duel.concluded and not duel.in_experiment and duel.token is None
    assert duel.fallback_reason is None
    shown = client.interleave(duel, {duel.rankers[0]: ["x", "y", "x", "z"]})
    assert shown.ids == ["x", "y", "z"] and not shown.in_experiment
    assert client.clicks(shown, clicked=["x"]) is None
    assert client.outcome(duel, winner=duel.rankers[0]) is None


def test_multi_ranker_credits_and_ordering(client: Client) -> None:
    experiment = client.create_experiment(
        "multi", ["f1", "f3", "f7", "f11"], policy="self_sparring", rankers_per_query=3
    )
    duel = client.duel(experiment.id)
    credits = {name: float(i == 0) for i, name in enumerate(duel.rankers)}
    result = client.outcome(duel, credits=credits)
    assert result is not None and result.status == "recorded"
    # Every pair's result; a query of one ranker (Self-Sparring drew it for every slot, which a
    # fresh experiment does about once in 16 queries) lists its self-duel as one tie.
    n = len(duel.rankers)
    assert len(result.outcomes) == (n * (n - 1) // 2 if n > 1 else 1)
    second = client.duel(experiment.id)
    # Self-Sparring may draw one ranker for every slot: then the duel shows one ranker and its
    # ordering has no tied group after the first place.
    first, *rest = second.rankers
    ordered = client.outcome(second, ordering=[first, rest] if rest else [first])
    assert ordered is not None and ordered.status == "recorded"
    # A buffered batch is refused whole over an empty tied group, so the SDK refuses it at once.
    with pytest.raises(ValueError, match="tied group"):
        client.outcome(client.duel(experiment.id), ordering=[[], *duel.rankers])


def test_rankers_and_delete(client: Client) -> None:
    experiment = client.create_experiment("rankers", ["a", "b", "c"])
    added = client.add_ranker(experiment.id, "d e/f")
    assert added.name == "d e/f" and added.active
    retired = client.retire_ranker(experiment.id, "d e/f")
    assert not retired.active
    client.delete_experiment(experiment.id)
    with pytest.raises(NotFound):
        client.experiment(experiment.id)
