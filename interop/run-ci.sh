#!/usr/bin/env bash
# run-ci.sh: the interop job (what .ci/run calls). Installs the pinned npm
# packages (conformance suites, Node 22, TS SDK server, server-everything)
# with `npm ci`, then runs every interop test: the conformance suites
# (TestConformance), the foreign-server matrix (TestForeignServers), the
# launcher and benchmark-harness smoke tests. Everything is time-bounded.
#
# Environment: INTEROP_GO_TEST_FLAGS adds flags to `go test` (e.g. -v).
set -euo pipefail
cd "$(dirname "$0")"

echo "interop: npm ci"
timeout 600 npm ci --no-audit --no-fund --loglevel=error

echo "interop: vet, staticcheck"
timeout 300 go vet ./...
timeout 600 go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

echo "interop: go test (matrix, launchers, benchmark harness)"
# The main module is replaced by ../ (see go.mod); -race covers Conduit's
# client in the matrix and benchmark-harness tests.
# shellcheck disable=SC2086
timeout 1500 go test -race -count=1 -timeout 20m -skip '^(TestConformance|TestForeignServers)$' ${INTEROP_GO_TEST_FLAGS:-} ./...

echo "interop: foreign-server matrix"
# -v so that the matrix (server x transport x mode => era / result) is
# printed; the servers' own log lines are left out.
# shellcheck disable=SC2086
timeout 900 go test -race -count=1 -timeout 12m -v -run '^TestForeignServers$' ${INTEROP_GO_TEST_FLAGS:-} ./matrix \
  | grep -v -e 'foreign.go:[0-9]*: .* std\(out\|err\):' -e '^=== ' -e '^ *--- PASS'

echo "interop: conformance suites"
# -v so that the per-scenario PASS/FAIL list and the final
# "N passed, M failed" line are printed on success too.
# shellcheck disable=SC2086
timeout 1200 go test -count=1 -timeout 15m -v -run '^TestConformance$' ${INTEROP_GO_TEST_FLAGS:-} ./conformance
