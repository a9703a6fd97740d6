package protocol

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
	ContentToolUse      = "tool_use"
	ContentToolResult   = "tool_result"
)

// Annotations are optional hints on content and resources. All versions;
// LastModified is 2025-06-18 and later.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Content is one content block. Type selects which fields are meaningful:
//
//   - "text": Text
//   - "image", "audio": Data (base64) and MIMEType
//   - "resource_link": URI, Name, Title, Description, MIMEType, Size, Icons
//   - "resource": Resource (embedded contents)
//   - "tool_use" (sampling): ID, Name, Input
//   - "tool_result" (sampling): ToolUseID, Content, StructuredContent, IsError
//
// text, image and resource exist in all versions, audio from 2025-03-26,
// resource_link from 2025-06-18, tool_use and tool_result (sampling
// messages only) from 2025-11-25. [Content.MarshalJSON] always writes the
// members a block's type requires.
//
// It is one flat struct rather than an interface so blocks decode in one
// pass and unknown block types still round-trip their common fields.
type Content struct {
	Type string `json:"type"`

	Text string `json:"text,omitempty"`

	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`

	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`

	Resource *ResourceContents `json:"resource,omitempty"`

	ID    string          `json:"id,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	ToolUseID         string          `json:"toolUseId,omitempty"`
	Content           []Content       `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: ContentText, Text: s} }

// ResourceContents is the contents of a resource: Text or Blob (base64).
// All versions.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// ImageContent returns an image block; data is base64-encoded.
func ImageContent(data, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MIMEType: mimeType}
}

// AudioContent returns an audio block (2025-03-26 and later); data is
// base64-encoded.
func AudioContent(data, mimeType string) Content {
	return Content{Type: ContentAudio, Data: data, MIMEType: mimeType}
}

// ResourceLinkContent returns a resource_link block (2025-06-18 and later)
// pointing at r.
func ResourceLinkContent(r Resource) Content {
	return Content{
		Type:        ContentResourceLink,
		URI:         r.URI,
		Name:        r.Name,
		Title:       r.Title,
		Description: r.Description,
		MIMEType:    r.MIMEType,
		Size:        r.Size,
		Icons:       r.Icons,
		Annotations: r.Annotations,
		Meta:        r.Meta,
	}
}

// EmbeddedResourceContent returns a resource block embedding rc.
func EmbeddedResourceContent(rc ResourceContents) Content {
	return Content{Type: ContentResource, Resource: &rc}
}

// ToolUseContent returns a tool_use block (sampling, 2025-11-25 and
// later); input is the raw arguments object.
func ToolUseContent(id, name string, input json.RawMessage) Content {
	return Content{Type: ContentToolUse, ID: id, Name: name, Input: input}
}

// ToolResultContent returns a tool_result block (sampling, 2025-11-25 and
// later) answering the tool_use with id toolUseID.
func ToolResultContent(toolUseID string, content ...Content) Content {
	return Content{Type: ContentToolResult, ToolUseID: toolUseID, Content: content}
}

// MarshalJSON encodes c. Members are omitted when empty, except those the
// block's type requires (text's "text", image's "data" and "mimeType",
// tool_use's "input", tool_result's "content", …), which are always
// written so an empty value still makes a valid block.
//
// The cost is linear in the size of the encoding, however deeply
// tool_result blocks nest.
func (c Content) MarshalJSON() ([]byte, error) {
	return c.appendJSON(nil)
}

// placeholderContent stands in for a block's nested blocks while the
// block's own members are encoded: it keeps the "content" member in its
// place, and appendJSON puts the nested blocks there.
var placeholderContent = []Content{{}}

// appendJSON appends the encoding of c to b. Nested blocks (a
// tool_result's content) are appended by this same recursion, not by
// json.Marshal: encoding/json scans and copies again what a MarshalJSON
// method returns, so a nested block encoded by its parent's json.Marshal
// would be scanned and copied once per level above it, which for a
// server's deeply nested block costs its depth times its size.
func (c Content) appendJSON(b []byte) ([]byte, error) {
	type plain Content
	nested := c.Content
	if len(nested) > 0 {
		c.Content = placeholderContent
	}
	own, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	// own is a JSON object that always has "type", so it is never "{}":
	// the required members go first, each followed by a comma.
	b = append(b, '{')
	b = c.appendRequired(b)
	if len(nested) == 0 {
		return append(b, own[1:]...), nil
	}
	// The placeholder's member, found by key at the top level (a raw
	// member such as input may hold the same text further in).
	at, found, err := jsonscan.Member(own, "content")
	if err != nil || !found {
		return nil, fmt.Errorf("protocol: encoding %s block: content member not found", c.Type)
	}
	b = append(b, own[1:at.Start]...)
	b = append(b, '[')
	for i, n := range nested {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = n.appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	return append(b, own[at.End:]...), nil
}

// appendRequired appends the members c's type requires that encoding c
// omits because they are empty, each followed by a comma.
func (c *Content) appendRequired(b []byte) []byte {
	addStr := func(key, val string) {
		if val == "" {
			b = append(b, '"')
			b = append(b, key...)
			b = append(b, `":"",`...)
		}
	}
	switch c.Type {
	case ContentText:
		addStr("text", c.Text)
	case ContentImage, ContentAudio:
		addStr("data", c.Data)
		addStr("mimeType", c.MIMEType)
	case ContentResourceLink:
		addStr("uri", c.URI)
		addStr("name", c.Name)
	case ContentToolUse:
		addStr("id", c.ID)
		addStr("name", c.Name)
		if len(c.Input) == 0 {
			b = append(b, `"input":{},`...)
		}
	case ContentToolResult:
		addStr("toolUseId", c.ToolUseID)
		if len(c.Content) == 0 {
			b = append(b, `"content":[],`...)
		}
	}
	return b
}

// MarshalJSON encodes rc, writing "text": "" for a text resource whose
// text is empty (a resource with neither Text nor Blob is a text
// resource).
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	type plain ResourceContents
	if rc.Text == "" && rc.Blob == "" {
		type withText struct {
			plain
			Text string `json:"text"`
		}
		return json.Marshal(withText{plain: plain(rc)})
	}
	return json.Marshal(plain(rc))
}

// IsBlob reports whether rc carries binary contents (blob).
func (rc ResourceContents) IsBlob() bool { return rc.Blob != "" }

// joinText joins the text of the text blocks in cs with newlines. A
// single text block (the common case) is returned without a copy; more
// are joined with one allocation.
func joinText(cs []Content) string {
	n, size, only := 0, 0, ""
	for i := range cs {
		if cs[i].Type == ContentText {
			n++
			size += len(cs[i].Text)
			only = cs[i].Text
		}
	}
	if n <= 1 {
		return only
	}
	var b strings.Builder
	b.Grow(size + n - 1)
	first := true
	for i := range cs {
		if cs[i].Type != ContentText {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(cs[i].Text)
	}
	return b.String()
}

// Text returns the text of the text blocks in cs, joined by newlines.
func Text(cs []Content) string { return joinText(cs) }
