package toolset

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/protocol"
)

// Part kinds of a [Result].
const (
	PartText  = "text"
	PartImage = "image"
)

// Part is one piece of a tool result as models take it.
type Part struct {
	// Type is [PartText] or [PartImage].
	Type string
	// Text is the text of a text part.
	Text string
	// MIMEType and Data (base64) are an image part's; the MIME type is
	// one every provider takes: image/png, image/jpeg, image/gif or
	// image/webp.
	MIMEType string
	Data     string
}

// Result is a tool call's outcome made ready for a model: what the tool
// answered, or why it could not run.
type Result struct {
	// Name is the name the model called.
	Name string
	// IsError reports a failure the model should see as such: the tool
	// reported an error (isError), or the call could not be made.
	IsError bool
	// Parts is the content, in order: text blocks as they are; images in
	// a MIME type providers take, within the image bound and with valid
	// base64 data, as images; everything else (audio, resource links,
	// embedded resources, other images) described in text. Text past the text bound is cut and the
	// last part says how much was left out. When the tool answered only
	// structured content, it is the text.
	Parts []Part
	// Structured is the tool's structuredContent, nil when it had none or
	// when it is longer than the text bound.
	Structured json.RawMessage
	// Truncated reports that something was cut or left out for the
	// bounds of [Options].
	Truncated bool
	// Raw is the tool's result as the server sent it; nil when the tool
	// did not run.
	Raw *protocol.CallToolResult
}

// Text returns the text parts joined by newlines, each image as a short
// note: the result for APIs that take only text.
func (r *Result) Text() string {
	var b strings.Builder
	for i, p := range r.Parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.Type == PartImage {
			fmt.Fprintf(&b, "[image %s, %d bytes]", p.MIMEType, decodedSize(p.Data))
			continue
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// HasImages reports whether r has an image part.
func (r *Result) HasImages() bool {
	return slices.ContainsFunc(r.Parts, func(p Part) bool { return p.Type == PartImage })
}

// Call runs a model's tool call: name as the model wrote it, args the
// arguments text as the model wrote it (JSON; empty means no arguments).
//
// It always returns a Result to give back to the model. The error is nil
// when the tool ran, even if the tool reported a failure (then
// Result.IsError is true). Otherwise it is a [*CallError]: the name is
// unknown ([ErrUnknownTool]), the arguments are not a JSON object, for
// example cut short when the model ran out of tokens
// ([ErrInvalidArguments]; the tool is not run), or the call failed
// (ctx's error, the client's errors); the Result then says so to the
// model, with IsError true, so that a loop may go on and let the model
// correct itself.
//
// Before the call, properties the model set to null although the tool's
// schema makes them optional and does not admit null are removed (the
// strict dialects make optional properties nullable).
func (s *Set) Call(ctx context.Context, name, args string) (*Result, error) {
	i, ok := s.index[name]
	if !ok {
		names := make([]string, 0, min(len(s.tools), 20))
		for _, t := range s.tools[:min(len(s.tools), 20)] {
			names = append(names, t.Name)
		}
		msg := fmt.Sprintf("There is no tool %q. The tools are: %s.", truncateUTF8(name, 100), strings.Join(names, ", "))
		return errorResult(name, msg), &CallError{Name: name, Err: ErrUnknownTool}
	}
	raw, err := s.args[i].fix(args)
	if err != nil {
		msg := fmt.Sprintf("The arguments of %s were not run: %v. Call it again with the arguments as one complete JSON object.", name, err)
		return errorResult(name, msg), &CallError{Name: name, Err: err}
	}
	res, err := s.src.CallTool(ctx, s.listed[i], raw)
	if err != nil {
		return errorResult(name, "The tool call failed: "+err.Error()), &CallError{Name: name, Err: err}
	}
	return s.result(name, res), nil
}

func errorResult(name, msg string) *Result {
	return &Result{Name: name, IsError: true, Parts: []Part{{Type: PartText, Text: msg}}}
}

// Result turns a tool's answer into a [Result] under s's bounds; for
// callers that ran the tool themselves. The zero Set's bounds are the
// defaults.
func (s *Set) Result(name string, res *protocol.CallToolResult) *Result { return s.result(name, res) }

func (s *Set) result(name string, res *protocol.CallToolResult) *Result {
	b := &resultBuilder{
		text:  bound(s.opts.MaxTextBytes, DefaultMaxTextBytes),
		image: bound(s.opts.MaxImageBytes, DefaultMaxImageBytes),
	}
	b.limit, b.notes = b.text, max(b.text, minNoteBytes)
	for _, c := range res.Content {
		b.block(c)
	}
	st := strings.TrimSpace(string(res.StructuredContent))
	if st == "null" {
		st = ""
	}
	if !slices.ContainsFunc(b.parts, func(p Part) bool { return p.Type == PartText }) && st != "" {
		b.addText(st)
	}
	out := &Result{Name: name, IsError: res.Failed(), Raw: res}
	if st != "" {
		if len(st) <= b.limit {
			out.Structured = json.RawMessage(st)
		} else {
			b.truncated = true
		}
	}
	if b.omitted > 0 {
		b.parts = append(b.parts, Part{Type: PartText, Text: fmt.Sprintf("[output truncated: %d more bytes left out, the limit is %d bytes]", b.omitted, b.limit)})
	}
	if b.notesOmitted > 0 {
		b.parts = append(b.parts, Part{Type: PartText, Text: fmt.Sprintf("[%d more blocks not passed to the model and not described: past the limit]", b.notesOmitted)})
	}
	out.Parts, out.Truncated = b.parts, b.truncated || b.omitted > 0 || b.notesOmitted > 0
	return out
}

func bound(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return int(^uint(0) >> 1)
	}
	return v
}

type resultBuilder struct {
	parts              []Part
	text, image, notes int // budgets left
	limit              int
	omitted            int // bytes of text left out
	notesOmitted       int // notes left out
	truncated          bool
}

func (b *resultBuilder) addText(s string) {
	if s == "" {
		return
	}
	if len(s) > b.text {
		cut := truncateUTF8(s, b.text)
		b.omitted += len(s) - len(cut)
		s = cut
	}
	b.text -= len(s)
	if s != "" {
		b.parts = append(b.parts, Part{Type: PartText, Text: s})
	}
}

// addNote adds a note about a block left out. Notes are not counted
// against the text bound but against one of their own, as large (and
// at least minNoteBytes): the strings of the server they quote are cut
// ([resultBuilder.short]), yet a result may hold any number of blocks. A
// note past that bound is left out.
func (b *resultBuilder) addNote(s string) {
	if len(s) > b.notes {
		b.notesOmitted++
		return
	}
	b.notes -= len(s)
	b.parts = append(b.parts, Part{Type: PartText, Text: s})
}

const (
	minNoteBytes = 4 << 10 // the least bound of the notes
	maxNoteField = 200     // bounds each string of the server a note quotes
)

// short returns s, a string of the server for a note, cut to
// maxNoteField bytes and ending with "…" when cut.
func (b *resultBuilder) short(s string) string {
	if len(s) <= maxNoteField {
		return s
	}
	b.truncated = true
	return truncateUTF8(s, maxNoteField) + "…"
}

// decodedSize is the number of bytes the standard base64 in data decodes
// to, without decoding it: the line breaks the decoder skips and the
// padding are not counted. For data that is not valid base64 it is an
// estimate.
func decodedSize(data string) int {
	n := len(data) - strings.Count(data, "\n") - strings.Count(data, "\r")
	pad := 0
	for i := len(data) - 1; i >= 0 && pad < 2; i-- {
		if c := data[i]; c == '=' {
			pad++
		} else if c != '\n' && c != '\r' {
			break
		}
	}
	return max(base64.StdEncoding.DecodedLen(n)-pad, 0)
}

var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

func (b *resultBuilder) addImage(data, mime, what string) {
	n := decodedSize(data)
	if !slices.Contains(imageTypes, mime) {
		b.addNote(fmt.Sprintf("[%s: %s, %d bytes, a type the model does not take]", what, b.short(mime), n))
		return
	}
	if n > b.image {
		b.truncated = true
		b.addNote(fmt.Sprintf("[%s: %s, %d bytes, left out: past the limit of the result's images]", what, b.short(mime), n))
		return
	}
	// Checked here, within the bound: an API refuses a request with an
	// image that is not base64, and so every request of the conversation
	// after it.
	if _, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(data))); err != nil {
		b.addNote(fmt.Sprintf("[%s: %s, data that is not valid base64, left out]", what, mime))
		return
	}
	b.image -= n
	b.parts = append(b.parts, Part{Type: PartImage, MIMEType: mime, Data: data})
}

