package skills_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/skills"
)

const (
	gitWorkflow = "skill://git-workflow/SKILL.md"
	refunds     = "skill://acme/billing/refunds/SKILL.md"
	hidden      = "skill://hidden/SKILL.md"
)

var listedSkills = []string{
	refunds,
	"skill://bad-digest/SKILL.md",
	"skill://bad-file/SKILL.md",
	"skill://bad-frontmatter/SKILL.md",
	"skill://bad-size/SKILL.md",
	gitWorkflow,
	"skill://live-report/SKILL.md",
}

func TestListAndGet(t *testing.T) {
	matrix(t, func(t *testing.T, f *fixture) {
		ctx := testCtx(t)
		set, ok := f.h.Declared()
		if !ok || !set.DirectoryRead {
			t.Fatalf("Declared() = %+v, %v; want directoryRead, true", set, ok)
		}
		got := listAll(t, f.h)
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, listedSkills) {
			t.Fatalf("listed %v\nwant %v", keys, listedSkills)
		}
		e := got[gitWorkflow]
		if e.Name() != "git-workflow" || e.Root() != "skill://git-workflow" || len(e.Files) != 5 || e.Dynamic {
			t.Errorf("git-workflow entry = %+v", e)
		}
		if !got["skill://live-report/SKILL.md"].Dynamic {
			t.Error("live-report is not dynamic")
		}
		h, err := f.h.Get(ctx, hidden)
		if err != nil || h.Name() != "hidden" || len(h.Files) != 1 {
			t.Fatalf("Get(hidden) = %+v, %v", h, err)
		}
		_, err = f.h.Get(ctx, "skill://nope/SKILL.md")
		if !errors.Is(err, jsonrpc.ErrInvalidParams) {
			t.Fatalf("Get(unknown) = %v; want -32602", err)
		}
		if f.srv == nil {
			return
		}
		// Two skills a page: 7 listed skills are 4 pages.
		var lists int
		for _, m := range methods(f.srv) {
			if m == skills.MethodList {
				lists++
			}
		}
		if lists != 4 {
			t.Errorf("%d skills/list requests, want 4 (pages of 2)", lists)
		}
		if r := skillReads(f.srv); len(r) != 0 {
			t.Errorf("listing and getting read skill files: %v", r)
		}
	})
}

func TestLoadAndReadFiles(t *testing.T) {
	matrix(t, func(t *testing.T, f *fixture) {
		ctx := testCtx(t)
		entries := listAll(t, f.h)
		s, err := f.h.Load(ctx, entries[gitWorkflow])
		if err != nil {
			t.Fatalf("Load(git-workflow): %v", err)
		}
		if !strings.HasPrefix(s.Body(), "# Git workflow") || !bytes.HasPrefix(s.Content(), []byte("---\nname: git-workflow\n")) {
			t.Errorf("Body() = %q", s.Body())
		}
		guide, err := s.ReadFile(ctx, "references/GUIDE.md")
		if err != nil || string(guide) != "Branch from main; squash on merge.\n" {
			t.Fatalf("ReadFile(GUIDE.md) = %q, %v", guide, err)
		}
		logo, err := s.ReadFile(ctx, "skill://git-workflow/assets/logo.png")
		if err != nil || !bytes.Equal(logo, []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}) {
			t.Fatalf("ReadFile(logo.png) = %v, %v", logo, err)
		}
		if _, err := s.ReadFile(ctx, "references/GUIDE.md"); err != nil {
			t.Fatalf("second ReadFile(GUIDE.md): %v", err)
		}
		_, err = s.ReadFile(ctx, "templates/extra.txt")
		var ve *skills.VerifyError
		if !errors.As(err, &ve) || ve.Check != skills.CheckUnlisted || ve.URI != "skill://git-workflow/templates/extra.txt" {
			t.Fatalf("ReadFile(unlisted) = %v; want an unlisted VerifyError", err)
		}
		if f.srv != nil {
			want := []string{gitWorkflow, "skill://git-workflow/references/GUIDE.md", "skill://git-workflow/assets/logo.png"}
			if got := skillReads(f.srv); !slices.Equal(got, want) {
				t.Errorf("files read: %v\nwant %v (each once, no unlisted file)", got, want)
			}
		}
		// A skill with a prefix path and more frontmatter.
		r, err := f.h.Load(ctx, entries[refunds])
		if err != nil {
			t.Fatalf("Load(refunds): %v", err)
		}
		if b, err := r.ReadFile(ctx, "examples/email.md"); err != nil || !strings.HasPrefix(string(b), "Dear customer") {
			t.Fatalf("ReadFile(email.md) = %q, %v", b, err)
		}
	})
}

