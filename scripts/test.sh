#!/usr/bin/env bash
# test.sh - Hearth's whole test suite, as CI runs it, in stages.
#
#   scripts/test.sh              every stage below, in this order, then a
#                                table of each stage's wall time
#   scripts/test.sh STAGE...     only those stages (in the order given)
#
# Stages:
#   unit     go vet, gofmt, the go.mod tidy check, staticcheck, and
#            go test -short ./... (no model server, browser or npm needed:
#            the quick check before the others)
#   web      the web UI: npm packages, type-check and build into server/ui,
#            fail if the build differs from what is committed, Vitest
#            (scripts/web.sh)
#   desktop  the desktop app (cmd/hearth-desktop, a module of its own built
#            with cgo and WebKitGTK): installs its Debian packages, vets,
#            builds, and drives the real app in Xvfb (scripts/desktop.sh)
#   race     go test -race ./..., everything: integration tests against a
#            real Ollama (the peer below), the MCP integration tests against
#            the real npm MCP servers (scripts/mcp-servers.sh), and the web
#            UI's Playwright tests in Debian's Chromium (scripts/web.sh
#            --deps), the end-to-end test of hearth acp with the ACP
#            TypeScript SDK from npm (scripts/acp-e2e.sh), and the tests
#            against a real PostgreSQL, which start
#            a throwaway server of their own from Debian's postgresql
#            package (scripts/postgres.sh --deps installs it;
#            HEARTH_PG_REQUIRED=1: they fail rather than skip without it);
#            this stage starts or installs each of those first
#   redteam  hostile commands against the real binary (scripts/redteam.sh,
#            Linux only, 10-15 minutes)
#   fuzz     each fuzz target for a while (FUZZTIME)
#
# The integration tests need a real Ollama server. When ../shared/ollama-peer
# (beside this repository) exists, the race stage builds and starts one
# offline with tiny models (the first build takes several minutes; later
# runs reuse its cache) and points the tests at it. Set HEARTH_OLLAMA_URL to
# use a server of your own instead, or HEARTH_SKIP_PEER=1 to skip them.
#
# Knobs: HEARTH_SKIP_REDTEAM=1 skips the red team. FUZZTIME (default
# 50000x: 50,000 inputs per fuzz target, 3-20 s each here; a duration such
# as 30s works too; 0 skips fuzzing). The default is a count, not a
# duration: with a duration, go1.26's fuzzing coordinator can fail a target
# at the deadline having found nothing (golang/go#75804, fixed in go1.27).
# HEARTH_RACE_PKGS (default ./...) narrows the race stage's go test to some
# packages, e.g. HEARTH_RACE_PKGS=./mcp/... scripts/test.sh race; CI uses
# the default. STATICCHECK_VERSION (default below) is the staticcheck that
# the unit stage runs, built from the Go module proxy (go.mod is untouched).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
log() { printf '\n== %s\n' "$*"; }

ALL_STAGES=(unit web desktop race redteam fuzz)
# staticcheck 2026.2.2: the first release that knows go1.26.
STATICCHECK_VERSION=${STATICCHECK_VERSION:-v0.8.2}

usage() {
  echo "usage: scripts/test.sh [STAGE...]   (stages: ${ALL_STAGES[*]}; none: all of them)" >&2
  exit 2
}

stage_unit() {
  log "go vet"
  go vet ./...

  log "gofmt"
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; return 1
  fi

  log "go mod tidy"
  # go.mod must be tidy: it decides the build. go.sum is only shown when it
  # differs: 'go mod tidy' also records checksums of modules that only
  # dependencies' own tests need, and which of those it can record depends
  # on what the module proxy serves that day (-e: go on without the
  # others). A checksum the build itself needs is enforced anyway: go vet
  # and go test run with -mod=readonly and fail on a missing one.
  local tidy gomod
  tidy=$(go mod tidy -e -diff 2>&1) || true
  gomod=$(printf '%s\n' "$tidy" | awk '/^diff /{f=($0 ~ /go\.mod/)} f')
  if [ -n "$gomod" ]; then
    printf '%s\n' "$gomod"
    echo "go.mod is not tidy (the diff above): run 'go mod tidy -e' and commit the result"; return 1
  fi
  if [ -n "$tidy" ]; then
    echo "note: 'go mod tidy' would change go.sum today (not a failure; see the comment in scripts/test.sh):"
    printf '%s\n' "$tidy"
  fi

  log "staticcheck $STATICCHECK_VERSION"
  # 'go run pkg@version' builds staticcheck in its own module, outside
  # go.mod (and caches the binary). staticcheck.conf says which checks run;
  # a finding that is wrong in one place is silenced there with a
  # //lint:ignore comment that says why.
  go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ./...

  log "go test -short ./..."
  # -short: no real model server, browser, npm server or fork bomb; the
  # tests that need one, or take seconds, skip (the race stage runs them).
  go test -short ./...
}

stage_web() {
  log "web UI: build, compare with server/ui, Vitest"
  scripts/web.sh
}

stage_desktop() {
  log "desktop app: Debian packages, vet, build, the real app in Xvfb"
  scripts/desktop.sh
}

