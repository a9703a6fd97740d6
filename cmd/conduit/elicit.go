package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// maxFormAttempts bounds how often a form is asked again after its answer
// failed validation.
const maxFormAttempts = 3

// lineReader reads lines from stdin on one goroutine, so that a prompt
// waiting for input still ends when its context does (Ctrl-C). The
// goroutine starts at the first prompt; it ends at EOF or stays blocked in
// Read until the process exits (stdin cannot be interrupted portably).
type lineReader struct {
	r     io.Reader
	once  sync.Once
	lines chan string // unbuffered; the goroutine sends each line, closed at the end
	err   error       // why input ended; written before lines is closed
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, lines: make(chan string)}
}

// readLine returns the next line without its line ending, io.EOF when
// input ended, or ctx.Err().
func (l *lineReader) readLine(ctx context.Context) (string, error) {
	l.once.Do(func() {
		go func() {
			defer close(l.lines)
			br := bufio.NewReader(l.r)
			for {
				s, err := br.ReadString('\n')
				if s != "" || err == nil {
					l.lines <- strings.TrimRight(s, "\r\n")
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						err = fmt.Errorf("reading stdin: %w", err)
					}
					l.err = err // published by close(l.lines)
					return
				}
			}
		}()
	})
	select {
	case line, ok := <-l.lines:
		if !ok {
			return "", l.err
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// prompter answers elicitation requests in the terminal: form fields are
// asked one by one on stderr and read from stdin; URL requests show the
// URL and wait for Enter. It implements [handler.Elicitor] and
// [handler.URLElicitor]. One prompt runs at a time.
type prompter struct {
	mu       sync.Mutex // serializes prompts of concurrent calls
	in       *lineReader
	out      io.Writer     // stderr
	progress *progressView // cleared before prompting; may be nil
	echo     bool          // stdin is not a terminal: echo answers so the transcript reads well
}

// read reads one answer, echoing it when input is not a terminal.
func (pr *prompter) read(ctx context.Context) (string, error) {
	line, err := pr.in.readLine(ctx)
	if err == nil && pr.echo {
		fmt.Fprintln(pr.out, line)
	}
	return line, err
}

var (
	_ handler.Elicitor    = (*prompter)(nil)
	_ handler.URLElicitor = (*prompter)(nil)
)

// errAnswer ends a form early with an action other than accept.
type errAnswer struct{ action string }

func (e *errAnswer) Error() string { return e.action }

// Elicit asks the user to fill the form of p.
func (pr *prompter) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.progress != nil {
		pr.progress.clear()
	}
	schema, err := protocol.ParseRequestedSchema(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(pr.out, "\nThe server asked for input with a form conduit cannot read (%v); declining.\n", err)
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	}
	fmt.Fprintf(pr.out, "\nThe server asks: %s\n", oneLine(p.Message))
	fmt.Fprintln(pr.out, "(Enter a value per field; an empty answer keeps the default or skips an optional field; :decline or :cancel to refuse.)")
	for attempt := 1; ; attempt++ {
		content, err := pr.fill(ctx, schema)
		var ea *errAnswer
		switch {
		case errors.As(err, &ea):
			return &protocol.ElicitResult{Action: ea.action}, nil
		case errors.Is(err, io.EOF):
			fmt.Fprintln(pr.out, "(no more input: cancelling)")
			return &protocol.ElicitResult{Action: protocol.ElicitCancel}, nil
		case err != nil:
			return nil, err
		}
		norm, verr := handler.ValidateElicitation(p.RequestedSchema, content)
		if verr == nil {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: norm}, nil
		}
		fmt.Fprintf(pr.out, "  That answer does not fit the form: %v\n", verr)
		if attempt == maxFormAttempts {
			fmt.Fprintln(pr.out, "(too many attempts: cancelling)")
			return &protocol.ElicitResult{Action: protocol.ElicitCancel}, nil
		}
		fmt.Fprintln(pr.out, "  Once more:")
	}
}

// fill asks every field once (again while a value does not parse).
func (pr *prompter) fill(ctx context.Context, schema *protocol.RequestedSchema) (map[string]any, error) {
	content := map[string]any{}
	for _, prop := range schema.Properties {
		f := describeField(prop, schema.IsRequired(prop.Name))
		for {
			fmt.Fprint(pr.out, "  "+f.prompt()+": ")
			line, err := pr.read(ctx)
			if err != nil {
				fmt.Fprintln(pr.out)
				return nil, err
			}
			line = strings.TrimSpace(line)
			switch line {
			case ":decline":
				return nil, &errAnswer{protocol.ElicitDecline}
			case ":cancel":
				return nil, &errAnswer{protocol.ElicitCancel}
			case "":
				if f.hasDefault {
					content[prop.Name] = f.def
				} else if f.required {
					fmt.Fprintln(pr.out, "    a value is required")
					continue
				}
			default:
				v, err := f.parse(line)
				if err != nil {
					fmt.Fprintln(pr.out, "    "+err.Error())
					continue
				}
				content[prop.Name] = v
			}
			break
		}
	}
	return content, nil
}

// choice is one option of an enum field.
type choice struct{ value, title string }

// field is a form field as the prompt presents it.
type field struct {
	name, title, desc string
	kind              string // "string", "number", "integer", "boolean", "enum", "multi"
	format            string
	required          bool
	hasDefault        bool
	def               any
	choices           []choice
}

