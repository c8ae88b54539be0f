"""A search backend's whole flow through the client openapi-python-client generates from
openapi.yaml, against a live joust (URL in argv[1]): if the spec drifts from the server, a call
here fails to parse, parses to the wrong type or meets an undocumented status.

Every answer must parse to the model the spec names for its status; nothing may answer 5xx."""

import datetime
import random
import sys

from joust_generated import Client
from joust_generated.api.experiments import (
    add_ranker,
    create_experiment,
    get_experiment,
    get_history,
    get_matrix,
    list_experiments,
    retire_ranker,
    set_experiment_status,
)
from joust_generated.api.queries import (
    create_duel,
    create_interleaving,
    record_clicks,
    record_outcome,
    record_outcomes,
)
from joust_generated.api.service import describe_key, health, ready
from joust_generated.models import (
    ClickRecord,
    ClicksById,
    ClicksByPosition,
    CreateExperiment,
    CreditsOutcome,
    CreditsOutcomeCredits,
    Duel,
    ErrorResponse,
    ExperimentChange,
    BrowserClicks,
    Experiment,
    ExperimentPage,
    HealthStatus,
    History,
    InterleaveInput,
    InterleaveInputLists,
    InterleavingResult,
    InterleavingSettings,
    InterleavingSettingsMethod,
    ItemError,
    KeyScope,
    Matrix,
    NewRanker,
    OrderingOutcome,
    OutcomeBatch,
    OutcomeBatchResult,
    OutcomeRecord,
    PolicySpec,
    PolicySpecName,
    RankerRef,
    Status,
    WinnerOutcome,
)

client = Client(base_url=sys.argv[1], raise_on_unexpected_status=True)
rng = random.Random(1)
checked = 0


def parsed(response, model):
    """The answer's parsed body, which must be `model` (so the status was documented). Never
    `object`: a missing body parses to None, which is an object too."""
    global checked
    assert response.status_code < 500, (response.status_code, response.content)
    assert isinstance(response.parsed, model), (response.status_code, response.content)
    checked += 1
    return response.parsed


def refused(response, status: int, code: str) -> None:
    error = parsed(response, ErrorResponse)
    assert response.status_code == status, (response.status_code, response.content)
    assert error.error.code.value == code, error


assert parsed(health.sync_detailed(client=client), HealthStatus).status == "ok"
assert parsed(ready.sync_detailed(client=client), HealthStatus).status == "ready"
assert parsed(describe_key.sync_detailed(client=client), KeyScope).scope.value == "open"

# A two-ranker experiment through interleaving and clicks.
body = CreateExperiment(
    name="generated-client",
    rankers=["bm25", "bert", "colbert"],
    policy=PolicySpec(name=PolicySpecName.RUCB),
    interleaving=InterleavingSettings(method=InterleavingSettingsMethod.TEAM_DRAFT),
    seed=7,
)
experiment = parsed(create_experiment.sync_detailed(client=client, body=body), Experiment)
eid = experiment.id
for query in range(300):
    duel = parsed(create_duel.sync_detailed(eid, client=client), Duel)
    lists = InterleaveInputLists.from_dict(
        {r: [f"{r}-{i}" for i in range(5)] + ["shared"] for r in set(duel.rankers)}
    )
    shown = parsed(
        create_interleaving.sync_detailed(
            client=client, body=InterleaveInput(duel_token=duel.duel_token, lists=lists)
        ),
        InterleavingResult,
    )
    ids = [d.id for d in shown.documents]
    clicks = (
        ClicksById(interleaving_token=shown.interleaving_token, clicks=rng.sample(ids, 1))
        if query % 2
        else ClicksByPosition(interleaving_token=shown.interleaving_token, click_positions=[0])
    )
    record = parsed(record_clicks.sync_detailed(client=client, body=clicks), ClickRecord)
    assert record.status.value == "recorded", record
    # Retried clicks are a duplicate, never a second count.
    again = parsed(record_clicks.sync_detailed(client=client, body=clicks), ClickRecord)
    assert again.status.value == "duplicate", again

# Direct outcomes, a conflict, and a batch with one refused item.
duel = parsed(create_duel.sync_detailed(eid, client=client), Duel)
winner = WinnerOutcome(duel_token=duel.duel_token, winner=duel.rankers[0])
parsed(record_outcome.sync_detailed(client=client, body=winner), OutcomeRecord)
# A tie for a duel already won conflicts (a self-duel's outcome is a tie whatever it names).
if duel.rankers[0] != duel.rankers[1]:
    conflict = WinnerOutcome(duel_token=duel.duel_token, winner="tie")
    refused(record_outcome.sync_detailed(client=client, body=conflict), 409, "outcome_conflict")
