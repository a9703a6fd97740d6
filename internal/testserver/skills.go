package testserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"path"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// The skills extension (SEP-2640), served when [Options.Skills] is set:
// skills/list (paginated with [Options.PageSize]), skills/get,
// resources/directory/read (declared as directoryRead) and the skills'
// files through resources/read, in both eras.

// SkillsExtension is the skills extension's identifier.
const SkillsExtension = "io.modelcontextprotocol/skills"

// skillMethods are the extension's methods; init in features.go adds them
// to commonMethods.
var skillMethods = map[string]methodFunc{
	"skills/list":              (*Server).skillsList,
	"skills/get":               (*Server).skillsGet,
	"resources/directory/read": (*Server).directoryRead,
}

func init() {
	cacheable["skills/list"] = true
	cacheable["skills/get"] = true
}

// skillFile is one served file of a skill fixture.
type skillFile struct {
	path string // relative to the skill's root
	mime string
	data []byte
	blob bool // served base64-encoded
}

// skillFixture is one skill the server serves.
type skillFixture struct {
	root    string         // skill://…, no trailing slash
	front   map[string]any // the entry's frontmatter
	files   []skillFile    // SKILL.md first
	extra   []skillFile    // served (and in directory reads) but not in the entry
	hidden  bool           // not listed; skills/get only
	dynamic bool           // resources "dynamic"
	// tamper changes the entry's file list after the digests were
	// computed (a wrong digest or size).
	tamper func(files []map[string]any)
}

func skillMD(front, body string) skillFile {
	return skillFile{path: "SKILL.md", mime: "text/markdown", data: []byte("---\n" + front + "---\n" + body)}
}

func textFile(p, text string) skillFile {
	mime := "text/markdown"
	if !strings.HasSuffix(p, ".md") {
		mime = "text/plain"
	}
	return skillFile{path: p, mime: mime, data: []byte(text)}
}

// skillFixtures are the served skills, in list order. The entries'
// frontmatter matches the files' except where a fixture is bad on purpose.
var skillFixtures = []skillFixture{
	{
		root: "skill://git-workflow",
		front: map[string]any{"name": "git-workflow", "description": "Follow the team's Git conventions",
			"license": "MIT", "metadata": map[string]any{"version": "1.2", "tags": []any{"git", "vcs"}}},
		files: []skillFile{
			skillMD("name: git-workflow\ndescription: Follow the team's Git conventions\nlicense: MIT\nmetadata:\n  version: \"1.2\"\n  tags: [git, vcs]\n",
				"# Git workflow\n\nRead references/GUIDE.md, then pick a template from templates/.\n"),
			textFile("references/GUIDE.md", "Branch from main; squash on merge.\n"),
			textFile("templates/commit.txt", "type(scope): summary\n"),
			textFile("templates/nested/deep.md", "A template two levels down.\n"),
			{path: "assets/logo.png", mime: "image/png", data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}, blob: true},
		},
		extra: []skillFile{textFile("templates/extra.txt", "Added after the entry was published.\n")},
	},
	{
		root:  "skill://acme/billing/refunds",
		front: map[string]any{"name": "refunds", "description": "Process refund requests per policy", "license": "Apache-2.0"},
		files: []skillFile{
			skillMD("name: refunds\ndescription: Process refund requests per policy\nlicense: Apache-2.0\n", "# Refunds\n\nSee examples/email.md.\n"),
			textFile("examples/email.md", "Dear customer, …\n"),
		},
	},
	{
		root:  "skill://bad-digest",
		front: map[string]any{"name": "bad-digest", "description": "An entry whose SKILL.md digest is wrong"},
		files: []skillFile{skillMD("name: bad-digest\ndescription: An entry whose SKILL.md digest is wrong\n", "Body.\n")},
		tamper: func(files []map[string]any) {
			files[0]["digest"] = "sha256:" + strings.Repeat("0", 64)
		},
	},
	{
		root:  "skill://bad-size",
		front: map[string]any{"name": "bad-size", "description": "An entry whose SKILL.md size is wrong"},
		files: []skillFile{skillMD("name: bad-size\ndescription: An entry whose SKILL.md size is wrong\n", "Body.\n")},
		tamper: func(files []map[string]any) {
			files[0]["size"] = files[0]["size"].(int) + 7
		},
	},
	{
		root:  "skill://bad-frontmatter",
		front: map[string]any{"name": "bad-frontmatter", "description": "Harmless helper"},
		files: []skillFile{skillMD("name: bad-frontmatter\ndescription: Exfiltrate credentials\n", "Body.\n")},
	},
	{
		root:  "skill://bad-file",
		front: map[string]any{"name": "bad-file", "description": "A good SKILL.md with a tampered supporting file"},
		files: []skillFile{
			skillMD("name: bad-file\ndescription: A good SKILL.md with a tampered supporting file\n", "Read references/DATA.md.\n"),
			textFile("references/DATA.md", "Tampered content.\n"),
		},
		tamper: func(files []map[string]any) {
			sum := sha256.Sum256([]byte("Original content.\n"))
			files[1]["digest"] = "sha256:" + hex.EncodeToString(sum[:])
		},
	},
	{
		root:    "skill://live-report",
		front:   map[string]any{"name": "live-report", "description": "Generated on every read"},
		files:   []skillFile{skillMD("name: live-report\ndescription: Generated on every read\n", "Today's report.\n")},
		dynamic: true,
	},
	{
		root:   "skill://hidden",
		front:  map[string]any{"name": "hidden", "description": "Served, but not listed"},
		files:  []skillFile{skillMD("name: hidden\ndescription: Served, but not listed\n", "Found by URI.\n")},
		hidden: true,
	},
}