func TestLoadRefusesBadSkills(t *testing.T) {
	matrix(t, func(t *testing.T, f *fixture) {
		ctx := testCtx(t)
		entries := listAll(t, f.h)
		load := func(name string) error {
			s, err := f.h.Load(ctx, entries["skill://"+name+"/SKILL.md"])
			if err == nil {
				t.Errorf("Load(%s) loaded %v", name, s.Entry().URI)
			}
			return err
		}
		var ve *skills.VerifyError
		if err := load("bad-digest"); !errors.As(err, &ve) || ve.Check != skills.CheckDigest ||
			ve.URI != "skill://bad-digest/SKILL.md" || ve.Want != "sha256:"+strings.Repeat("0", 64) || !strings.HasPrefix(ve.Got, "sha256:") {
			t.Errorf("Load(bad-digest) = %#v", err)
		}
		if err := load("bad-size"); !errors.As(err, &ve) || ve.Check != skills.CheckSize || ve.URI != "skill://bad-size/SKILL.md" {
			t.Errorf("Load(bad-size) = %#v", err)
		} else if size := entries["skill://bad-size/SKILL.md"].Files[0].Size; ve.Want != itoa(size)+" bytes" || ve.Got != itoa(size-7)+" bytes" {
			t.Errorf("bad-size: want %q got %q", ve.Want, ve.Got)
		}
		var fe *skills.FrontmatterError
		if err := load("bad-frontmatter"); !errors.As(err, &fe) || fe.Field != "description" ||
			fe.Entry != "Harmless helper" || fe.File != "Exfiltrate credentials" {
			t.Errorf("Load(bad-frontmatter) = %#v", err)
		}
		if err := load("live-report"); !errors.Is(err, skills.ErrDynamic) {
			t.Errorf("Load(live-report) = %v; want ErrDynamic", err)
		}
		// A good SKILL.md loads; the tampered supporting file does not read.
		s, err := f.h.Load(ctx, entries["skill://bad-file/SKILL.md"])
		if err != nil {
			t.Fatalf("Load(bad-file): %v", err)
		}
		b, err := s.ReadFile(ctx, "references/DATA.md")
		if !errors.As(err, &ve) || ve.Check != skills.CheckDigest || ve.URI != "skill://bad-file/references/DATA.md" || b != nil {
			t.Errorf("ReadFile(DATA.md) = %q, %v", b, err)
		}
		if f.srv != nil {
			want := []string{"skill://bad-digest/SKILL.md", "skill://bad-size/SKILL.md", "skill://bad-frontmatter/SKILL.md",
				"skill://bad-file/SKILL.md", "skill://bad-file/references/DATA.md"}
			if got := skillReads(f.srv); !slices.Equal(got, want) {
				t.Errorf("files read: %v\nwant %v (SKILL.md of each refused skill, nothing of the dynamic one)", got, want)
			}
		}
	})
}