duels = [parsed(create_duel.sync_detailed(eid, client=client), Duel) for _ in range(20)]
batch = OutcomeBatch(
    outcomes=[WinnerOutcome(duel_token=d.duel_token, winner=d.rankers[1]) for d in duels]
    + [WinnerOutcome(duel_token="not-a-token", winner="tie")]
)
result = parsed(record_outcomes.sync_detailed(client=client, body=batch), OutcomeBatchResult)
assert (result.recorded, result.rejected) == (20, 1), result
assert isinstance(result.results[-1], ItemError), result.results[-1]
assert isinstance(result.results[0], OutcomeRecord), result.results[0]

# Reads, conditional reads and history.
response = get_experiment.sync_detailed(eid, client=client)
parsed(response, Experiment)
etag = response.headers["etag"]
unchanged = get_experiment.sync_detailed(eid, client=client, if_none_match=etag)
assert unchanged.status_code == 304 and unchanged.parsed is None, unchanged.status_code
parsed(get_matrix.sync_detailed(eid, client=client), Matrix)
since = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
parsed(get_history.sync_detailed(eid, client=client, since=since), History)
naive = get_history.sync_detailed(eid, client=client, since=datetime.datetime(2020, 1, 1))
# A time without its timezone goes out as such and is refused with an answer saying so.
refused(naive, 400, "invalid_query")
assert "timezone" in naive.parsed.error.message, naive.parsed

# Rankers, status changes and refusals.
added = parsed(add_ranker.sync_detailed(eid, client=client, body=NewRanker(name="splade")), RankerRef)
assert (added.name, added.active) == ("splade", True), added
refused(add_ranker.sync_detailed(eid, client=client, body=NewRanker(name="tie")), 422, "reserved_name")
retired = parsed(retire_ranker.sync_detailed(eid, "colbert", client=client), RankerRef)
assert (retired.name, retired.active) == ("colbert", False), retired
pages = ExperimentChange(browser_clicks=BrowserClicks(origins=["https://search.example.com"]))
changed = parsed(set_experiment_status.sync_detailed(eid, client=client, body=pages), Experiment)
assert changed.browser_clicks.origins == ["https://search.example.com"], changed.browser_clicks
bad_origin = ExperimentChange(browser_clicks=BrowserClicks(origins=["https://search.example.com/"]))
refused(set_experiment_status.sync_detailed(eid, client=client, body=bad_origin), 422, "invalid_origin")
paused = ExperimentChange(status=Status.PAUSED)
parsed(set_experiment_status.sync_detailed(eid, client=client, body=paused), Experiment)
refused(create_duel.sync_detailed(eid, client=client), 409, "experiment_paused")
refused(get_experiment.sync_detailed(10**12, client=client), 404, "unknown_experiment")

# A multi-ranker experiment: credits and orderings with tied groups.
multi = CreateExperiment(
    name="generated-multi",
    rankers=[f"r{i}" for i in range(6)],
    policy=PolicySpec(name=PolicySpecName.SELF_SPARRING),
    rankers_per_query=4,
)
mid = parsed(create_experiment.sync_detailed(client=client, body=multi), Experiment).id
for query in range(100):
    duel = parsed(create_duel.sync_detailed(mid, client=client), Duel)
    names = list(duel.rankers)
    if query % 2:
        credits = CreditsOutcomeCredits.from_dict({n: float(rng.randint(0, 2)) for n in names})
        body = CreditsOutcome(duel_token=duel.duel_token, credits_=credits)
    else:
        body = OrderingOutcome(duel_token=duel.duel_token, ordering=[names[0], names[1:]] if len(names) > 1 else names)
    parsed(record_outcome.sync_detailed(client=client, body=body), OutcomeRecord)

# Paging through both experiments.
page = parsed(list_experiments.sync_detailed(client=client, limit=1), ExperimentPage)
seen = [e.id for e in page.experiments]
while page.next_after is not None:
    page = parsed(list_experiments.sync_detailed(client=client, limit=1, after=page.next_after), ExperimentPage)
    seen += [e.id for e in page.experiments]
assert seen == [eid, mid], seen

print(f"generated client: {checked} answers parsed to their documented models, none 5xx")
