package toolset_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

var allDialects = []toolset.Dialect{toolset.OpenAI, toolset.OpenAIStrict, toolset.Anthropic, toolset.AnthropicStrict, toolset.Gemini, toolset.GeminiJSONSchema}

type corpusFile struct {
	Source string          `json:"source"`
	Tools  []protocol.Tool `json:"tools"`
}

func loadCorpus(t testing.TB, pattern string) []protocol.Tool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus at %s: %v", pattern, err)
	}
	var out []protocol.Tool
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cf corpusFile
		if err := json.Unmarshal(data, &cf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, cf.Tools...)
	}
	return out
}

// TestCorpusEveryDialect converts every schema of the corpus (the npm
// reference servers' tools and the hand-written hard cases) to every
// dialect and checks the result against that provider's documented rules.
func TestCorpusEveryDialect(t *testing.T) {
	tools := loadCorpus(t, "corpus/*.json")
	set := newSet(t, tools)
	for _, d := range allDialects {
		decls, err := set.Declarations(d)
		if err != nil {
			t.Errorf("%v: %v", d, err)
		}
		if len(decls) != len(tools) {
			t.Errorf("%v: %d declarations of %d tools", d, len(decls), len(tools))
		}
		for _, decl := range decls {
			if err := toolsettest.Check(d, decl.Name, decl.Parameters, decl.Strict); err != nil {
				t.Errorf("%v: %v\n%s", d, err, decl.Parameters)
			}
		}
	}
}

func TestCorpusUnconvertible(t *testing.T) {
	tools := loadCorpus(t, "bad.json")
	want := map[string]error{"remote_ref": toolset.ErrUnresolvedRef, "dangling_ref": toolset.ErrUnresolvedRef, "string_root": toolset.ErrInvalidSchema}
	set := newSet(t, tools)
	for _, d := range allDialects {
		decls, err := set.Declarations(d)
		if len(decls) != 0 {
			t.Errorf("%v: %d declarations, want none", d, len(decls))
		}
		for name, sentinel := range want {
			var se *toolset.SchemaError
			found := false
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				if errors.As(e, &se) && se.Tool == name {
					found = true
					if !errors.Is(e, sentinel) || se.Dialect != d {
						t.Errorf("%v %s: %v, want %v", d, name, e, sentinel)
					}
				}
			}
			if !found {
				t.Errorf("%v: no error for %s in %v", d, name, err)
			}
		}
	}
}