// TestNoPrefetch proves from the server's record that connecting,
// listing, getting and validating an entry read no skill file, and that
// loading reads SKILL.md alone.
func TestNoPrefetch(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, era.p, testserver.Options{Skills: true})
				ctx := testCtx(t)
				entries := listAll(t, f.h)
				e, err := f.h.Get(ctx, gitWorkflow)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					_ = e.Validate()
				}
				if r := skillReads(f.srv); len(r) != 0 {
					t.Fatalf("before Load the client read %v", r)
				}
				s, err := f.h.Load(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				if r := skillReads(f.srv); !slices.Equal(r, []string{gitWorkflow}) {
					t.Fatalf("Load read %v; want SKILL.md only", r)
				}
				if _, err := s.ReadDir(ctx, "templates"); err != nil {
					t.Fatal(err)
				}
				if r := skillReads(f.srv); len(r) != 1 {
					t.Fatalf("ReadDir read files: %v", r)
				}
				if got := methods(f.srv); !slices.Equal(got, []string{"skills/list", "skills/get", "resources/read", "resources/directory/read"}) {
					t.Errorf("requests: %v", got)
				}
			})
		}
	}
}

func TestReadDir(t *testing.T) {
	matrix(t, func(t *testing.T, f *fixture) {
		ctx := testCtx(t)
		e, err := f.h.Get(ctx, gitWorkflow)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.h.Load(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.ReadDir(ctx, "templates")
		if err != nil {
			t.Fatalf("ReadDir(templates): %v", err)
		}
		if got := uris(d.Entries); !slices.Equal(got, []string{"skill://git-workflow/templates/commit.txt", "skill://git-workflow/templates/nested"}) {
			t.Errorf("templates entries: %v", got)
		}
		if len(d.Entries) == 2 && d.Entries[1].MIMEType != skills.DirectoryMIMEType {
			t.Errorf("nested has MIME type %q", d.Entries[1].MIMEType)
		}
		if got := uris(d.Unlisted); !slices.Equal(got, []string{"skill://git-workflow/templates/extra.txt"}) {
			t.Errorf("templates unlisted: %v", got)
		}
		root, err := s.ReadDir(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := uris(root.Entries); len(got) != 4 || len(root.Unlisted) != 0 {
			t.Errorf("root: %v, unlisted %v", got, uris(root.Unlisted))
		}
		deep, err := s.ReadDir(ctx, "templates/nested")
		if err != nil || len(deep.Entries) != 1 {
			t.Fatalf("ReadDir(templates/nested) = %+v, %v", deep, err)
		}
		if b, err := s.ReadFile(ctx, deep.Entries[0].URI); err != nil || string(b) != "A template two levels down.\n" {
			t.Errorf("ReadFile(deep.md) = %q, %v", b, err)
		}
		_, err = f.h.ReadDirectory(ctx, gitWorkflow)
		if !errors.Is(err, jsonrpc.ErrInvalidParams) {
			t.Errorf("ReadDirectory(a file) = %v; want -32602", err)
		}
	})
}

func TestNotDeclared(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, era.p, testserver.Options{})
			ctx := testCtx(t)
			if _, ok := f.h.Declared(); ok {
				t.Fatal("Declared() on a server without the extension")
			}
			for _, err := range f.h.List(ctx) {
				if !errors.Is(err, client.ErrNotSupported) {
					t.Errorf("List: %v; want ErrNotSupported", err)
				}
			}
			if _, err := f.h.Get(ctx, gitWorkflow); !errors.Is(err, client.ErrNotSupported) {
				t.Errorf("Get: %v", err)
			}
			if _, err := f.h.ReadDirectory(ctx, "skill://git-workflow"); !errors.Is(err, client.ErrNotSupported) {
				t.Errorf("ReadDirectory: %v", err)
			}
			if got := methods(f.srv); len(got) != 0 {
				t.Errorf("sent %v to a server without the extension", got)
			}
		})
	}
}

// TestLoadURI loads a skill no listing shows, by its URI alone.
func TestLoadURI(t *testing.T) {
	matrix(t, func(t *testing.T, f *fixture) {
		s, err := f.h.LoadURI(testCtx(t), hidden)
		if err != nil || s.Body() != "Found by URI.\n" {
			t.Fatalf("LoadURI(hidden) = %v, %v", s, err)
		}
		if f.srv != nil {
			if got := methods(f.srv); !slices.Equal(got, []string{"skills/get", "resources/read"}) {
				t.Errorf("requests: %v", got)
			}
		}
	})
}

