#!/usr/bin/env bash
# postgres.sh - PostgreSQL for Hearth's tests.
#
#   scripts/postgres.sh --deps   install Debian's postgresql package, unless
#                                PostgreSQL's initdb and postgres are there
#                                already (on PATH, or in
#                                /usr/lib/postgresql/VERSION/bin)
#
# The tests need only the binaries: each test binary that uses a database
# starts a throwaway server of its own (internal/pgtest: initdb into a
# temporary directory, postgres on a free port of 127.0.0.1, as the postgres
# user when run as root) and stops it when it ends. They never use the
# system's cluster. Debian's package creates one (15/main) and asks
# invoke-rc.d to start it: in a container that fails or is refused (no
# runlevel, or a policy-rc.d that says no); on a machine with systemd it
# starts, on port 5432, which is harmless and which this script leaves
# alone either way.
#
# Without PostgreSQL those tests skip; with HEARTH_PG_REQUIRED=1 (the race
# stage of scripts/test.sh sets it) they fail instead.
set -euo pipefail
log() { printf '\n== %s\n' "$*"; }

# installed succeeds when initdb and postgres are found where
# internal/pgtest looks for them.
installed() {
  local initdb dir
  if initdb=$(command -v initdb); then
    dir=$(dirname "$(readlink -f "$initdb")")
    [ -x "$dir/postgres" ] && return 0
  fi
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && return 0
  done
  return 1
}

deps() {
  installed && return 0
  local pkgs=(postgresql)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "postgres.sh: ${pkgs[*]} is installed, yet there is no initdb and postgres in /usr/lib/postgresql/*/bin" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null; then
    echo "postgres.sh: install PostgreSQL (its server: initdb and postgres) first, e.g. Debian's ${missing[*]}, or put its bin directory on PATH" >&2
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then sudo=(sudo -n); else
      echo "postgres.sh: as root, run: apt-get install ${missing[*]}" >&2; exit 1
    fi
  fi
  log "installing ${missing[*]} (apt-get)"
  # env: sudo drops DEBIAN_FRONTEND from the environment.
  local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}")
  "${sudo[@]}" "${install[@]}" >/dev/null ||
    { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" "${install[@]}" >/dev/null; } || {
    echo "postgres.sh: could not install ${missing[*]} with apt-get" >&2
    exit 1
  }
  installed || {
    echo "postgres.sh: ${missing[*]} installed, yet there is no initdb and postgres in /usr/lib/postgresql/*/bin" >&2
    exit 1
  }
}

case "${1:-}" in
  --deps) deps ;;
  *) echo "usage: scripts/postgres.sh --deps" >&2; exit 2 ;;
esac
