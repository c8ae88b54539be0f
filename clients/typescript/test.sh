#!/usr/bin/env bash
# CI entry point of the TypeScript SDK: dependencies (npm ci, once), lint, typecheck, build and
# the tests against a live joust server.
#
# Environment:
#   JOUST_BIN     the joust server binary (default: <repo>/target/release/joust)
#   DATABASE_URL  when unset, joust runs its embedded Postgres; the server package is then
#                 installed if missing (scripts/install-postgres, a no-op when installed)
#   CHROMIUM      the Chromium for the browser test (default /usr/bin/chromium; Debian's
#                 package is installed if missing: only package registries are reachable)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

export JOUST_BIN="${JOUST_BIN:-$repo/target/release/joust}"
if [[ ! -x "$JOUST_BIN" ]]; then
    echo "no joust binary at $JOUST_BIN: build it (cargo build --release) or set JOUST_BIN" >&2
    exit 1
fi
if [[ -z "${DATABASE_URL:-}" ]]; then
    "$repo/scripts/install-postgres"
fi
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
    # shellcheck source=scripts/lib/apt.sh
    source "$repo/scripts/lib/apt.sh"
    apt_install chromium
fi

if [[ ! -d node_modules ]]; then
    # --ignore-scripts: the package's own prepare (a build) runs below, after the checks.
    npm ci --ignore-scripts --no-audit --no-fund
fi

echo "== lint"
npx eslint .
npx prettier --check .
echo "== typecheck"
npx tsc --noEmit -p tsconfig.json
echo "== build"
npm run --silent build
echo "== tests (JOUST_BIN=$JOUST_BIN)"
# Two files at a time: most of a file's time is its server's start (initdb), which overlaps
# well; the deadline test's few ms of slack hold at that (checked on a loaded 2-core machine).
node --import tsx --test --test-concurrency=2 test/*.test.ts