func describeField(p protocol.SchemaProperty, required bool) field {
	f := field{name: p.Name, required: required}
	strDef := func(d *string) {
		if d != nil {
			f.hasDefault, f.def = true, *d
		}
	}
	switch s := p.Schema.(type) {
	case *protocol.StringSchema:
		f.kind, f.title, f.desc, f.format = "string", s.Title, s.Description, s.Format
		strDef(s.Default)
	case *protocol.NumberSchema:
		f.kind, f.title, f.desc = s.Type, s.Title, s.Description
		if s.Default != nil {
			f.hasDefault, f.def = true, *s.Default
		}
	case *protocol.BooleanSchema:
		f.kind, f.title, f.desc = "boolean", s.Title, s.Description
		if s.Default != nil {
			f.hasDefault, f.def = true, *s.Default
		}
	case *protocol.UntitledSingleSelectEnumSchema:
		f.kind, f.title, f.desc = "enum", s.Title, s.Description
		for _, v := range s.Enum {
			f.choices = append(f.choices, choice{value: v})
		}
		strDef(s.Default)
	case *protocol.TitledSingleSelectEnumSchema:
		f.kind, f.title, f.desc = "enum", s.Title, s.Description
		for _, o := range s.OneOf {
			f.choices = append(f.choices, choice{value: o.Const, title: o.Title})
		}
		strDef(s.Default)
	case *protocol.LegacyTitledEnumSchema:
		f.kind, f.title, f.desc = "enum", s.Title, s.Description
		for i, v := range s.Enum {
			c := choice{value: v}
			if i < len(s.EnumNames) {
				c.title = s.EnumNames[i]
			}
			f.choices = append(f.choices, c)
		}
		strDef(s.Default)
	case *protocol.UntitledMultiSelectEnumSchema:
		f.kind, f.title, f.desc = "multi", s.Title, s.Description
		for _, v := range s.Items.Enum {
			f.choices = append(f.choices, choice{value: v})
		}
		if s.Default != nil {
			f.hasDefault, f.def = true, stringsToAny(s.Default)
		}
	case *protocol.TitledMultiSelectEnumSchema:
		f.kind, f.title, f.desc = "multi", s.Title, s.Description
		for _, o := range s.Items.AnyOf {
			f.choices = append(f.choices, choice{value: o.Const, title: o.Title})
		}
		if s.Default != nil {
			f.hasDefault, f.def = true, stringsToAny(s.Default)
		}
	}
	return f
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// prompt is the question line of a field, e.g.
// "name (string, required) — Your name" or
// "color (one of: 1) red, 2) green) [default red]".
func (f field) prompt() string {
	var b strings.Builder
	b.WriteString(f.name)
	kind := f.kind
	switch f.kind {
	case "enum":
		kind = "one of " + f.choiceList()
	case "multi":
		kind = "any of " + f.choiceList() + ", comma-separated"
	case "boolean":
		kind = "yes/no"
	case "string":
		if f.format != "" {
			kind = "string, " + f.format
		}
	}
	if f.required {
		kind += ", required"
	}
	b.WriteString(" (" + kind + ")")
	if label := strings.TrimSpace(f.title + " " + dashIfBoth(f.title, f.desc) + f.desc); label != "" {
		b.WriteString(" — " + oneLine(label))
	}
	if f.hasDefault {
		b.WriteString(" [default " + formatDefault(f.def) + "]")
	}
	return b.String()
}

func dashIfBoth(a, b string) string {
	if a != "" && b != "" {
		return "- "
	}
	return ""
}

func (f field) choiceList() string {
	parts := make([]string, len(f.choices))
	for i, c := range f.choices {
		parts[i] = fmt.Sprintf("%d) %s", i+1, c.value)
		if c.title != "" && c.title != c.value {
			parts[i] += " (" + c.title + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func formatDefault(v any) string {
	switch d := v.(type) {
	case []any:
		parts := make([]string, len(d))
		for i, x := range d {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ",")
	case float64:
		return formatNumber(d)
	case bool:
		if d {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v)
}

// parse converts an answer to the field's JSON value.
func (f field) parse(s string) (any, error) {
	switch f.kind {
	case "number":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return v, nil
	case "integer":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return float64(v), nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1", "on":
			return true, nil
		case "n", "no", "false", "0", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not yes or no", s)
	case "enum":
		return f.pick(s)
	case "multi":
		var out []any
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			v, err := f.pick(part)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return s, nil
}

// pick resolves a choice given by number, value or title.
func (f field) pick(s string) (any, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.choices) {
		return f.choices[n-1].value, nil
	}
	for _, c := range f.choices {
		if s == c.value || c.title != "" && strings.EqualFold(s, c.title) {
			return c.value, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of the choices", s)
}

// ElicitURL shows the URL the server wants the user to visit and waits
// for Enter (accept) or :decline / :cancel.
func (pr *prompter) ElicitURL(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.progress != nil {
		pr.progress.clear()
	}
	fmt.Fprintf(pr.out, "\nThe server asks you to open a URL: %s\n", oneLine(p.Message))
	fmt.Fprintf(pr.out, "  %s\n", p.URL)
	if p.ElicitationID != "" {
		fmt.Fprintf(pr.out, "  (elicitation %s)\n", p.ElicitationID)
	}
	fmt.Fprint(pr.out, "Press Enter when done (:decline or :cancel to refuse): ")
	line, err := pr.read(ctx)
	switch {
	case errors.Is(err, io.EOF):
		fmt.Fprintln(pr.out, "\n(no more input: cancelling)")
		return &protocol.ElicitResult{Action: protocol.ElicitCancel}, nil
	case err != nil:
		return nil, err
	}
	switch strings.TrimSpace(line) {
	case ":decline":
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	case ":cancel":
		return &protocol.ElicitResult{Action: protocol.ElicitCancel}, nil
	}
	return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
}
