#!/usr/bin/env bash
# web.sh - build and test the web UI (web/), as CI does.
#
#   scripts/web.sh            install the npm packages (npm ci), type-check
#                             and build the UI into server/ui, fail if the
#                             build differs from what is committed, and run
#                             the Vitest tests
#   scripts/web.sh --deps     only install what the UI's tests need: the npm
#                             packages, and Debian's chromium (with apt-get,
#                             as root or with sudo) for the Playwright tests
#                             that `go test ./cmd/hearth` runs
#
# The built UI is committed so that `go install` needs no Node; this script
# is what keeps it equal to its sources. After changing web/src, run it (or
# `cd web && npm run build`) and commit server/ui with the change.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need() {
  if ! command -v "$1" >/dev/null; then
    echo "web.sh: $1 is needed to build the web UI: install Node.js 20.19 or later, with npm" >&2
    exit 1
  fi
}
need node
need npm
# Vite needs Node 20.19 or later (Debian 12's own nodejs is 18).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "web.sh: Node $(node --version) is too old to build the web UI: install Node.js 20.19 or later" >&2
  exit 1
fi

# Chromium for the end-to-end tests (--deps only: building and Vitest do
# not need it): Debian's package, since a test tool's own browser download
# cannot reach the network from CI.
if [ "${1:-}" = --deps ]; then
  chromium=${HEARTH_CHROMIUM:-/usr/bin/chromium}
  if [ ! -x "$chromium" ]; then
    install="env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium" # env: sudo drops the variable
    if [ "$(id -u)" = 0 ]; then sudo=; elif command -v sudo >/dev/null; then sudo="sudo -n"; else sudo=none; fi
    if [ "$sudo" = none ] || ! command -v apt-get >/dev/null; then
      echo "web.sh: no Chromium at $chromium: install Debian's chromium package (or set HEARTH_CHROMIUM to a Chromium)" >&2
      exit 1
    fi
    echo "installing Debian's chromium for the web UI's end-to-end tests" >&2
    $sudo $install >/dev/null || { $sudo apt-get update -q >/dev/null && $sudo $install >/dev/null; } || {
      echo "web.sh: could not install chromium with apt-get: install it (or set HEARTH_CHROMIUM)" >&2
      exit 1
    }
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