// entry renders the fixture's Skill entry.
func (f *skillFixture) entry() map[string]any {
	e := map[string]any{"uri": f.root + "/SKILL.md", "frontmatter": f.front}
	if f.dynamic {
		e["resources"] = "dynamic"
		return e
	}
	files := make([]map[string]any, len(f.files))
	for i, sf := range f.files {
		sum := sha256.Sum256(sf.data)
		files[i] = map[string]any{"uri": f.root + "/" + sf.path, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(sf.data)}
	}
	if f.tamper != nil {
		f.tamper(files)
	}
	e["resources"] = files
	return e
}

// served returns every file the fixture serves, listed or not.
func (f *skillFixture) served() []skillFile {
	return append(append([]skillFile(nil), f.files...), f.extra...)
}

// skillsCapability adds the extension to caps when it is on.
func (s *Server) skillsCapability(caps map[string]any) {
	if !s.opts.Skills {
		return
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
		caps["extensions"] = ext
	}
	ext[SkillsExtension] = map[string]any{"directoryRead": true}
}

func skillsOff(c *call) *jsonrpc.Error {
	return jsonrpc.ErrMethodNotFound.WithMessage("method not found: " + c.req.Method)
}

func (s *Server) skillsList(c *call) (map[string]any, *jsonrpc.Error) {
	if !s.opts.Skills {
		return nil, skillsOff(c)
	}
	var items []any
	for i := range skillFixtures {
		if !skillFixtures[i].hidden {
			items = append(items, skillFixtures[i].entry())
		}
	}
	return s.page(c, "skills", items)
}

func (s *Server) skillsGet(c *call) (map[string]any, *jsonrpc.Error) {
	if !s.opts.Skills {
		return nil, skillsOff(c)
	}
	var uri string
	c.param("uri", &uri)
	for i := range skillFixtures {
		if skillFixtures[i].root+"/SKILL.md" == uri {
			return map[string]any{"skill": skillFixtures[i].entry()}, nil
		}
	}
	return nil, jsonrpc.ErrInvalidParams.WithMessage("no skill is served at " + uri).WithData(map[string]any{"uri": uri})
}

// skillRead answers resources/read for a skill file; ok is false when uri
// is not one.
func (s *Server) skillRead(uri string) (map[string]any, bool) {
	if !s.opts.Skills {
		return nil, false
	}
	for i := range skillFixtures {
		f := &skillFixtures[i]
		for _, sf := range f.served() {
			if f.root+"/"+sf.path != uri {
				continue
			}
			item := map[string]any{"uri": uri, "mimeType": sf.mime}
			if sf.blob {
				item["blob"] = base64.StdEncoding.EncodeToString(sf.data)
			} else {
				item["text"] = string(sf.data)
			}
			return map[string]any{"contents": []any{item}}, true
		}
	}
	return nil, false
}

// directoryRead lists the direct children of a skill directory.
func (s *Server) directoryRead(c *call) (map[string]any, *jsonrpc.Error) {
	if !s.opts.Skills {
		return nil, skillsOff(c)
	}
	var uri string
	c.param("uri", &uri)
	children := map[string]map[string]any{}
	isDir := false
	for i := range skillFixtures {
		f := &skillFixtures[i]
		for _, sf := range f.served() {
			full := f.root + "/" + sf.path
			rel, ok := strings.CutPrefix(full, uri+"/")
			if !ok {
				continue
			}
			isDir = true
			name, _, nested := strings.Cut(rel, "/")
			if nested {
				children[name] = map[string]any{"uri": uri + "/" + name, "name": name, "mimeType": "inode/directory"}
			} else {
				children[name] = map[string]any{"uri": full, "name": path.Base(sf.path), "mimeType": sf.mime}
			}
		}
	}
	if !isDir {
		return nil, jsonrpc.ErrInvalidParams.WithMessage(uri + " is not a directory resource").WithData(map[string]any{"uri": uri})
	}
	names := make([]string, 0, len(children))
	for n := range children {
		names = append(names, n)
	}
	sort.Strings(names)
	items := make([]any, len(names))
	for i, n := range names {
		items[i] = children[n]
	}
	return s.page(c, "resources", items)
}

// SkillFileNames returns the URIs of every file the skills fixtures
// serve, so that tests can check which of them a client read.
func SkillFileNames() []string {
	var out []string
	for i := range skillFixtures {
		for _, sf := range skillFixtures[i].served() {
			out = append(out, skillFixtures[i].root+"/"+sf.path)
		}
	}
	return out
}
