"""The backend flow with the asyncio client and buffer."""

from __future__ import annotations

import asyncio

import pytest

from joust_client import AsyncClient, NotFound

from joust_server import JoustServer


def test_async_backend_flow(server: JoustServer) -> None:
    async def run() -> None:
        async with AsyncClient(server.url) as client:
            experiment = await client.create_experiment("async-flow", ["bm25", "bert"])
            async with client.outcome_buffer(max_batch=50, flush_interval=0.02) as buffer:
                for query in range(60):
                    duel = await client.duel(experiment.id, deadline=1.0, fallback="bm25")
                    assert duel.in_experiment
                    lists = {name: [f"{name}-{i}" for i in range(4)] for name in duel.rankers}
                    shown = await client.interleave(duel, lists, deadline=1.0)
                    assert shown.in_experiment
                    if query % 2:
                        assert buffer.add_clicks(shown, clicked=[shown.ids[0]])
                    else:
                        assert buffer.add_outcome(duel, winner="tie")
                assert await buffer.flush(timeout=10)
            assert buffer.recorded == 60 and buffer.rejected == 0

            duel = await client.duel(experiment.id)
            result = await client.outcome(duel, winner=duel.rankers[0])
            assert result is not None and result.status == "recorded"
            again = await client.outcome(duel, winner=duel.rankers[0])
            assert again is not None and again.duplicate

            for _ in range(100):
                current = await client.experiment(experiment.id)
                if current.outcomes_applied + current.ties_recorded == 61:
                    break
                await asyncio.sleep(0.02)
            assert current.outcomes_applied + current.ties_recorded == 61

            ids = [summary.id async for summary in client.iter_experiments(page_size=1)]
            assert experiment.id in ids
            fresh, etag = await client.poll_experiment(experiment.id)
            assert fresh is not None
            assert await client.poll_experiment(experiment.id, etag) == (None, etag)
            assert (await client.matrix(experiment.id)).rankers == ["bm25", "bert"]
            assert (await client.history(experiment.id)).experiment_id == experiment.id
            with pytest.raises(NotFound):
                await client.experiment(987654321)

    asyncio.run(run())