func TestBrokenAnswers(t *testing.T) {
	wrongSkill := json.RawMessage(`{"resultType":"complete","skill":{"uri":"skill://other/SKILL.md","frontmatter":{"name":"other","description":"d"},"resources":[]},"ttlMs":0,"cacheScope":"private"}`)
	noSkill := json.RawMessage(`{"resultType":"complete","ttlMs":0,"cacheScope":"private"}`)
	noResources := json.RawMessage(`{"resultType":"complete"}`)
	cases := []struct {
		name  string
		fault testserver.Fault
		run   func(h *skills.Host) error
	}{
		{"get answers another skill", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodGet, Result: wrongSkill},
			func(h *skills.Host) error { _, err := h.Get(testCtx(t), gitWorkflow); return err }},
		{"get answers no skill", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodGet, Result: noSkill},
			func(h *skills.Host) error { _, err := h.Get(testCtx(t), gitWorkflow); return err }},
		{"directory read repeats its cursor", testserver.Fault{Kind: testserver.FaultRepeatCursor, Method: skills.MethodDirectoryRead},
			func(h *skills.Host) error { _, err := h.ReadDirectory(testCtx(t), "skill://git-workflow"); return err }},
		{"directory read has no resources", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodDirectoryRead, Result: noResources},
			func(h *skills.Host) error { _, err := h.ReadDirectory(testCtx(t), "skill://git-workflow"); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true, Faults: []testserver.Fault{tc.fault}})
			err := tc.run(f.h)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Kind != client.KindProtocol || ce.Op != tc.fault.Method {
				t.Fatalf("err = %v; want a protocol error of %s", err, tc.fault.Method)
			}
		})
	}
}

// TestLoadWithoutContent checks that a read answered without usable
// content fails the load with a content VerifyError.
func TestLoadWithoutContent(t *testing.T) {
	for name, res := range map[string]string{
		"no contents":         `{"resultType":"complete","contents":[],"ttlMs":0,"cacheScope":"private"}`,
		"blob not base64":     `{"resultType":"complete","contents":[{"uri":"skill://git-workflow/SKILL.md","blob":"%%%"}],"ttlMs":0,"cacheScope":"private"}`,
		"another file's text": `{"resultType":"complete","contents":[{"uri":"skill://git-workflow/other.md","text":"x"}],"ttlMs":0,"cacheScope":"private"}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true,
				Faults: []testserver.Fault{{Kind: testserver.FaultResult, Method: "resources/read", Result: json.RawMessage(res)}}})
			_, err := f.h.LoadURI(testCtx(t), gitWorkflow)
			var ve *skills.VerifyError
			if !errors.As(err, &ve) || ve.URI != gitWorkflow || (ve.Check != skills.CheckContent && ve.Check != skills.CheckSize) {
				t.Fatalf("LoadURI = %v; want a content or size VerifyError", err)
			}
		})
	}
}

func TestListBrokenServer(t *testing.T) {
	cases := []struct {
		name  string
		fault testserver.Fault
	}{
		{"repeated cursor", testserver.Fault{Kind: testserver.FaultRepeatCursor, Method: skills.MethodList}},
		{"no skills array", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodList, Result: json.RawMessage(`{"resultType":"complete","ttlMs":0,"cacheScope":"private"}`)}},
		{"null entry", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodList, Result: json.RawMessage(`{"resultType":"complete","skills":[null],"ttlMs":0,"cacheScope":"private"}`)}},
		{"entry not an object", testserver.Fault{Kind: testserver.FaultResult, Method: skills.MethodList, Result: json.RawMessage(`{"resultType":"complete","skills":[42],"ttlMs":0,"cacheScope":"private"}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true, PageSize: 2, Faults: []testserver.Fault{tc.fault}})
			var last error
			n := 0
			for _, err := range f.h.List(testCtx(t)) {
				n++
				last = err
				if n > 100 {
					t.Fatal("List does not end")
				}
			}
			var ce *client.Error
			if !errors.As(last, &ce) || ce.Kind != client.KindProtocol || ce.Op != skills.MethodList {
				t.Fatalf("List ended with %v; want a protocol error", last)
			}
		})
	}
}

