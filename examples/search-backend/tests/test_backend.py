"""The backend's promises that need no server: the rankers find a document by its own words,
and a search is served by the default ranker when joust cannot be reached."""

import random

import pytest
from joust_client import Client

from search_backend.backend import SearchBackend, SearchSettings
from search_backend.click_model import CascadeClickModel
from search_backend.corpus import Document, load_corpus
from search_backend.rankers import Ranker, build_rankers


@pytest.fixture(scope="module")
def corpus() -> list[Document]:
    return load_corpus()


@pytest.fixture(scope="module")
def rankers(corpus: list[Document]) -> dict[str, Ranker]:
    return build_rankers(corpus)


def test_the_corpus_is_the_standard_librarys_help(corpus: list[Document]) -> None:
    ids = {document.id for document in corpus}
    assert len(corpus) > 500
    assert {"json", "json.dumps", "collections.Counter"} <= ids


def test_bm25_finds_a_document_by_its_own_words(rankers: dict[str, Ranker]) -> None:
    assert rankers["bm25"].rank("serialize obj json formatted str", 3)[0] == "json.dumps"


def test_a_search_falls_back_to_the_default_ranker_when_joust_is_unreachable(
    corpus: list[Document], rankers: dict[str, Ranker]
) -> None:
    client = Client("http://127.0.0.1:9", timeout=1.0)  # the discard port: nothing listens
    buffer = client.outcome_buffer(close_timeout=0.1)
    backend = SearchBackend(
        {document.id: document for document in corpus},
        rankers,
        client,
        buffer,
        SearchSettings(experiment_id=1, default_ranker="tfidf"),
    )
    try:
        page = backend.search("serialize obj json formatted str")
        assert page.ids == rankers["tfidf"].rank("serialize obj json formatted str", 10)
        assert set(page.rankers) == {"tfidf"} and not page.in_experiment
        # The page's clicks are taken and go nowhere: a fallback page is no part of the experiment.
        assert backend.feedback(page.search_id, page.ids[:1])
        assert buffer.pending == 0
    finally:
        buffer.close()
        client.close()


def test_the_click_model_clicks_the_wanted_document_and_stops() -> None:
    model = CascadeClickModel(click_if_not=0.0, stop_if_relevant=1.0)
    clicks = model.clicks(["a", "b", "wanted", "c"], "wanted", random.Random(1))
    assert clicks in ([], ["wanted"])
