package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// File is one file of a skill as its entry lists it: the resource URI, the
// SHA-256 digest of the file's raw bytes and their length.
type File struct {
	// URI is the file's resource URI, read with resources/read.
	URI string `json:"uri"`
	// Digest is "sha256:" followed by 64 lowercase hexadecimal digits.
	Digest string `json:"digest"`
	// Size is the length of the raw content in bytes.
	Size int64 `json:"size"`
}

// Entry is a skill as skills/list and skills/get describe it. Decoding an
// entry never fails on its contents: an entry that breaks the extension's
// rules still lists, and [Host.Load] refuses it with an [*EntryError].
type Entry struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string
	// Frontmatter is the SKILL.md frontmatter as the server rendered it,
	// decoded from JSON (nil when the entry has none or it is not an
	// object).
	Frontmatter map[string]any
	// Files is the skill's complete file list, SKILL.md included; nil
	// when the skill is dynamic.
	Files []File
	// Dynamic reports resources "dynamic": the server publishes no
	// digests for the skill's generated content.
	Dynamic bool

	invalid *EntryError // the first rule the entry breaks, found at decode
}

// Name returns frontmatter.name, or "" when it is absent or not a string.
func (e *Entry) Name() string { return e.str("name") }

// Description returns frontmatter.description, or "" when it is absent or
// not a string.
func (e *Entry) Description() string { return e.str("description") }

func (e *Entry) str(key string) string {
	s, _ := e.Frontmatter[key].(string)
	return s
}

// Root returns the URI of the skill's root directory: URI without its
// "/SKILL.md" suffix, or "" when URI does not end in it.
func (e *Entry) Root() string {
	root, ok := strings.CutSuffix(e.URI, "/"+SkillFile)
	if !ok {
		return ""
	}
	return root
}

// File returns the listed file at uri.
func (e *Entry) File(uri string) (File, bool) {
	for _, f := range e.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return File{}, false
}

// index returns the URIs of the listed files and of the directories
// that contain them (every prefix of a file's URI that ends before a
// "/"), so that a directory listing is set against the entry in time
// linear in the two.
func (e *Entry) index() (files, dirs map[string]bool) {
	files = make(map[string]bool, len(e.Files))
	dirs = make(map[string]bool)
	for _, f := range e.Files {
		files[f.URI] = true
		// A prefix already recorded had its own prefixes recorded with it.
		for u := f.URI; ; {
			i := strings.LastIndexByte(u, '/')
			if i < 0 || dirs[u[:i]] {
				break
			}
			u = u[:i]
			dirs[u] = true
		}
	}
	return files, dirs
}

// UnmarshalJSON decodes an entry. Only a value that is not a JSON object
// is an error; a field of the wrong shape is remembered for [Host.Load].
func (e *Entry) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return fmt.Errorf("skills: a skill entry must be a JSON object")
	}
	*e = Entry{}
	bad := func(field, format string, args ...any) {
		if e.invalid == nil {
			e.invalid = &EntryError{Skill: e.URI, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
	}
	if json.Unmarshal(raw["uri"], &e.URI) != nil || e.URI == "" {
		bad("uri", "missing or not a string")
	}
	if fm, ok := raw["frontmatter"]; !ok {
		bad("frontmatter", "missing")
	} else if json.Unmarshal(fm, &e.Frontmatter) != nil || e.Frontmatter == nil {
		e.Frontmatter = nil
		bad("frontmatter", "not an object")
	}
	res, ok := raw["resources"]
	switch {
	case !ok:
		bad("resources", "missing")
	case bytes.Equal(bytes.TrimSpace(res), []byte(`"dynamic"`)):
		e.Dynamic = true
	case json.Unmarshal(res, &e.Files) != nil || e.Files == nil:
		e.Files = nil
		bad("resources", "neither an array of files nor \"dynamic\"")
	}
	if e.invalid != nil {
		e.invalid.Skill = e.URI
	}
	return nil
}

// MarshalJSON encodes the entry as the extension's Skill object.
func (e Entry) MarshalJSON() ([]byte, error) {
	var res any = e.Files
	if e.Dynamic {
		res = "dynamic"
	}
	return json.Marshal(map[string]any{"uri": e.URI, "frontmatter": e.Frontmatter, "resources": res})
}

var (
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// namePattern is the Agent Skills naming rule: 1-64 lowercase
	// alphanumerics and hyphens, no leading, trailing or double hyphen.
	namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// Validate checks the entry against the extension's rules for a skill a
// host may load: a SKILL.md URI whose last path segment is
// frontmatter.name (a valid skill name), a string description, and either
// "dynamic" or a complete file list (SKILL.md included, every file within
// the skill's directory and listed once, well-formed digests, sizes not
// negative). A file is within the directory when its URI is the
// directory's followed by segments of which none, percent-decoded, is
// empty, "." or "..", or holds a slash or backslash: an application may
// write the files under a folder of its own by their path. It returns an
// [*EntryError] naming the first field at fault.
func (e *Entry) Validate() error {
	if e.invalid != nil {
		return e.invalid
	}
	bad := func(field, format string, args ...any) error {
		return &EntryError{Skill: e.URI, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	root := e.Root()
	if root == "" || !strings.Contains(root, "://") {
		return bad("uri", "%q is not the URI of a SKILL.md", e.URI)
	}
	name := e.Name()
	if name == "" {
		return bad("frontmatter.name", "missing or not a string")
	}
	if !namePattern.MatchString(name) || len(name) > 64 {
		return bad("frontmatter.name", "%q breaks the skill naming rules", name)
	}
	if last := root[strings.LastIndex(root, "/")+1:]; last != name {
		return bad("uri", "the last path segment %q is not the skill's name %q", last, name)
	}
	if e.Description() == "" {
		return bad("frontmatter.description", "missing or not a string")
	}
	if e.Dynamic {
		return nil
	}
	return e.validateFiles(root)
}

// inDir reports whether uri names a file below root (see [Entry.Validate]).
func inDir(root, uri string) bool {
	rel, ok := strings.CutPrefix(uri, root+"/")
	if !ok {
		return false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if s, err := url.PathUnescape(seg); err == nil {
			seg = s
		}
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, `/\`) {
			return false
		}
	}
	return true
}

func (e *Entry) validateFiles(root string) error {
	seen := make(map[string]bool, len(e.Files))
	for i, f := range e.Files {
		field := fmt.Sprintf("resources[%d]", i)
		switch {
		case f.URI != e.URI && !inDir(root, f.URI):
			return &EntryError{Skill: e.URI, Field: field, Reason: fmt.Sprintf("%q is not within the skill's directory", f.URI)}
		case seen[f.URI]:
			return &EntryError{Skill: e.URI, Field: field, Reason: fmt.Sprintf("%q is listed twice", f.URI)}
		case !digestPattern.MatchString(f.Digest):
			return &EntryError{Skill: e.URI, Field: field + ".digest", Reason: fmt.Sprintf("%q is not sha256: and 64 lowercase hex digits", f.Digest)}
		case f.Size < 0:
			return &EntryError{Skill: e.URI, Field: field + ".size", Reason: fmt.Sprintf("negative size %d", f.Size)}
		}
		seen[f.URI] = true
	}
	if !seen[e.URI] {
		return &EntryError{Skill: e.URI, Field: "resources", Reason: "SKILL.md is not listed"}
	}
	return nil
}