// TestLoadRefusesInvalidEntries checks that an entry no host may load is
// refused before anything is sent.
func TestLoadRefusesInvalidEntries(t *testing.T) {
	f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true})
	ctx := testCtx(t)
	good, err := f.h.Get(ctx, gitWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal([]skills.Entry{*good})
	var back []skills.Entry
	if err := json.Unmarshal(raw, &back); err != nil || len(back) != 1 || back[0].Validate() != nil || len(back[0].Files) != 5 {
		t.Fatalf("entry round trip: %s, %v", raw, err)
	}
	raw, _ = json.Marshal(good)
	mutate := func(fn func(m map[string]any)) *skills.Entry {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		fn(m)
		b, _ := json.Marshal(m)
		var e skills.Entry
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		return &e
	}
	cases := map[string]*skills.Entry{
		"resources":               mutate(func(m map[string]any) { delete(m, "resources") }),
		"uri":                     mutate(func(m map[string]any) { m["uri"] = "skill://other/SKILL.md" }),
		"frontmatter.name":        mutate(func(m map[string]any) { m["frontmatter"].(map[string]any)["name"] = "Bad_Name" }),
		"resources[1]":            mutate(func(m map[string]any) { m["resources"].([]any)[1].(map[string]any)["uri"] = "skill://elsewhere/x.md" }),
		"resources[0].digest":     mutate(func(m map[string]any) { m["resources"].([]any)[0].(map[string]any)["digest"] = "md5:abc" }),
		"frontmatter":             mutate(func(m map[string]any) { m["frontmatter"] = "name: x" }),
		"frontmatter.description": mutate(func(m map[string]any) { delete(m["frontmatter"].(map[string]any), "description") }),
	}
	f.srv.Reset()
	for field, e := range cases {
		_, err := f.h.Load(ctx, e)
		var ee *skills.EntryError
		if !errors.As(err, &ee) || ee.Field != field {
			t.Errorf("%s: Load = %v; want an EntryError on %s", field, err, field)
		}
	}
	if got := methods(f.srv); len(got) != 0 {
		t.Errorf("invalid entries sent %v", got)
	}
}

