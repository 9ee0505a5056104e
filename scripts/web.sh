#!/usr/bin/env bash
# web.sh - build and test the web UI (web/), as CI does.
#
#   scripts/web.sh            install the npm packages (npm ci), type-check
#                             and build the UI into server/ui, fail if the
#                             build differs from what is committed, and run
#                             the Vitest tests
#   scripts/web.sh --deps     only install what the UI's tests need: the npm
#                             packages and Debian's chromium (for the
#                             Playwright tests that `go test ./cmd/hearth`
#                             runs with HEARTH_WEB_E2E=1)
#
# The built UI is committed so that `go install` needs no Node; this script
# is what keeps it equal to its sources. After changing web/src, run it (or
# `cd web && npm run build`) and commit server/ui with the change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need() {
  if ! command -v "$1" >/dev/null; then
    echo "web.sh: $1 is needed to build the web UI (on Debian: apt-get install nodejs npm)" >&2
    exit 1
  fi
}
need node
need npm

# Chromium for the end-to-end tests: Debian's package (a test tool's own
# browser download cannot reach the network from CI).
chromium=${HEARTH_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "installing Debian's chromium for the web UI's end-to-end tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
  elif command -v sudo >/dev/null && command -v apt-get >/dev/null; then
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  else
    echo "web.sh: no chromium at $chromium and no way to install it: install chromium (or set HEARTH_CHROMIUM)" >&2
    exit 1
  fi
fi

# npm ci installs exactly the lockfile; skipped when it already did.
stamp=web/node_modules/.hearth-lock
if [ ! -f "$stamp" ] || ! cmp -s web/package-lock.json "$stamp"; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
  cp web/package-lock.json "$stamp"
fi

[ "${1:-}" = --deps ] && exit 0

(cd web && npm run --silent build -- --logLevel warn)
if [ -d .git ] || git rev-parse --git-dir >/dev/null 2>&1; then
  if ! git diff --quiet -- server/ui || [ -n "$(git ls-files --others --exclude-standard -- server/ui)" ]; then
    echo "web.sh: the built web UI differs from what is committed in server/ui:" >&2
    git status --short -- server/ui >&2
    echo "rebuild it (cd web && npm run build) and commit server/ui with the sources" >&2
    exit 1
  fi
fi

(cd web && npx --no-install vitest run)
