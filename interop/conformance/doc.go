// Package conformance runs the MCP conformance suite
// (@modelcontextprotocol/conformance, two versions side by side) against
// Conduit's conformance client (cmd/conformance-client) in TestConformance.
//
// Suites: "stable" is 0.1.16 with its default version inference, "alpha"
// is 0.2.0-alpha.12 likewise, and "alpha@2026-07-28" is the alpha run with
// --spec-version 2026-07-28 over the scenarios applicable to that version.
// Of the extension scenarios only the authorization extensions (auth/…)
// and the skills host scenarios (sep-2640-client-…) run, in the suites
// without a spec version; the others (tasks, the skills server scenarios)
// are not run.
//
// A scenario passes when the suite exits 0, at least one check succeeded
// and none failed; a scenario with zero graded checks fails. Known
// failures are listed, with reasons, in expected-failures.txt; the test
// fails when any other scenario fails. The suite's Node servers are forced
// onto 127.0.0.1 by bind-localhost.mjs.
//
// Environment: CONFORMANCE_PARALLEL (default 4) scenarios run at once;
// CONFORMANCE_SUITES (comma list, default all three) and
// CONFORMANCE_SCENARIOS (comma list of path.Match patterns) narrow a run;
// CONFORMANCE_CLIENT replaces the client under test with another command.
package conformance