func uris(rs []protocol.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URI
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// hostileSkill makes the server answer the read of skill://bomb/SKILL.md
// with skillMD, and returns an entry that lists it with its true size
// and digest: the content passes both checks and reaches the
// frontmatter parser.
// Further files the entry lists are given by URI (never read).
func hostileSkill(t *testing.T, f *fixture, skillMD string, more ...string) *skills.Entry {
	t.Helper()
	const uri = "skill://bomb/SKILL.md"
	res, err := json.Marshal(map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/markdown", "text": skillMD}}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.AddFault(testserver.Fault{Kind: testserver.FaultResult, Method: "resources/read", Result: res})
	sum := sha256.Sum256([]byte(skillMD))
	files := []any{map[string]any{"uri": uri, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(skillMD)}}
	for _, u := range more {
		files = append(files, map[string]any{"uri": u, "digest": "sha256:" + strings.Repeat("0", 64), "size": 1})
	}
	raw, err := json.Marshal(map[string]any{"uri": uri, "frontmatter": map[string]any{"name": "bomb", "description": "x"},
		"resources": files})
	if err != nil {
		t.Fatal(err)
	}
	var e skills.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

// TestLoadHugeFrontmatter: a SKILL.md whose frontmatter is huge (here a
// megabyte of nested flow sequences, which the YAML parser takes time
// quadratic in to refuse) is refused with a *FrontmatterError before it
// is parsed, within seconds rather than after minutes of CPU.
func TestLoadHugeFrontmatter(t *testing.T) {
	f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true})
	e := hostileSkill(t, f, "---\nname: bomb\ndescription: "+strings.Repeat("[", 1<<20)+"\n---\nbody\n")
	done := make(chan error, 1)
	go func() {
		_, err := f.h.Load(testCtx(t), e)
		done <- err
	}()
	select {
	case err := <-done:
		var fe *skills.FrontmatterError
		if !errors.As(err, &fe) {
			t.Errorf("Load = %v, want a *FrontmatterError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load of a SKILL.md with a megabyte of frontmatter has not returned after 10 s")
	}
}

// TestLoadRefusesFilesOutsideSkill: a listed file whose URI climbs out of
// the skill's directory with dot segments (plain or percent-encoded), or
// has an empty segment, is not within the directory: an application that
// writes a skill's files under a folder of its own would write it
// elsewhere. The entry is refused before anything is sent.
func TestLoadRefusesFilesOutsideSkill(t *testing.T) {
	f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true})
	ctx := testCtx(t)
	good, err := f.h.Get(ctx, gitWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Reset()
	for _, uri := range []string{
		"skill://git-workflow/../other/SKILL.md",
		"skill://git-workflow/templates/../../x.md",
		"skill://git-workflow/%2e%2E/x.md",
		"skill://git-workflow/./x.md",
		"skill://git-workflow//x.md",
		"skill://git-workflow/templates/",
		`skill://git-workflow/..\x.md`,
		"skill://git-workflow/a%2F..%2F..%2Fx.md",
	} {
		e := *good
		e.Files = slices.Clone(good.Files)
		e.Files[1].URI = uri
		_, err := f.h.Load(ctx, &e)
		var ee *skills.EntryError
		if !errors.As(err, &ee) || ee.Field != "resources[1]" {
			t.Errorf("file %s: Load = %v; want an EntryError on resources[1]", uri, err)
		}
	}
	if got := methods(f.srv); len(got) != 0 {
		t.Errorf("invalid entries sent %v", got)
	}
}

// TestReadDirManyFiles: setting a large directory listing against an
// entry with many files takes time linear in their number, not in their
// product (a server that lists 60,000 files and answers a directory read
// with as many children of each kind kept the host busy for many
// seconds).
func TestReadDirManyFiles(t *testing.T) {
	const n = 60_000
	f := connect(t, tPipe, client.Modern, testserver.Options{Skills: true})
	files := make([]string, n)
	var children []protocol.Resource
	for i := range n {
		files[i] = "skill://bomb/f/" + strconv.Itoa(i)
		children = append(children,
			protocol.Resource{URI: "skill://bomb/d" + strconv.Itoa(i), Name: "d", MIMEType: skills.DirectoryMIMEType},
			protocol.Resource{URI: "skill://bomb/u" + strconv.Itoa(i), Name: "u"})
	}
	children = append(children, protocol.Resource{URI: "skill://bomb/f", Name: "f", MIMEType: skills.DirectoryMIMEType},
		protocol.Resource{URI: files[n-1], Name: "last"})
	e := hostileSkill(t, f, "---\nname: bomb\ndescription: x\n---\nbody\n", files...)
	dir, err := json.Marshal(map[string]any{"resources": children})
	if err != nil {
		t.Fatal(err)
	}
	f.srv.AddFault(testserver.Fault{Kind: testserver.FaultResult, Method: "resources/directory/read", Result: dir})
	s, err := f.h.Load(testCtx(t), e)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		d   *skills.Dir
		err error
	}
	done := make(chan result, 1)
	go func() {
		d, err := s.ReadDir(testCtx(t), "")
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := uris(r.d.Entries); !slices.Equal(got, []string{"skill://bomb/f", files[n-1]}) || len(r.d.Unlisted) != 2*n {
			t.Errorf("ReadDir: entries %v, %d unlisted; want f and the last file, %d unlisted", got, len(r.d.Unlisted), 2*n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadDir has not returned after 10 s")
	}
}
