package testserver

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestSkillsOff checks that without Options.Skills the extension is
// neither declared nor served.
func TestSkillsOff(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	c := newStreamClient(t, s)
	res := c.initialize("2025-11-25", "")
	caps, _ := res["capabilities"].(map[string]any)
	if _, ok := caps["extensions"]; ok {
		t.Errorf("capabilities declare extensions: %v", caps)
	}
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		if e := rpcErr(t, c.call(m, map[string]any{"uri": "skill://git-workflow"})); e.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v; want method not found", m, e)
		}
	}
	if e := rpcErr(t, c.call("resources/read", map[string]any{"uri": "skill://git-workflow/SKILL.md"})); e.Code != jsonrpc.CodeResourceNotFound {
		t.Errorf("resources/read of a skill file: %v", e)
	}
}

// TestSkillsServed checks the declaration in both eras, the entries'
// digests against the served bytes and the directory listing's errors.
func TestSkillsServed(t *testing.T) {
	s := New(Options{Skills: true})
	defer s.Close()
	c := newStreamClient(t, s)
	caps, _ := c.initialize("2025-11-25", "")["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if set, _ := ext[SkillsExtension].(map[string]any); set["directoryRead"] != true {
		t.Fatalf("legacy capabilities: %v", caps)
	}
	modern := result(t, c.call("server/discover", withMeta(nil, modernMeta(""))))
	mcaps, _ := modern["capabilities"].(map[string]any)
	if mext, _ := mcaps["extensions"].(map[string]any); mext[SkillsExtension] == nil || mext["io.modelcontextprotocol/tasks"] == nil {
		t.Fatalf("modern capabilities: %v", mcaps)
	}
	got := result(t, c.call("skills/get", map[string]any{"uri": "skill://git-workflow/SKILL.md"}))
	skill, _ := got["skill"].(map[string]any)
	files, _ := skill["resources"].([]any)
	if len(files) != 5 {
		t.Fatalf("git-workflow lists %d files", len(files))
	}
	for _, f := range files {
		f := f.(map[string]any)
		uri := f["uri"].(string)
		read, ok := s.skillRead(uri)
		if !ok {
			t.Fatalf("%s is listed but not served", uri)
		}
		item := read["contents"].([]any)[0].(map[string]any)
		var b []byte
		if text, ok := item["text"].(string); ok {
			b = []byte(text)
		}
		if _, isBlob := item["blob"]; !isBlob {
			sum := sha256.Sum256(b)
			if f["digest"] != "sha256:"+hex.EncodeToString(sum[:]) || int(f["size"].(float64)) != len(b) {
				t.Errorf("%s: entry %v does not describe the served bytes", uri, f)
			}
		}
	}
	for _, uri := range []string{"skill://git-workflow/SKILL.md", "skill://nope", "skill://git-workflow/templates/commit.txt"} {
		if e := rpcErr(t, c.call("resources/directory/read", map[string]any{"uri": uri})); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("directory read of %s: %v; want -32602", uri, e)
		}
	}
	if e := rpcErr(t, c.call("skills/get", map[string]any{"uri": "skill://nope/SKILL.md"})); e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/get of an unknown skill: %v", e)
	}
}
