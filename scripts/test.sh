#!/usr/bin/env bash
# test.sh - Hearth's whole test suite, as CI runs it.
#
#   scripts/test.sh            vet, gofmt, race-enabled tests, the red team
#                              (Linux), short fuzzing, and integration tests
#                              against a real Ollama
#
# The integration tests need a real Ollama server. When ../shared/ollama-peer
# (beside this repository) exists, this script builds and starts one offline
# with tiny models (the first build takes several minutes; later runs reuse
# its cache) and points the tests at it. Set HEARTH_OLLAMA_URL to use a
# server of your own instead, or HEARTH_SKIP_PEER=1 to skip them.
#
# Knobs: HEARTH_SKIP_REDTEAM=1 skips the red team (scripts/redteam.sh, 10-15
# minutes). FUZZTIME (default 50000x: 50,000 inputs per fuzz target, 3-20 s
# each here; a duration such as 30s works too; 0 skips fuzzing). The default
# is a count, not a duration: with a duration, go1.26's fuzzing coordinator
# can fail a target at the deadline having found nothing (golang/go#75804,
# fixed in go1.27).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
log() { printf '\n== %s\n' "$*"; }

log "go vet"
go vet ./...

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

log "go mod tidy"
# go.mod must be tidy: it decides the build. go.sum is only shown when it
# differs: 'go mod tidy' also records checksums of modules that only
# dependencies' own tests need, and which of those it can record depends on
# what the module proxy serves that day (-e: go on without the others). A
# checksum the build itself needs is enforced anyway: go vet and go test
# run with -mod=readonly and fail on a missing one.
tidy=$(go mod tidy -e -diff 2>&1) || true
gomod=$(printf '%s\n' "$tidy" | awk '/^diff /{f=($0 ~ /go\.mod/)} f')
if [ -n "$gomod" ]; then
  printf '%s\n' "$gomod"
  echo "go.mod is not tidy (the diff above): run 'go mod tidy -e' and commit the result"; exit 1
fi
if [ -n "$tidy" ]; then
  echo "note: 'go mod tidy' would change go.sum today (not a failure; see the comment in scripts/test.sh):"
  printf '%s\n' "$tidy"
fi

PEER=${PEER_DIR:-$ROOT/../shared/ollama-peer}
if [ -z "${HEARTH_OLLAMA_URL:-}" ] && [ "${HEARTH_SKIP_PEER:-0}" != 1 ]; then
  if [ -x "$PEER/up.sh" ]; then
    log "starting the Ollama peer (first build takes minutes)"
    "$PEER/up.sh"
    PEER_UP="$PEER/up.sh" scripts/peer-models.sh
    export HEARTH_OLLAMA_URL=http://${PEER_HOST:-127.0.0.1:11555}
  else
    echo "no Ollama peer at $PEER: integration tests will skip (set HEARTH_OLLAMA_URL to run them)"
  fi
fi

log "MCP test servers (npm)"
if HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh); then
  export HEARTH_MCP_SERVERS
else
  echo "could not install the npm MCP servers: the MCP integration tests will skip"
fi

log "web UI: build, compare with server/ui, Vitest"
scripts/web.sh
# The Playwright tests run inside go test (TestWebUI in cmd/hearth), in
# Debian's chromium; HEARTH_WEB_E2E=1 makes them required.
scripts/web.sh --deps
export HEARTH_WEB_E2E=1

log "go test -race ./..."
# -timeout: a hang detector per package, not a speed target (cmd/hearth
# takes 4-5 minutes under load, its browser tests included).
go test -race -count=1 -timeout 45m ./...

if [ "$(uname -s)" = Linux ] && [ "${HEARTH_SKIP_REDTEAM:-0}" != 1 ]; then
  log "red team: hostile commands against the real binary (scripts/redteam.sh)"
  # As root (CI's case) it runs twice: as root, and as an unprivileged user
  # it creates, so that both of the sandbox's paths are attacked.
  scripts/redteam.sh
fi

FUZZTIME=${FUZZTIME:-50000x}
if [ "$FUZZTIME" != 0 ]; then
  log "fuzzing each target (-fuzztime=$FUZZTIME)"
  # fuzz_one runs one target and prints its last line, or all of its output
  # when it fails. A failing input is written under testdata/fuzz and fails
  # the run. A failure that left no input behind is the fuzzing engine's
  # own (see FUZZTIME above): it is shown, and the target is run once more.
  fuzz_one() {
    local pkg=$1 dir=$2 target=$3 out before after
    for attempt in 1 2; do
      before=$({ ls "$dir/testdata/fuzz/$target" 2>/dev/null || true; } | wc -l)
      if out=$(go test -run='^$' -fuzz="^$target\$" -fuzztime="$FUZZTIME" "$pkg" 2>&1); then
        echo "$out" | tail -1
        return 0
      fi
      echo "$out"
      after=$({ ls "$dir/testdata/fuzz/$target" 2>/dev/null || true; } | wc -l)
      if [ "$after" != "$before" ]; then
        echo "fuzzing found a failing input: it is in $dir/testdata/fuzz/$target"
        return 1
      fi
      [ "$attempt" = 1 ] && echo "(no failing input was recorded: running $target again)"
    done
    return 1
  }
  for pkg in $(go list ./...); do
    dir=$(go list -f '{{.Dir}}' "$pkg")
    for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
      echo "-- $pkg $target"
      fuzz_one "$pkg" "$dir" "$target"
    done
  done
fi

log "all tests passed"
