"""The corpus: the Python standard library's own documentation, as `help()` shows it.

Every public module of the standard library that imports here gives one document for its
docstring and one for each public class and function it defines with a docstring of some
length. That is about a thousand documents of real technical prose that every Python 3.11
installation already has, so the example needs no download and no data file.
"""

import contextlib
import importlib
import inspect
import io
import sys
import warnings
from dataclasses import dataclass
from types import ModuleType

# Modules whose import does something (prints, opens a browser, starts a GUI) or that are
# tests and tools rather than library documentation.
SKIPPED_MODULES = frozenset(
    {
        "antigravity",
        "this",
        "idlelib",
        "tkinter",
        "turtle",
        "turtledemo",
        "test",
        "lib2to3",
        "ensurepip",
        "pydoc_data",
        "xxsubtype",
        "xxlimited",
        "xxlimited_35",
        "site",
        "sitecustomize",
        "usercustomize",
    }
)

# Short docstrings ("Return self.") say too little to be found by any ranker.
MIN_WORDS = 15


@dataclass(frozen=True)
class Document:
    id: str  # the qualified name, e.g. "json.dumps": unique, and what a result shows
    title: str  # the name and the docstring's first line
    body: str  # the whole docstring


def load_corpus() -> list[Document]:
    """The documents, in a stable order (sorted by id)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated modules warn on import, some on reading too
        return _load()


def _load() -> list[Document]:
    documents: dict[str, Document] = {}
    for module_name in sorted(sys.stdlib_module_names):
        if module_name.startswith("_") or module_name in SKIPPED_MODULES:
            continue
        module = _import_quietly(module_name)
        if module is None:
            continue
        _add(documents, module_name, module)
        for name, member in vars(module).items():
            # Only what the module itself defines: `os.path` re-exported by `shutil` is
            # `os.path`'s document, not `shutil`'s.
            if name.startswith("_") or getattr(member, "__module__", None) != module_name:
                continue
            if inspect.isclass(member) or inspect.isroutine(member):
                _add(documents, f"{module_name}.{name}", member)
    return [documents[key] for key in sorted(documents)]


def _add(documents: dict[str, Document], qualified_name: str, obj: object) -> None:
    doc = inspect.getdoc(obj)
    if not doc or len(doc.split()) < MIN_WORDS:
        return
    first_line = doc.strip().splitlines()[0]
    documents[qualified_name] = Document(qualified_name, f"{qualified_name}: {first_line}", doc)


def _import_quietly(name: str) -> ModuleType | None:
    """Imports a module, or None where it is missing on this platform (winreg) or fails."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return importlib.import_module(name)
        except Exception:
            return None
