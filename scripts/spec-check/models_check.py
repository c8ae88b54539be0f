"""The rules openapi.yaml states survive datamodel-code-generator: the models it generates must
refuse what the server refuses by the same rules (a ranker named `tie`; an outcome with none or
two of `winner`, `credits` and `ordering`), and take what the server takes."""

import importlib.util
import sys

import pydantic

spec = importlib.util.spec_from_file_location("models", sys.argv[1])
assert spec and spec.loader
models = importlib.util.module_from_spec(spec)
sys.modules["models"] = models  # pydantic's generic models look their module up by name
spec.loader.exec_module(models)


def refused(model: type[pydantic.BaseModel], value: object) -> bool:
    try:
        model.model_validate(value)
    except pydantic.ValidationError:
        return True
    return False


checks = {
    "a ranker named tie is refused": refused(
        models.CreateExperiment, {"name": "x", "rankers": ["tie", "bm25"]}
    ),
    "rankers whose names start with tie are taken": not refused(
        models.CreateExperiment, {"name": "x", "rankers": ["tie-break", "ties"]}
    ),
    "an outcome with no result is refused": refused(models.OutcomeInput, {"duel_token": "t"}),
    "an outcome with two results is refused": refused(
        models.OutcomeInput, {"duel_token": "t", "winner": "a", "credits": {"a": 1}}
    ),
    "an outcome with a winner is taken": not refused(
        models.OutcomeInput, {"duel_token": "t", "winner": "a"}
    ),
    "an ordering with a tied group is taken": not refused(
        models.OutcomeInput, {"duel_token": "t", "ordering": ["a", ["b", "c"]]}
    ),
    "an ordering with an empty group is refused": refused(
        models.OutcomeInput, {"duel_token": "t", "ordering": ["a", []]}
    ),
    "clicks with both forms are refused": refused(
        models.ClicksInput, {"interleaving_token": "t", "clicks": [], "click_positions": []}
    ),
}
for name, ok in checks.items():
    print(("ok     " if ok else "FAILED ") + name)
sys.exit(0 if all(checks.values()) else 1)
