#!/usr/bin/env bash
# acp-e2e.sh - install what the end-to-end test of hearth acp needs: the
# official ACP TypeScript SDK (@agentclientprotocol/sdk, whose JSON schema
# of protocol version 1 the test validates every message against) and ajv,
# at the versions cmd/hearth/testdata/acp/package-lock.json pins.
#
#   scripts/acp-e2e.sh               # npm ci there (nothing when done already)
#   go test -run TestACPEndToEnd ./cmd/hearth
#
# Needs node 20 or later, with npm; without them it says so and exits 1
# (the test then skips, unless HEARTH_ACP_E2E=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../cmd/hearth/testdata/acp"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "acp-e2e.sh: node and npm are needed for the ACP end-to-end test (Node.js 20 or later)" >&2
  exit 1
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "acp-e2e.sh: Node $(node --version) is too old for the ACP SDK: install Node.js 20 or later" >&2
  exit 1
fi

# npm ci installs exactly the lockfile; skipped when it already did.
stamp=node_modules/.hearth-lock
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json "$stamp"
fi
