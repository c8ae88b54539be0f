"""The whole example against a live joust: users' clicks must reach joust exactly once per page
shown in the experiment, and must make the better ranker lead."""

from search_backend.driver import Run, RunConfig


def test_clicks_are_recorded_and_the_better_ranker_leads(joust_url: str) -> None:
    # A bounded run: it stops at the first confident champion, or after 25 s on a slow machine.
    run = Run(RunConfig(joust_url, max_queries=5_000, max_seconds=25, seed=7))
    try:
        summary = run.simulate_users()
    finally:
        run.close()
    print(summary)

    in_experiment = summary.queries - summary.pages_outside_experiment
    assert in_experiment > 100
    # Every page shown in the experiment was posted once, a win or a tie, and nothing was lost.
    assert summary.outcomes_recorded == in_experiment
    assert summary.outcomes_dropped == summary.outcomes_rejected == 0
    # The offline check says bm25 is the best ranker for these users...
    assert max(summary.offline_mrr, key=summary.offline_mrr.__getitem__) == "bm25"
    # ...and the users' clicks alone say so too.
    assert summary.champion == "bm25"
    assert summary.wins["bm25"] == max(summary.wins.values())
