"""Exports through the asyncio client, against live servers, as the sync client's tests: every
outcome once in pages, resumed from the cursor, across a restart of the server mid-export, and
as a DataFrame when pandas is installed."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Awaitable, Callable

import pytest

from joust_client import AsyncClient, Experiment

from joust_server import JoustServer


async def post_outcomes(client: AsyncClient, experiment: Experiment, n: int) -> set[str]:
    """Posts `n` outcomes (a tie every third); returns their duel ids."""
    ids = set()
    for number in range(n):
        duel = await client.duel(experiment.id)
        winner = "tie" if number % 3 == 0 else duel.rankers[number % 2]
        result = await client.outcome(duel, winner=winner)
        assert result is not None and result.status == "recorded"
        assert duel.duel_id is not None
        ids.add(duel.duel_id)
    return ids


async def until(condition: Callable[[], Awaitable[bool]], seconds: float = 10.0) -> None:
    """Rows become final once every older transaction has ended: poll for them."""
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "not within the deadline"
        await asyncio.sleep(0.05)


def test_every_outcome_once_in_pages_then_only_the_new_ones(server: JoustServer) -> None:
    async def run() -> None:
        async with AsyncClient(server.url) as client:
            experiment = await client.create_experiment(
                "async-export-sdk", ["bm25", "bert", "colbert"], seed=5
            )
            posted = await post_outcomes(client, experiment, 30)

            async def all_final() -> bool:
                return len(await client.iter_outcomes(experiment.id, page_size=7).rows()) == 30

            await until(all_final)
            rows = client.iter_outcomes(experiment.id, page_size=7)
            read = [row async for row in rows]
            ids = [row["duel_id"] for row in read]
            assert len(ids) == len(set(ids)) and set(ids) == posted
            assert rows.cursor is not None
            assert all(len(row["rankers"]) == 2 and row["metric"] == "click" for row in read)
            assert all(row["posted"] == {"winner": row["winner"]} for row in read)

            later = await post_outcomes(client, experiment, 2)
            cursor = rows.cursor

            async def new_ones_final() -> bool:
                return len(await client.iter_outcomes(experiment.id, after=cursor).rows()) == 2

            await until(new_ones_final)
            since = await client.iter_outcomes(experiment.id, after=cursor).rows()
            assert {r["duel_id"] for r in since} == later

    asyncio.run(run())


def test_an_export_resumes_across_a_restart_of_the_server(restart_server: JoustServer) -> None:
    joust = restart_server

    async def run() -> None:
        async with AsyncClient(joust.url, timeout=2.0) as client:
            experiment = await client.create_experiment(
                "async-export-restart", ["bm25", "bert"], seed=6
            )
            posted = await post_outcomes(client, experiment, 40)

            async def all_final() -> bool:
                return len(await client.iter_outcomes(experiment.id).rows()) == 40

            await until(all_final)
            ids = []
            async for row in client.iter_outcomes(experiment.id, page_size=5, retry_wait=0.2):
                ids.append(row["duel_id"])
                if len(ids) == 12:
                    # Mid-export, mid-page: the next reads fail until the server is back.
                    await asyncio.to_thread(joust.stop)
                    await asyncio.to_thread(joust.start)
            assert len(ids) == len(set(ids)) and set(ids) == posted

    asyncio.run(run())


def test_a_data_frame_when_pandas_is_installed(server: JoustServer) -> None:
    async def run() -> None:
        async with AsyncClient(server.url) as client:
            experiment = await client.create_experiment("async-export-frame", ["bm25", "bert"])
            await post_outcomes(client, experiment, 4)
            if importlib.util.find_spec("pandas") is None:
                with pytest.raises(ImportError, match="pandas"):
                    await client.outcomes_frame(experiment.id)
                return

            async def all_final() -> bool:
                return len(await client.outcomes_frame(experiment.id)) == 4

            await until(all_final)
            frame = await client.outcomes_frame(experiment.id)
            assert {"duel_id", "rankers", "winner", "recorded_at", "posted"} <= set(frame.columns)

    asyncio.run(run())
