#!/usr/bin/env bash
# The example's checks: ruff (lint and format), mypy, and the tests, which run the whole example
# briefly against a live joust ($JOUST_BIN, default target/release/joust, or $JOUST_URL).
# The venv is target/example-venv (setup-venv; JOUST_SDK_DIR: another copy of the SDK).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python=$(./setup-venv --test)
bin=$(dirname "$python")
"$bin/ruff" check .
"$bin/ruff" format --check .
"$bin/mypy"
"$python" -m pytest -q "$@"
