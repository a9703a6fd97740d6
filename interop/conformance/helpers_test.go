package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseList(t *testing.T) {
	out := []byte(`Server scenarios (test against a server):
  - server-initialize [2025-06-18,2025-11-25]

Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - auth/metadata-default [2025-11-25,2026-07-28]
  - auth/dpop [extension]

Authorization server scenarios (test against an authorization server):
  - authorization-code-grant [2026-07-28]
`)
	got, err := parseList(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []scenario{
		{Name: "initialize", Tags: []string{"2025-06-18", "2025-11-25"}},
		{Name: "auth/metadata-default", Tags: []string{"2025-11-25", "2026-07-28"}},
		{Name: "auth/dpop", Tags: []string{"extension"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("parseList (-want +got):\n%s", d)
	}
}

func TestSelected(t *testing.T) {
	modern := suite{ID: "alpha@2026-07-28", SpecVersion: "2026-07-28"}
	plain := suite{ID: "alpha"}
	cases := []struct {
		name     string
		s        suite
		sc       scenario
		patterns []string
		want     bool
	}{
		{"plain runs legacy scenario", plain, scenario{"initialize", []string{"2025-06-18"}}, nil, true},
		{"auth extension runs", plain, scenario{"auth/dpop", []string{"extension"}}, nil, true},
		{"auth extension not with a spec version", modern, scenario{"auth/dpop", []string{"extension"}}, nil, false},
		{"skills host extension runs", plain, scenario{"sep-2640-client-verify-digest", []string{"extension"}}, nil, true},
		{"skills host extension not with a spec version", modern, scenario{"sep-2640-client-no-prefetch", []string{"extension"}}, nil, false},
		{"skills server extension never runs", plain, scenario{"sep-2640-skills-manifest", []string{"extension"}}, nil, false},
		{"other extension never runs", plain, scenario{"tasks-lifecycle", []string{"extension"}}, nil, false},
		{"spec version filters", modern, scenario{"initialize", []string{"2025-06-18", "2025-11-25"}}, nil, false},
		{"spec version keeps applicable", modern, scenario{"tools_call", []string{"2025-11-25", "2026-07-28"}}, nil, true},
		{"pattern match", plain, scenario{"auth/metadata-var1", []string{"2025-11-25"}}, []string{"auth/*"}, true},
		{"pattern miss", plain, scenario{"initialize", []string{"2025-11-25"}}, []string{"auth/*"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := selected(c.s, c.sc, c.patterns); got != c.want {
				t.Errorf("selected = %v, want %v", got, c.want)
			}
		})
	}
}

func TestExpectations(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte("# comment\n\n*  auth/*  # no auth\nalpha@2026-07-28 sse-retry # legacy only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := loadExpected(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ suite, scenario, want string }{
		{"stable", "auth/metadata-default", "no auth"},
		{"alpha@2026-07-28", "sse-retry", "legacy only"},
		{"alpha", "sse-retry", ""},
		{"alpha", "initialize", ""},
	}
	for _, c := range cases {
		if got := e.match(c.suite, c.scenario); got != c.want {
			t.Errorf("match(%q, %q) = %q, want %q", c.suite, c.scenario, got, c.want)
		}
	}
	for _, bad := range []string{"* auth/*\n", "only-one-field # reason\n", "a b c # reason\n", "[ x # bad pattern\n"} {
		p := filepath.Join(dir, "bad.txt")
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadExpected(p); err == nil {
			t.Errorf("loadExpected(%q): want an error", bad)
		}
	}
}
