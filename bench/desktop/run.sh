#!/usr/bin/env bash
# run.sh - the desktop app's start-up time and memory, beside the same web UI
# in Chromium (issue 14).
#
#   bench/desktop/run.sh                 # 5 measured rounds (and a warm-up)
#   BENCH_RUNS=10 bench/desktop/run.sh   # more rounds
#
# Environment:
#   BENCH_RUNS      measured rounds (default 5), after one warm-up round
#   BENCH_SETTLE_MS how long a program is left after it is ready before its
#                   memory is read (default 2000)
#   BENCH_TIMEOUT_MS how long a launch may take to be ready (default 60000)
#   BENCH_CHROMIUM  the browser (default /usr/bin/chromium, Debian's wrapper)
#   BENCH_OUT       where results and logs go (default
#                   ${XDG_CACHE_HOME:-~/.cache}/hearth-bench-desktop/last-run,
#                   emptied first)
#   BENCH_NO_BUILD=1 use the binaries already in $BENCH_OUT/../bin
#   BENCH_DESKTOP_ENV  VAR=VALUE words added to the desktop app's environment,
#                   for experiments (WEBKIT_DISABLE_COMPOSITING_MODE=1)
#
# What it does:
#
#   1. builds hearth (CGO_ENABLED=0), hearth-desktop (cgo, -tags
#      desktop,production,webkit2_41, and hearthprobe: the page probe the
#      end-to-end test uses, which only runs with HEARTH_DESKTOP_PROBE set)
#      and the fake model server (bench/desktop/fakeollama), and copies the
#      binaries into new files (see docs/benchmarks.md on RSS and the
#      linker's fresh output);
#   2. starts an X server (Xvfb, 1400x1000x24, software rendering), a session
#      bus (dbus-daemon) and the fake Ollama, shared by both sides, and every
#      program with the same environment except its home;
#   3. runs rounds: a warm-up round (round 0: the binaries' first start since
#      they were built, reported apart) and BENCH_RUNS measured ones. In each
#      round each side gets a new home and is launched twice there: "first"
#      (a new profile: no preferences, caches or browser profile yet) and
#      "repeat" (the same home again, as every later start of a user's).
#      The sides alternate which goes first from round to round;
#   4. each launch is bench/desktop/measure.mjs (node): the time from the
#      program's launch to the web UI's welcome ("What shall we work on?")
#      being in the page's rendered text, and the CPU time used by then;
#      then, after BENCH_SETTLE_MS, PSS, RSS and private memory (USS) from
#      /proc/PID/smaps_rollup summed over the process tree, and every page
#      of the tree counted once (/proc/PID/pagemap: needs root, else that
#      row is empty), split into data and files. The desktop side is hearth-desktop (its page read
#      through its HEARTH_DESKTOP_PROBE file) and its WebKit processes; the
#      Chromium side is `hearth serve` (timed to its printed address) then
#      Chromium in app mode (--app=URL, a --user-data-dir in the side's home,
#      the page read over --remote-debugging-pipe), every Chromium process
#      plus hearth serve;
#   5. prints a Markdown summary (medians, min - max, ratios per round) and
#      keeps runs.jsonl (one line per launch, per-process memory included),
#      summary.md, env.txt and the programs' logs in $BENCH_OUT.
#
# Every process it starts carries HEARTH_BENCH_DESKTOP_TAG in its
# environment; on exit (normal, failure or a signal) the script stops the
# programs, then ends every process that still carries the tag (those the
# session bus started, such as the accessibility bus, included). Exits
# non-zero if any launch failed.
#
# Needs: go, gcc and the WebKitGTK 4.1 development files
# (scripts/desktop.sh --deps), Xvfb, dbus-daemon, node, chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

RUNS=${BENCH_RUNS:-5}
SETTLE=${BENCH_SETTLE_MS:-2000}
TIMEOUT=${BENCH_TIMEOUT_MS:-60000}
CHROMIUM=${BENCH_CHROMIUM:-/usr/bin/chromium}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/hearth-bench-desktop
OUT=${BENCH_OUT:-$cache/last-run}
BIN=$(dirname "$OUT")/bin
MARKER="What shall we work on?"

for tool in Xvfb dbus-daemon node go "$CHROMIUM"; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (Debian: xvfb dbus nodejs chromium; scripts/desktop.sh --deps)" >&2; exit 1; }
done

TAG=hdb-$$-$RANDOM$RANDOM
export HEARTH_BENCH_DESKTOP_TAG=$TAG
PIDS=()

