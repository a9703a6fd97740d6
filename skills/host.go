package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// The extension's names.
const (
	// ExtensionID is the extension's identifier in the server's
	// capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/skills"
	// SkillFile is the file every skill has at its root.
	SkillFile = "SKILL.md"
	// DirectoryMIMEType marks a directory resource.
	DirectoryMIMEType = "inode/directory"

	// MethodList lists the skills a server serves.
	MethodList = "skills/list"
	// MethodGet returns one skill's entry by the URI of its SKILL.md.
	MethodGet = "skills/get"
	// MethodDirectoryRead lists a directory resource's direct children.
	MethodDirectoryRead = "resources/directory/read"
)

// maxPages bounds a listing walk, as the client's own listings are bounded.
const maxPages = 1000

// Settings are the extension's settings a server declares.
type Settings struct {
	// DirectoryRead: the server implements resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// Host is the host side of the extension on one connection. It sends
// nothing by itself: each method sends the requests it names and no
// others, so no skill file is read before [Host.Load] or
// [Skill.ReadFile] asks for it.
type Host struct {
	c *client.Client
}

// NewHost returns the host side of the extension on c.
func NewHost(c *client.Client) *Host { return &Host{c: c} }

// Client returns the connection the host uses.
func (h *Host) Client() *client.Client { return h.c }

// Declared reports whether the server declared the extension, and its
// settings (settings that do not decode read as the defaults).
func (h *Host) Declared() (Settings, bool) {
	raw, ok := h.c.ServerCapabilities().Extensions[ExtensionID]
	if !ok {
		return Settings{}, false
	}
	var s Settings
	_ = json.Unmarshal(raw, &s)
	return s, true
}

// notDeclared is the error of a method the server's declaration does not
// cover; no request was sent.
func notDeclared(method, what string) error {
	return &client.Error{Op: method, Kind: client.KindUnsupported, Err: fmt.Errorf("the server does not declare %s: %w", what, client.ErrNotSupported)}
}

func protocolError(method string, format string, args ...any) error {
	return &client.Error{Op: method, Kind: client.KindProtocol, Err: fmt.Errorf(format, args...)}
}

// List iterates over the server's skills (skills/list), walking the
// pages. A listing may be partial: it does not prove that a skill absent
// from it is not served ([Host.Get] reaches any skill by URI).
//
// Errors end the walk: an [*client.Error] of kind KindUnsupported
// (matching [client.ErrNotSupported]) when the server did not declare the
// extension, in which case nothing is sent; of kind KindProtocol when a
// page does not decode, the server repeats a cursor or sends more than
// 1000 pages; and whatever [client.Client.Call] returns.
func (h *Host) List(ctx context.Context) iter.Seq2[*Entry, error] {
	return func(yield func(*Entry, error) bool) {
		if _, ok := h.Declared(); !ok {
			yield(nil, notDeclared(MethodList, ExtensionID))
			return
		}
		var cursor *string
		seen := map[string]bool{}
		for pages := 0; ; pages++ {
			if pages >= maxPages {
				yield(nil, protocolError(MethodList, "the server sent more than %d pages", maxPages))
				return
			}
			var page struct {
				Skills     *[]*Entry `json:"skills"`
				NextCursor *string   `json:"nextCursor"`
			}
			if err := h.c.Call(ctx, MethodList, &protocol.PaginatedParams{Cursor: cursor}, &page); err != nil {
				yield(nil, err)
				return
			}
			if page.Skills == nil {
				yield(nil, protocolError(MethodList, "the result has no skills array"))
				return
			}
			for _, e := range *page.Skills {
				if e == nil {
					yield(nil, protocolError(MethodList, "a skill entry is null"))
					return
				}
				if !yield(e, nil) {
					return
				}
			}
			next := page.NextCursor
			if next == nil || *next == "" {
				return
			}
			if seen[*next] {
				yield(nil, protocolError(MethodList, "server repeated the pagination cursor %q after %d pages", *next, pages+1))
				return
			}
			seen[*next] = true
			cursor = next
		}
	}
}

// Get returns the entry of the skill whose SKILL.md is at uri
// (skills/get), listed or not. A server that serves no such skill answers
// -32602: the error then matches jsonrpc.ErrInvalidParams. Errors are
// those of [Host.List], and a KindProtocol [*client.Error] when the
// answer's skill is missing or names another URI.
func (h *Host) Get(ctx context.Context, uri string) (*Entry, error) {
	if _, ok := h.Declared(); !ok {
		return nil, notDeclared(MethodGet, ExtensionID)
	}
	var res struct {
		Skill *Entry `json:"skill"`
	}
	if err := h.c.Call(ctx, MethodGet, map[string]string{"uri": uri}, &res); err != nil {
		return nil, err
	}
	if res.Skill == nil {
		return nil, protocolError(MethodGet, "the result has no skill")
	}
	if res.Skill.URI != uri {
		return nil, protocolError(MethodGet, "asked for %q, the server answered with %q", uri, res.Skill.URI)
	}
	return res.Skill, nil
}

// ReadDirectory lists the direct children of the directory resource at
// uri (resources/directory/read), walking the pages; subdirectories have
// MIME type [DirectoryMIMEType]. The server's answer is a live view: for a
// loaded skill, [Skill.ReadDir] sets it against the held entry.
//
// Errors: a KindUnsupported [*client.Error] (nothing sent) unless the
// server declared directoryRead; a server's -32602 for a URI that is not
// a directory; KindProtocol as for [Host.List].
func (h *Host) ReadDirectory(ctx context.Context, uri string) ([]protocol.Resource, error) {
	if s, _ := h.Declared(); !s.DirectoryRead {
		return nil, notDeclared(MethodDirectoryRead, ExtensionID+" directoryRead")
	}
	var out []protocol.Resource
	var cursor string
	seen := map[string]bool{}
	for pages := 0; pages < maxPages; pages++ {
		params := map[string]string{"uri": uri}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Resources  *[]protocol.Resource `json:"resources"`
			NextCursor string               `json:"nextCursor"`
		}
		if err := h.c.Call(ctx, MethodDirectoryRead, params, &page); err != nil {
			return nil, err
		}
		if page.Resources == nil {
			return nil, protocolError(MethodDirectoryRead, "the result has no resources array")
		}
		out = append(out, *page.Resources...)
		if page.NextCursor == "" {
			return out, nil
		}
		if seen[page.NextCursor] {
			return nil, protocolError(MethodDirectoryRead, "server repeated the pagination cursor %q after %d pages", page.NextCursor, pages+1)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, protocolError(MethodDirectoryRead, "the server sent more than %d pages", maxPages)
}
