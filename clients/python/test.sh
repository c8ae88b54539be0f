#!/usr/bin/env bash
# CI entry point of the Python SDK: a venv with the package and its pinned dev tools, the
# linters, then the tests against live joust servers started from JOUST_BIN (default: the
# repository's target/release/joust).
set -euo pipefail
cd "$(dirname "$0")"

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

# Without DATABASE_URL, joust runs an embedded Postgres and needs its server binaries.
if [[ -z "${DATABASE_URL:-}" ]]; then
    ../../scripts/install-postgres
fi

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/pytest "$@"
