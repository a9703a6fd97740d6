package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/goccy/go-yaml"
)

// splitFrontmatter splits a SKILL.md into its YAML frontmatter (between a
// first line "---" and the next line "---") and the body after it. A
// leading byte order mark is skipped; ok is false when there is no block.
func splitFrontmatter(b []byte) (front, body []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	first, rest, found := cutLine(b)
	if !found || string(first) != "---" {
		return nil, b, false
	}
	for tail := rest; ; {
		line, after, more := cutLine(tail)
		if string(bytes.TrimRight(line, " \t")) == "---" {
			return rest[:len(rest)-len(tail)], after, true
		}
		if !more {
			return nil, b, false
		}
		tail = after
	}
}

// cutLine cuts b after its first line, dropping the "\n" or "\r\n";
// found is false when b has no newline (line is then all of b).
func cutLine(b []byte) (line, rest []byte, found bool) {
	line, rest, found = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, found
}

// parseFrontmatter parses SKILL.md's frontmatter into JSON values (as the
// entry's frontmatter decodes), so that the two compare field by field.
func parseFrontmatter(skill string, b []byte) (map[string]any, error) {
	front, _, ok := splitFrontmatter(b)
	if !ok {
		return nil, &FrontmatterError{Skill: skill}
	}
	if len(front) > maxFrontmatterBytes {
		return nil, &FrontmatterError{Skill: skill, Err: fmt.Errorf("larger than %d bytes", maxFrontmatterBytes)}
	}
	var v any
	if err := yaml.Unmarshal(front, &v); err != nil {
		return nil, &FrontmatterError{Skill: skill, Err: errors.New(yaml.FormatError(err, false, false))}
	}
	if _, isMap := v.(map[string]any); !isMap {
		return nil, &FrontmatterError{Skill: skill}
	}
	budget := expansion{values: maxFrontmatterValues, text: maxFrontmatterText}
	if !budget.within(v) {
		return nil, &FrontmatterError{Skill: skill, Err: fmt.Errorf("more than %d values or %d bytes of text (aliases expand to too much)", maxFrontmatterValues, maxFrontmatterText)}
	}
	m, err := jsonValue(v)
	if err != nil {
		return nil, &FrontmatterError{Skill: skill, Err: fmt.Errorf("a value has no JSON form: %v", err)}
	}
	return m, nil
}

// maxFrontmatterBytes bounds the frontmatter block parsed: the YAML
// parser takes time quadratic in the nesting of what it parses (a
// megabyte of "[" takes it minutes to refuse), and the Agent Skills
// fields (a name, a description of at most 1024 characters, a few short
// others and metadata) fit many times over.
const maxFrontmatterBytes = 32 << 10

// maxFrontmatterValues bounds the values of a parsed frontmatter, counted
// with aliases expanded, so that a small file cannot expand to a huge
// value (YAML aliases are shared when parsed, copied when rendered).
const maxFrontmatterValues = 100_000

// maxFrontmatterText bounds the bytes of the strings (keys included) of a
// parsed frontmatter, counted with aliases expanded: a few thousand
// aliases of one long string are few values but much text. Without
// aliases the text is no longer than the block's 32 KiB.
const maxFrontmatterText = 1 << 20

// expansion is what is left of the bounds on a parsed frontmatter.
type expansion struct {
	values, text int
}

// within reports whether v fits in what is left of the bounds, spending
// them as it walks.
func (b *expansion) within(v any) bool {
	b.values--
	if b.values < 0 {
		return false
	}
	switch x := v.(type) {
	case string:
		return b.spend(x)
	case map[string]any:
		for k, e := range x {
			if !b.spend(k) || !b.within(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !b.within(e) {
				return false
			}
		}
	}
	return true
}

// spend spends the text bound on s.
func (b *expansion) spend(s string) bool {
	b.text -= len(s)
	return b.text >= 0
}

// jsonValue renders v as JSON and decodes it back as an object.
func jsonValue(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// compareFrontmatter parses SKILL.md's frontmatter and compares it with
// the entry's, field by field in sorted order.
func compareFrontmatter(e *Entry, skillMD []byte) error {
	file, err := parseFrontmatter(e.URI, skillMD)
	if err != nil {
		return err
	}
	entry, err := jsonValue(e.Frontmatter)
	if err != nil {
		return &FrontmatterError{Skill: e.URI, Err: err}
	}
	keys := make([]string, 0, len(file)+len(entry))
	for k := range file {
		keys = append(keys, k)
	}
	for k := range entry {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if !reflect.DeepEqual(entry[k], file[k]) {
			return &FrontmatterError{Skill: e.URI, Field: k, Entry: entry[k], File: file[k]}
		}
	}
	return nil
}
