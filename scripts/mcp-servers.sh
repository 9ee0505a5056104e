#!/usr/bin/env bash
# mcp-servers.sh - install the real MCP servers that the mcp package's
# integration tests run, and print the directory they are in.
#
#   dir=$(scripts/mcp-servers.sh)      # install (or reuse) and print the dir
#   export HEARTH_MCP_SERVERS=$dir     # the tests read this
#
# The servers come from npm (@modelcontextprotocol/server-everything and
# @modelcontextprotocol/server-filesystem) at pinned versions, into
# ${HEARTH_MCP_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hearth-mcp-servers}. A second
# run with the same versions installs nothing. Needs node and npm; without
# them it says so on stderr and exits 1 (the tests then skip).
set -euo pipefail

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31

dir=${HEARTH_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth-mcp-servers}
want="everything@$EVERYTHING_VERSION filesystem@$FILESYSTEM_VERSION"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "mcp-servers.sh: node and npm are needed to install the MCP test servers (apt-get install nodejs npm)" >&2
  exit 1
fi

stamp="$dir/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  [ -f "$dir/node_modules/@modelcontextprotocol/server-everything/package.json" ] &&
  [ -f "$dir/node_modules/@modelcontextprotocol/server-filesystem/package.json" ]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"hearth-mcp-servers","private":true}' >"$dir/package.json"
echo "installing MCP test servers into $dir" >&2
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
echo "$want" >"$stamp"
echo "$dir"
