package protocol

import "encoding/json"

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

// Annotations are optional hints on content and resources.
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
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}
