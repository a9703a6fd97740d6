package skills

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/protocol"
)

// Skill is a loaded skill: its SKILL.md was read, verified against the
// held entry and its frontmatter compared with the entry's. Its other
// files are read on demand, each verified, and only files the held entry
// lists are read at all.
//
// A Skill is safe for concurrent use.
type Skill struct {
	h       *Host
	entry   *Entry
	content []byte

	mu    sync.Mutex
	cache map[string][]byte // verified files by URI
}

// Load loads the skill of entry e: it validates e ([Entry.Validate]),
// reads SKILL.md with resources/read, verifies its size and digest and
// compares its YAML frontmatter field by field with e.Frontmatter. Load
// reads SKILL.md and nothing else; a skill is never loaded from content
// that failed a check.
//
// Errors: an [*EntryError] for an invalid entry and [ErrDynamic] for a
// dynamic one (both before any request); a [*VerifyError] when SKILL.md's
// size or digest is not the entry's; a [*FrontmatterError] when its
// frontmatter is missing, larger than 32 KiB, does not parse or differs
// from the entry's;
// and whatever [client.Client.ReadResource] returns.
func (h *Host) Load(ctx context.Context, e *Entry) (*Skill, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if e.Dynamic {
		return nil, ErrDynamic
	}
	s := &Skill{h: h, entry: e, cache: map[string][]byte{}}
	b, err := s.fetch(ctx, e.URI)
	if err != nil {
		return nil, err
	}
	if err := compareFrontmatter(e, b); err != nil {
		return nil, err
	}
	s.content = b
	return s, nil
}

// LoadURI loads the skill whose SKILL.md is at uri, listed or not: it
// gets the skill's entry ([Host.Get]) and loads it ([Host.Load]). Errors
// are theirs.
func (h *Host) LoadURI(ctx context.Context, uri string) (*Skill, error) {
	e, err := h.Get(ctx, uri)
	if err != nil {
		return nil, err
	}
	return h.Load(ctx, e)
}

// Entry returns the held entry.
func (s *Skill) Entry() *Entry { return s.entry }

// Content returns SKILL.md as verified.
func (s *Skill) Content() []byte { return slices.Clone(s.content) }

// Body returns SKILL.md after its frontmatter block.
func (s *Skill) Body() string {
	_, body, _ := splitFrontmatter(s.content)
	return string(body)
}

// Resolve turns a reference inside the skill into a URI: a path relative
// to the skill's root (for example "references/GUIDE.md") is resolved
// against it; a reference with a scheme is returned as it is.
func (s *Skill) Resolve(ref string) string {
	if strings.Contains(ref, "://") {
		return ref
	}
	clean := path.Clean("/" + ref)
	if clean == "/" {
		return s.entry.Root()
	}
	return s.entry.Root() + clean
}

// ReadFile returns the verified content of the skill's file at ref (a URI
// or a path relative to the skill's root, see [Skill.Resolve]). A file
// the held entry does not list is never read: ReadFile fails with a
// [*VerifyError] of check [CheckUnlisted] without sending anything.
// Verified files are kept, so a second read sends nothing either.
//
// Errors: a [*VerifyError] (unlisted, no content, size or digest
// mismatch) and whatever [client.Client.ReadResource] returns.
func (s *Skill) ReadFile(ctx context.Context, ref string) ([]byte, error) {
	uri := s.Resolve(ref)
	if uri == s.entry.URI {
		return s.Content(), nil
	}
	s.mu.Lock()
	b, ok := s.cache[uri]
	s.mu.Unlock()
	if ok {
		return slices.Clone(b), nil
	}
	b, err := s.fetch(ctx, uri)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.cache[uri] = b
	s.mu.Unlock()
	return slices.Clone(b), nil
}

// fetch reads one listed file and verifies it against the entry.
func (s *Skill) fetch(ctx context.Context, uri string) ([]byte, error) {
	f, ok := s.entry.File(uri)
	if !ok {
		return nil, &VerifyError{Skill: s.entry.URI, URI: uri, Check: CheckUnlisted}
	}
	res, err := s.h.c.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	b, verr := contentBytes(res, uri)
	if verr != "" {
		return nil, &VerifyError{Skill: s.entry.URI, URI: uri, Check: CheckContent, Got: verr}
	}
	return b, verify(s.entry.URI, f, b)
}

// verify checks b against f: size first, then digest.
func verify(skill string, f File, b []byte) error {
	if int64(len(b)) != f.Size {
		return &VerifyError{Skill: skill, URI: f.URI, Check: CheckSize,
			Want: strconv.FormatInt(f.Size, 10) + " bytes", Got: strconv.Itoa(len(b)) + " bytes"}
	}
	sum := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != f.Digest {
		return &VerifyError{Skill: skill, URI: f.URI, Check: CheckDigest, Want: f.Digest, Got: got}
	}
	return nil
}

// contentBytes returns the raw bytes of the contents for uri (the first
// item when none names it): a text's UTF-8 bytes or a blob decoded from
// base64. It returns a reason instead when there is nothing to verify.
func contentBytes(res *protocol.ReadResourceResult, uri string) ([]byte, string) {
	if len(res.Contents) == 0 {
		return nil, "the server sent no contents"
	}
	item := res.Contents[0]
	for _, c := range res.Contents {
		if c.URI == uri {
			item = c
			break
		}
	}
	if item.Blob != "" {
		b, err := base64.StdEncoding.DecodeString(item.Blob)
		if err != nil {
			return nil, "the blob is not base64"
		}
		return b, ""
	}
	return []byte(item.Text), ""
}

// Dir is a directory of a loaded skill as the server lists it, set
// against the held entry.
type Dir struct {
	// Entries are the children the skill may use: files the held entry
	// lists and subdirectories that contain listed files.
	Entries []protocol.Resource
	// Unlisted are the children the server lists that the held entry
	// does not: the skill changed since the entry was fetched. They are
	// not files of the skill; refresh the entry ([Host.Get]) and load it
	// again to use them.
	Unlisted []protocol.Resource
}

// ReadDir lists the skill's directory at ref (relative to the skill's
// root, "" or "." for the root) with resources/directory/read. Errors are
// those of [Host.ReadDirectory].
func (s *Skill) ReadDir(ctx context.Context, ref string) (*Dir, error) {
	children, err := s.h.ReadDirectory(ctx, s.Resolve(ref))
	if err != nil {
		return nil, err
	}
	files, dirs := s.entry.index()
	d := &Dir{}
	for _, r := range children {
		listed := files
		if r.MIMEType == DirectoryMIMEType {
			listed = dirs
		}
		if listed[r.URI] {
			d.Entries = append(d.Entries, r)
		} else {
			d.Unlisted = append(d.Unlisted, r)
		}
	}
	return d, nil
}