stage_race() {
  local peer=${PEER_DIR:-$ROOT/../shared/ollama-peer}
  if [ -z "${HEARTH_OLLAMA_URL:-}" ] && [ "${HEARTH_SKIP_PEER:-0}" != 1 ]; then
    if [ -x "$peer/up.sh" ]; then
      log "starting the Ollama peer (first build takes minutes)"
      "$peer/up.sh"
      PEER_UP="$peer/up.sh" scripts/peer-models.sh
      export HEARTH_OLLAMA_URL=http://${PEER_HOST:-127.0.0.1:11555}
    else
      echo "no Ollama peer at $peer: integration tests will skip (set HEARTH_OLLAMA_URL to run them)"
    fi
  fi

  log "MCP test servers (npm)"
  if HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh); then
    export HEARTH_MCP_SERVERS
  else
    echo "could not install the npm MCP servers: the MCP integration tests will skip"
  fi

  log "web UI end-to-end tests: npm packages and Chromium"
  # The Playwright tests run inside go test (TestWebUI in cmd/hearth), in
  # Debian's chromium; HEARTH_WEB_E2E=1 makes them required. They drive the
  # committed server/ui, which the web stage checks against its sources.
  scripts/web.sh --deps
  export HEARTH_WEB_E2E=1

  log "ACP end-to-end test: the ACP TypeScript SDK (npm)"
  # TestACPEndToEnd in cmd/hearth drives hearth acp with the official
  # TypeScript SDK; HEARTH_ACP_E2E=1 makes it required.
  scripts/acp-e2e.sh
  export HEARTH_ACP_E2E=1

  log "PostgreSQL (Debian's postgresql package)"
  # The tests start servers of their own (internal/pgtest) from its
  # binaries; required here, so that they cannot skip unseen.
  scripts/postgres.sh --deps
  export HEARTH_PG_REQUIRED=1

  local pkgs=${HEARTH_RACE_PKGS:-./...}
  log "go test -race $pkgs"
  # -timeout: a hang detector per package, not a speed target (cmd/hearth
  # takes 4-5 minutes under load, its browser tests included).
  # shellcheck disable=SC2086 # HEARTH_RACE_PKGS may name several packages
  go test -race -count=1 -timeout 45m $pkgs
}

stage_redteam() {
  if [ "$(uname -s)" != Linux ]; then
    echo "the red team needs Linux: skipped"; result=skipped; return 0
  fi
  if [ "${HEARTH_SKIP_REDTEAM:-0}" = 1 ]; then
    echo "HEARTH_SKIP_REDTEAM=1: skipped"; result=skipped; return 0
  fi
  log "red team: hostile commands against the real binary (scripts/redteam.sh)"
  # As root (CI's case) it runs twice: as root, and as an unprivileged user
  # it creates, so that both of the sandbox's paths are attacked.
  scripts/redteam.sh
}

# fuzz_one runs one target and prints its last line, or all of its output
# when it fails. A failing input is written under testdata/fuzz and fails
# the run. A failure that left no input behind is the fuzzing engine's own
# (see FUZZTIME above): it is shown, and the target is run once more.
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

stage_fuzz() {
  FUZZTIME=${FUZZTIME:-50000x}
  if [ "$FUZZTIME" = 0 ]; then
    echo "FUZZTIME=0: skipped"; result=skipped; return 0
  fi
  log "fuzzing each target (-fuzztime=$FUZZTIME)"
  local pkg dir target
  for pkg in $(go list ./...); do
    dir=$(go list -f '{{.Dir}}' "$pkg")
    for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
      echo "-- $pkg $target"
      fuzz_one "$pkg" "$dir" "$target"
    done
  done
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${ALL_STAGES[@]}")
for s in "${stages[@]}"; do
  case " ${ALL_STAGES[*]} " in *" $s "*) ;; *) echo "scripts/test.sh: no stage '$s'" >&2; usage ;; esac
done

# The summary: one row per stage run so far, with its wall time and share
# of the whole; printed at the end, and also when a stage fails.
rows=()
total_start=$SECONDS
summary() {
  local total=$((SECONDS - total_start)) r name secs result
  [ ${#rows[@]} -gt 0 ] || return 0
  printf '\n== stages (wall time)\n'
  printf '%-8s %8s %6s  %s\n' stage seconds share result
  for r in "${rows[@]}"; do
    read -r name secs result <<<"$r"
    printf '%-8s %8d %5d%%  %s\n' "$name" "$secs" $((total > 0 ? secs * 100 / total : 0)) "$result"
  done
  printf '%-8s %8d\n' total "$total"
}
current=
started=0
on_exit() {
  local rc=$?
  if [ -n "$current" ]; then
    rows+=("$current $((SECONDS - started)) FAILED")
  fi
  summary
  exit "$rc"
}
trap on_exit EXIT

for s in "${stages[@]}"; do
  printf '\n==== stage: %s\n' "$s"
  current=$s started=$SECONDS result=ok
  # Not 'stage_$s || ...': bash ignores set -e inside a function called
  # that way, and a failing step must stop its stage.
  "stage_$s"
  rows+=("$s $((SECONDS - started)) $result")
  current=
done

log "all tests passed (stages: ${stages[*]})"
