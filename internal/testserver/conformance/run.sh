#!/usr/bin/env bash
# run.sh runs the MCP conformance suite's server scenarios
# (@modelcontextprotocol/conformance, pinned in package.json with Node 22)
# against Conduit's internal test server: Server.Handler() with
# Options.Conformance, served by cmd/testserver on 127.0.0.1 only.
#
# Usage: ./run.sh [conformance server flags...]
#   ./run.sh                              three passes: default suite,
#                                         --requirements 2026-07-28, --suite all
#   ./run.sh --scenario tools-list        one scenario
#   ./run.sh --requirements 2026-07-28    one pass
# Exits non-zero when any scenario fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ ! -x node_modules/.bin/node ] || [ ! -d node_modules/@modelcontextprotocol/conformance ]; then
  npm ci --no-audit --no-fund
fi
tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$here/../../.." && go build -o "$tmp/testserver" ./internal/testserver/cmd/testserver)
"$tmp/testserver" -http 127.0.0.1:0 -conformance 2>"$tmp/stderr" &
pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$tmp/stderr" && break
  sleep 0.1
done
addr=$(sed -n 's/.*listening on //p' "$tmp/stderr")
if [ -z "$addr" ]; then cat "$tmp/stderr" >&2; exit 1; fi
url="$addr/mcp"
node=node_modules/.bin/node
cli=node_modules/@modelcontextprotocol/conformance/dist/index.js
status=0
if [ $# -gt 0 ]; then
  "$node" "$cli" server --url "$url" "$@" || status=$?
else
  for pass in "" "--requirements 2026-07-28" "--suite all"; do
    echo "=== conformance server ${pass:-(default suite)}"
    # shellcheck disable=SC2086 # pass is a list of flags
    "$node" "$cli" server --url "$url" $pass || status=$?
  done
fi
exit "$status"