# tagged lists the processes whose environment carries this run's tag,
# other than this shell.
tagged() {
  local f p
  for f in /proc/[0-9]*/environ; do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] || [ "$p" = "${BASHPID:-}" ] && continue
    grep -qaz "^HEARTH_BENCH_DESKTOP_TAG=$TAG\$" "$f" 2>/dev/null && echo "$p"
  done
  return 0
}

cleanup() {
  local rc=$? p left i
  trap - EXIT INT TERM HUP
  # The measuring helpers first: each stops its programs (SIGTERM, then
  # SIGKILL after 10 s).
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for i in $(seq 1 50); do
    left=$(tagged)
    [ -z "$left" ] && break
    [ "$i" = 1 ] || [ "$i" = 25 ] && kill -TERM $left 2>/dev/null
    sleep 0.2
  done
  left=$(tagged)
  if [ -n "$left" ]; then
    echo "run.sh: killing what is left: $(ps -o pid=,comm= -p ${left//$'\n'/,} | tr '\n' ' ')" >&2
    kill -KILL $left 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

rm -rf "$OUT"
mkdir -p "$OUT/logs" "$OUT/homes" "$OUT/run" "$OUT/ws" "$BIN"
chmod 700 "$OUT/run"
printf '# Project\nHello, desktop.\n' >"$OUT/ws/README.md"

# 1. Build.
if [ -z "${BENCH_NO_BUILD:-}" ]; then
  echo "building hearth, hearth-desktop and fakeollama" >&2
  CGO_ENABLED=0 go build -o "$BIN/hearth.built" ./cmd/hearth
  (cd cmd/hearth-desktop && CGO_ENABLED=1 go build -tags desktop,production,webkit2_41,hearthprobe -o "$BIN/hearth-desktop.built" .)
  go build -o "$BIN/fakeollama" ./bench/desktop/fakeollama
  for b in hearth hearth-desktop; do
    rm -f "$BIN/$b"
    cp "$BIN/$b.built" "$BIN/$b"
  done
fi
for b in hearth hearth-desktop fakeollama; do
  [ -x "$BIN/$b" ] || { echo "run.sh: $BIN/$b is missing (run without BENCH_NO_BUILD)" >&2; exit 1; }
done

# 2. The X server, the session bus, the model server.
BASE_ENV=(PATH="$PATH" LANG=C.UTF-8 HOME="$OUT/homes" XDG_RUNTIME_DIR="$OUT/run" HEARTH_BENCH_DESKTOP_TAG="$TAG")

Xvfb -displayfd 3 -screen 0 1400x1000x24 -nolisten tcp >"$OUT/logs/xvfb.log" 2>&1 3>"$OUT/display" &
PIDS+=($!)
for i in $(seq 1 150); do [ -s "$OUT/display" ] && break; sleep 0.1; done
DISPLAY=:$(head -n1 "$OUT/display")
[ "$DISPLAY" != ":" ] || { echo "run.sh: Xvfb did not start (logs/xvfb.log)" >&2; exit 1; }

env -i "${BASE_ENV[@]}" DISPLAY="$DISPLAY" dbus-daemon --session --nofork --print-address=1 >"$OUT/bus" 2>"$OUT/logs/dbus.log" &
PIDS+=($!)
"$BIN/fakeollama" -addr 127.0.0.1:0 -model m -log "$OUT/logs/ollama-requests.log" >"$OUT/ollama" 2>"$OUT/logs/ollama.log" &
PIDS+=($!)
for i in $(seq 1 150); do [ -s "$OUT/bus" ] && grep -q listening "$OUT/ollama" && break; sleep 0.1; done
BUS=$(head -n1 "$OUT/bus")
OLLAMA=$(sed -n 's/^listening on //p' "$OUT/ollama")
[ -n "$BUS" ] && [ -n "$OLLAMA" ] || { echo "run.sh: the session bus or the fake model server did not start" >&2; exit 1; }

ENV=("${BASE_ENV[@]}" DISPLAY="$DISPLAY" DBUS_SESSION_BUS_ADDRESS="$BUS" OLLAMA_HOST="$OLLAMA" HEARTH_MODEL=m HEARTH_NO_KEYRING=1)

{
  echo "date: $(date -u '+%F %H:%M UTC')"
  if git rev-parse --short HEAD >/dev/null 2>&1; then
    echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
  else
    echo "commit: not a git checkout"
  fi
  echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1), $(nproc) cores"
  echo "kernel: $(uname -r)"
  echo "go: $(go version | cut -d' ' -f3)"
  echo "node: $(node --version)"
  echo "chromium: $("$CHROMIUM" --version 2>/dev/null | head -n1)"
  echo "webkitgtk: $(dpkg-query -W -f='${Version}' libwebkit2gtk-4.1-0 2>/dev/null || echo '?')"
  echo "runs: $RUNS measured rounds after a warm-up, settle ${SETTLE} ms"
  [ -z "${BENCH_DESKTOP_ENV:-}" ] || echo "desktop app's environment adds: $BENCH_DESKTOP_ENV"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/env.txt"
cat "$OUT/env.txt" >&2

NODE=$(command -v node)

# launch ROUND SIDE LAUNCH HOME: one measured launch, appended to runs.jsonl.
# The helper, and the programs it starts, get exactly the side's environment:
# ENV, and the side's home (HOME, HEARTH_HOME, the XDG directories; the
# probe file for the desktop app, the API token for hearth serve).
launch() {
  local round=$1 side=$2 which=$3 home=$4 log="$OUT/logs/$1-$2-$3.log" json rc=0
  local side_env=("${ENV[@]}" HOME="$home" HEARTH_HOME="$home/hearth"
    XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" XDG_DATA_HOME="$home/.local/share" XDG_STATE_HOME="$home/.local/state")
  if [ "$side" = desktop ]; then
    # shellcheck disable=SC2086 # words on purpose
    env -i "${side_env[@]}" HEARTH_DESKTOP_PROBE="$home/probe.json" ${BENCH_DESKTOP_ENV:-} \
      "$NODE" bench/desktop/measure.mjs desktop --probe "$home/probe.json" --marker "$MARKER" --adopt "$home/" \
      --settle "$SETTLE" --timeout "$TIMEOUT" --log "$log" -- "$BIN/hearth-desktop" "$OUT/ws" \
      >"$OUT/last.json" &
  else
    env -i "${side_env[@]}" HEARTH_API_TOKEN=bench-desktop-token-0123456789 \
      "$NODE" bench/desktop/measure.mjs chromium --marker "$MARKER" --adopt "$home/" --settle "$SETTLE" --timeout "$TIMEOUT" --log "$log" \
      --serve "[\"$BIN/hearth\",\"serve\",\"--workspace\",\"$OUT/ws\",\"--addr\",\"127.0.0.1:0\"]" -- \
      "$CHROMIUM" '--app={URL}' --user-data-dir="$home/chromium" --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --disable-quic --no-sandbox --disable-gpu \
      >"$OUT/last.json" &
  fi
  PIDS+=($!)
  wait $! || rc=$?
  unset 'PIDS[-1]'
  json=$(cat "$OUT/last.json")
  [ -n "$json" ] || json="{\"side\":\"$side\",\"ok\":false,\"error\":\"measure.mjs printed nothing (exit $rc)\"}"
  printf '{"round":%d,"launch":"%s","load":"%s",%s\n' "$round" "$which" "$(cut -d' ' -f1 /proc/loadavg)" "${json#\{}" >>"$OUT/runs.jsonl"
  node -e '
    const r = JSON.parse(process.argv[1]);
    const mb = (k) => (k / 1024).toFixed(0);
    const line = r.ok
      ? `ready ${r.ready_ms.toFixed(0)} ms` + (r.serve_ms !== undefined ? ` (+ serve ${r.serve_ms.toFixed(0)} ms)` : "") +
        `, PSS ${mb(r.mem.pss)} MB` + (r.serve_mem ? ` (+ serve ${mb(r.serve_mem.pss)} MB)` : "") + `, RSS ${mb(r.mem.rss)} MB, ${r.mem.n} processes`
      : `FAILED: ${r.error}`;
    console.error(`round ${r.round} ${r.side.padEnd(8)} ${r.launch.padEnd(6)} ${line}`);
  ' "$(tail -n1 "$OUT/runs.jsonl")"
  return $rc
}

failed=0
for round in $(seq 0 "$RUNS"); do
  if [ $((round % 2)) = 0 ]; then order=(desktop chromium); else order=(chromium desktop); fi
  for side in "${order[@]}"; do
    home="$OUT/homes/$round-$side"
    mkdir -p "$home/hearth"
    for which in first repeat; do
      launch "$round" "$side" "$which" "$home" || failed=$((failed + 1))
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/env.txt"

node bench/desktop/summarize.mjs "$OUT/runs.jsonl" "$OUT/env.txt" >"$OUT/summary.md"
echo >&2
cat "$OUT/summary.md"
echo >&2
echo "results: $OUT (runs.jsonl, summary.md, logs/)" >&2
[ "$failed" = 0 ] || { echo "run.sh: $failed launch(es) failed (see runs.jsonl and logs/)" >&2; exit 1; }
