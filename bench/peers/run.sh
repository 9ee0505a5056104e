#!/usr/bin/env bash
# run.sh - compare Hearth with peer CLIs on one scripted task (read a file,
# answer), offline, against a mock model server on loopback.
#
#   bench/peers/run.sh                    # 5 runs x 2 repetitions, every program
#   bench/peers/run.sh -n 3 -reps 1       # fewer runs
#   bench/peers/run.sh -only codex        # Hearth, hello-world and Codex only
#
# Flags after the script's name go to the harness (`go run ./bench/peers
# bench -h` lists them). What it does:
#
#   1. installs the peers from npm at the pinned versions below, each into
#      its own prefix under ${HEARTH_BENCH_PEERS:-${XDG_CACHE_HOME:-~/.cache}/hearth-bench-peers}
#      (nothing global; a second run with the same versions installs
#      nothing). A peer whose install fails is reported as not installed,
#      with npm's last words, and the others still run;
#   2. builds Hearth (./cmd/hearth), a Go hello-world, the mock and the
#      launcher (bench/peers, bench/peers/hello, bench/peers/treelaunch);
#   3. runs the harness (bench/peers/main.go) in a network namespace that
#      has only loopback (`unshare -n`, as root), so that nothing a CLI
#      tries to fetch can reach the network: every program runs offline.
#      Without unshare it runs on the host's network and says so.
#
# The harness prints per-run lines, then a Markdown table of medians, and
# keeps everything (homes, first requests, logs of failed runs, runs.jsonl)
# in $CACHE/last-run. It exits non-zero if the harness itself is broken:
# the mock or the launcher failed, or Hearth or hello-world did not complete
# every run. A peer that fails is reported, with why.
#
# Needs go, node and npm (apt-get install nodejs npm).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0
QWEN_VERSION=0.24.4
OPENCODE_VERSION=1.18.33

cache=${HEARTH_BENCH_PEERS:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth-bench-peers}
mkdir -p "$cache"

# install KEY PACKAGE@VERSION
install() {
  local key=$1 spec=$2 dir=$cache/$1
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$spec" ]; then
    return 0
  fi
  if ! command -v npm >/dev/null; then
    mkdir -p "$dir"
    echo "npm is not installed (apt-get install nodejs npm)" >"$dir/install.failed"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  echo '{"name":"hearth-bench-peer","private":true}' >"$dir/package.json"
  echo "installing $spec into $dir" >&2
  if npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$spec" >"$dir/install.log" 2>&1; then
    echo "$spec" >"$dir/.installed"
  else
    { echo "npm install $spec failed:"; tail -n 5 "$dir/install.log"; } >"$dir/install.failed"
    echo "  failed: see $dir/install.log" >&2
  fi
}

install codex "@openai/codex@$CODEX_VERSION"
install gemini "@google/gemini-cli@$GEMINI_VERSION"
install qwen "@qwen-code/qwen-code@$QWEN_VERSION"
install opencode "opencode-ai@$OPENCODE_VERSION"

bin=$cache/bin
mkdir -p "$bin"
echo "building hearth, hello-world, the harness and the launcher" >&2
go build -o "$bin/hearth" ./cmd/hearth
go build -o "$bin/hello" ./bench/peers/hello
go build -o "$bin/peers" ./bench/peers
go build -o "$bin/treelaunch" ./bench/peers/treelaunch

args=(bench -peers "$cache" -hearth "$bin/hearth" -hello "$bin/hello" -launcher "$bin/treelaunch" -out "$cache/last-run" "$@")
if command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  exec unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$bin/peers" "${args[@]}"
fi
echo "run.sh: cannot make a network namespace (unshare -n needs root): running on the host's network" >&2
exec "$bin/peers" "${args[@]}"
