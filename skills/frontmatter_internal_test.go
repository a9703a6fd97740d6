package skills

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitFrontmatter(t *testing.T) {
	cases := []struct {
		name, in    string
		front, body string
		ok          bool
	}{
		{"plain", "---\nname: a\n---\nbody\n", "name: a\n", "body\n", true},
		{"crlf", "---\r\nname: a\r\n---\r\nbody", "name: a\r\n", "body", true},
		{"byte order mark", "\ufeff---\nname: a\n---\n", "name: a\n", "", true},
		{"closing at the end", "---\nname: a\n---", "name: a\n", "", true},
		{"closing with spaces", "---\nname: a\n---  \nb", "name: a\n", "b", true},
		{"empty block", "---\n---\nb", "", "b", true},
		{"no block", "# Title\n", "", "# Title\n", false},
		{"not closed", "---\nname: a\n", "", "---\nname: a\n", false},
		{"opening not alone", "--- x\nname: a\n---\n", "", "--- x\nname: a\n---\n", false},
		{"empty", "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			front, body, ok := splitFrontmatter([]byte(c.in))
			if ok != c.ok || string(front) != c.front || (ok && string(body) != c.body) {
				t.Errorf("split(%q) = %q, %q, %v; want %q, %q, %v", c.in, front, body, ok, c.front, c.body, c.ok)
			}
		})
	}
}

func TestCompareFrontmatter(t *testing.T) {
	entry := func(fm map[string]any) *Entry { return &Entry{URI: "skill://a/SKILL.md", Frontmatter: fm} }
	base := map[string]any{"name": "a", "description": "d"}
	cases := []struct {
		name  string
		fm    map[string]any
		md    string
		field string // "" with wantErr: the block itself
		err   bool
	}{
		{"equal", base, "---\nname: a\ndescription: d\n---\n", "", false},
		{"quoted and plain strings", base, "---\nname: \"a\"\ndescription: 'd'\n---\n", "", false},
		{"numbers across YAML and JSON", map[string]any{"name": "a", "description": "d", "n": float64(2), "f": 1.5},
			"---\nname: a\ndescription: d\nn: 2\nf: 1.5\n---\n", "", false},
		{"nested equal", map[string]any{"name": "a", "description": "d", "metadata": map[string]any{"tags": []any{"x", "y"}, "v": "1.0"}},
			"---\nname: a\ndescription: d\nmetadata:\n  v: \"1.0\"\n  tags:\n    - x\n    - y\n---\n", "", false},
		{"null is absent", map[string]any{"name": "a", "description": "d", "license": nil}, "---\nname: a\ndescription: d\n---\n", "", false},
		{"description differs", base, "---\nname: a\ndescription: e\n---\n", "description", true},
		{"string is not a number", map[string]any{"name": "a", "description": "d", "v": "1.0"}, "---\nname: a\ndescription: d\nv: 1.0\n---\n", "v", true},
		{"file has an extra field", base, "---\nname: a\ndescription: d\nallowed-tools: Bash\n---\n", "allowed-tools", true},
		{"entry has an extra field", map[string]any{"name": "a", "description": "d", "license": "MIT"}, "---\nname: a\ndescription: d\n---\n", "license", true},
		{"nested differs", map[string]any{"name": "a", "description": "d", "metadata": map[string]any{"v": "1"}},
			"---\nname: a\ndescription: d\nmetadata:\n  v: \"2\"\n---\n", "metadata", true},
		{"no frontmatter", base, "# just a body\n", "", true},
		{"not a mapping", base, "---\n- a\n- b\n---\n", "", true},
		{"bad YAML", base, "---\nname: [a\n---\n", "", true},
		{"alias bomb", base, "---\nname: a\ndescription: d\n" + aliasBomb + "---\n", "", true},
		{"duplicate key", base, "---\nname: a\nname: b\ndescription: d\n---\n", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := compareFrontmatter(entry(c.fm), []byte(c.md))
			if !c.err {
				if err != nil {
					t.Fatalf("compare: %v", err)
				}
				return
			}
			var fe *FrontmatterError
			if !errors.As(err, &fe) || fe.Field != c.field || fe.Skill != "skill://a/SKILL.md" {
				t.Fatalf("compare = %v; want a FrontmatterError on %q", err, c.field)
			}
		})
	}
}

// aliasBomb is a few hundred bytes of YAML that expand to 10^7 values.
const aliasBomb = "x1: &a [x,x,x,x,x,x,x,x,x,x]\nx2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" +
	"x3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nx4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n" +
	"x5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nx6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n" +
	"x7: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"

// aliasTextBomb is 16 KB of YAML whose aliases expand to a thousand
// copies of a 16,000-byte string (16 MB of text) in a few thousand values.
var aliasTextBomb = "s: &s " + strings.Repeat("y", 16000) + "\n" +
	"t1: &a [*s,*s,*s,*s,*s,*s,*s,*s,*s,*s]\nt2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" +
	"t3: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"

// TestFrontmatterAliasText checks that aliases cannot expand a small
// frontmatter into a large text: few values, but many bytes.
func TestFrontmatterAliasText(t *testing.T) {
	md := "---\nname: a\ndescription: d\n" + aliasTextBomb + "---\n"
	m, err := parseFrontmatter("skill://a/SKILL.md", []byte(md))
	var fe *FrontmatterError
	if !errors.As(err, &fe) || fe.Err == nil {
		t.Fatalf("parse = %d fields, %v; want a FrontmatterError on the block", len(m), err)
	}
}

// FuzzFrontmatter checks that no SKILL.md makes the parser panic or
// accept content that differs from the entry.
func FuzzFrontmatter(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody"))
	f.Add([]byte("---\n&a [*a]\n---\n"))
	f.Add([]byte("\ufeff---\r\nname: !!binary aGk=\r\n---"))
	f.Fuzz(func(t *testing.T, md []byte) {
		e := &Entry{URI: "skill://a/SKILL.md", Frontmatter: map[string]any{"name": "a", "description": "d"}}
		if err := compareFrontmatter(e, md); err == nil {
			m, perr := parseFrontmatter(e.URI, md)
			if perr != nil || m["name"] != "a" || m["description"] != "d" || len(m) != 2 {
				t.Fatalf("accepted %q as %v", md, m)
			}
		}
	})
}
