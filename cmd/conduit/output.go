package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/conduitmcp/conduit/protocol"
)

// writeJSON prints v as indented JSON and a newline. HTML characters are
// not escaped, so URLs stay readable; what a terminal would act on is
// (appendJSONSafe).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(appendJSONSafe(nil, buf.Bytes()))
	return err
}

// writeJSONLine prints v as one line of JSON (for streams of events).
func writeJSONLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(appendJSONSafe(nil, buf.Bytes()))
	return err
}

// indentJSON re-indents raw JSON for display; invalid JSON is returned as
// it is.
func indentJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// table writes aligned columns.
type table struct {
	tw     *tabwriter.Writer
	prefix string // written before every row
}

// newTable starts a table; a header row is written when header is given.
func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = cell(c)
	}
	fmt.Fprintln(t.tw, t.prefix+strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// cell makes s fit one table cell: its first line, tabs as spaces, "-"
// for empty, what a terminal would act on escaped (term.go) before the
// columns are measured.
func cell(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = termSafe(strings.ReplaceAll(strings.TrimSpace(s), "\t", " "))
	if s == "" {
		return "-"
	}
	return s
}

// humanSize formats a byte count.
func humanSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// base64Size returns the decoded size of base64 data (or its length when
// it does not decode).
func base64Size(data string) int {
	if b, err := base64.StdEncoding.DecodeString(data); err == nil {
		return len(b)
	}
	return len(data)
}

// writeContent prints content blocks readably: text as it is, images and
// audio as their type and size, resource links and embedded resources
// with their URI.
func writeContent(w io.Writer, blocks []protocol.Content) {
	for _, b := range blocks {
		switch b.Type {
		case protocol.ContentText:
			fmt.Fprintln(w, b.Text)
		case protocol.ContentImage, protocol.ContentAudio:
			fmt.Fprintf(w, "[%s %s, %s]\n", b.Type, orDash(b.MIMEType), humanSize(base64Size(b.Data)))
		case protocol.ContentResourceLink:
			fmt.Fprintf(w, "[resource link %s%s]\n", b.URI, describeParts(b.Name, b.MIMEType, b.Description))
		case protocol.ContentResource:
			if b.Resource == nil {
				fmt.Fprintln(w, "[resource (empty)]")
				continue
			}
			writeResourceContents(w, []protocol.ResourceContents{*b.Resource}, true)
		default:
			raw, _ := json.Marshal(b)
			fmt.Fprintf(w, "[%s block] %s\n", b.Type, raw)
		}
	}
}

// writeResourceContents prints resource contents: a header line per item
// when header is set (or there are several), then text as it is or a blob
// as its size.
func writeResourceContents(w io.Writer, contents []protocol.ResourceContents, header bool) {
	header = header || len(contents) > 1
	for _, rc := range contents {
		if header {
			fmt.Fprintf(w, "[resource %s%s]\n", rc.URI, describeParts("", rc.MIMEType, ""))
		}
		switch {
		case rc.Blob != "":
			fmt.Fprintf(w, "[blob %s, %s]\n", orDash(rc.MIMEType), humanSize(base64Size(rc.Blob)))
		default:
			fmt.Fprint(w, rc.Text)
			if !strings.HasSuffix(rc.Text, "\n") {
				fmt.Fprintln(w)
			}
		}
	}
}

// describeParts formats optional details as ", a, b" (or "").
func describeParts(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p = cell(p); p != "-" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return " (" + strings.Join(kept, ", ") + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