func (b *resultBuilder) block(c protocol.Content) {
	switch c.Type {
	case protocol.ContentText:
		b.addText(c.Text)
	case protocol.ContentImage:
		b.addImage(c.Data, c.MIMEType, "image")
	case protocol.ContentAudio:
		b.addNote(fmt.Sprintf("[audio: %s, %d bytes, not passed to the model]", b.short(c.MIMEType), decodedSize(c.Data)))
	case protocol.ContentResourceLink:
		b.addNote(b.resourceLink(c))
	case protocol.ContentResource:
		b.embedded(c.Resource)
	default:
		b.addNote(fmt.Sprintf("[a %q block, not passed to the model]", b.short(c.Type)))
	}
}

func (b *resultBuilder) resourceLink(c protocol.Content) string {
	var sb strings.Builder
	sb.WriteString("[resource link: ")
	sb.WriteString(b.short(c.URI))
	for _, s := range []string{c.Name, c.Title, c.MIMEType, c.Description} {
		if s != "" {
			sb.WriteString(" | " + b.short(s))
		}
	}
	sb.WriteString("]")
	return sb.String()
}

func (b *resultBuilder) embedded(rc *protocol.ResourceContents) {
	switch {
	case rc == nil:
	case rc.Blob == "":
		b.addText("[resource " + rc.URI + "]\n" + rc.Text)
	case strings.HasPrefix(rc.MIMEType, "image/"):
		b.addImage(rc.Blob, rc.MIMEType, "resource "+b.short(rc.URI))
	default:
		b.addNote(fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not passed to the model]", b.short(rc.URI), b.short(rc.MIMEType), decodedSize(rc.Blob)))
	}
}

// truncateUTF8 cuts s to at most n bytes, at a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
