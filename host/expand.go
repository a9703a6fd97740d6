package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxExpandDepth is how deeply ${VAR:-default} references may nest in
// defaults. Each level scans the rest of the value again, so the bound
// keeps expansion linear in the size of the file.
const maxExpandDepth = 32

// expander resolves the ${…} references of one file.
type expander struct {
	file      string // the file's path, for errors
	dir       string // the file's directory (relative paths), or ""
	workspace string // ${workspaceFolder}
	opts      *LoadOptions
	inputs    map[string]Input  // declared inputs by id
	resolved  map[string]string // inputs already asked for
}

func newExpander(path string, opts *LoadOptions, inputs []rawInput) *expander {
	ex := &expander{file: path, opts: opts, inputs: map[string]Input{}, resolved: map[string]string{}}
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			ex.dir = filepath.Dir(abs)
		}
	}
	ex.workspace = opts.WorkspaceFolder
	if ex.workspace == "" && ex.dir != "" {
		ex.workspace = ex.dir
		if b := filepath.Base(ex.dir); b == ".vscode" || b == ".cursor" {
			ex.workspace = filepath.Dir(ex.dir)
		}
	}
	for _, in := range inputs {
		ex.inputs[in.ID] = Input(in)
	}
	return ex
}

// expand replaces the references in s:
//
//   - ${VAR} and ${env:VAR}: the environment variable VAR; unset is an
//     error ([ErrUnsetVariable]);
//   - ${VAR:-default}: VAR if set (and not empty), else default, which
//     may itself hold references;
//   - ${input:ID}: the VS Code input ID, through LoadOptions.Input;
//   - ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome},
//     ${pathSeparator} (or ${/}).
//
// A "$" not followed by "{" is kept as written. Defaults nested more than
// [maxExpandDepth] deep are an error.
func (ex *expander) expand(s string) (string, error) {
	return ex.expandDepth(s, 0)
}

// expandDepth is expand of s inside depth defaults.
func (ex *expander) expandDepth(s string, depth int) (string, error) {
	if ex.opts.NoExpand || !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := matchBrace(s, i+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		v, err := ex.resolve(s[i+2:end], depth)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		s = s[end+1:]
	}
}

// matchBrace returns the index of the "}" closing a reference whose body
// starts at from, allowing nested references in a default; -1 if none.
func matchBrace(s string, from int) int {
	depth := 1
	for j := from; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			depth++
			j++
		case s[j] == '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func (ex *expander) lookupEnv(name string) (string, bool) {
	if ex.opts.LookupEnv != nil {
		return ex.opts.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// resolve resolves the body of one reference, inside depth defaults.
func (ex *expander) resolve(body string, depth int) (string, error) {
	if name, def, ok := strings.Cut(body, ":-"); ok && validVarName(name) {
		if v, set := ex.lookupEnv(name); set && v != "" {
			return v, nil
		}
		if depth >= maxExpandDepth {
			return "", fmt.Errorf("${%s:-…}: defaults nested more than %d deep", name, maxExpandDepth)
		}
		return ex.expandDepth(def, depth+1)
	}
	switch body {
	case "workspaceFolder":
		return ex.workspace, nil
	case "workspaceFolderBasename":
		return filepath.Base(ex.workspace), nil
	case "userHome":
		return os.UserHomeDir()
	case "pathSeparator", "/":
		return string(filepath.Separator), nil
	}
	if id, ok := strings.CutPrefix(body, "input:"); ok {
		return ex.input(id)
	}
	name := body
	if n, ok := strings.CutPrefix(body, "env:"); ok {
		name = n
	}
	if !validVarName(name) {
		return "", fmt.Errorf("unsupported variable ${%s}", body)
	}
	v, ok := ex.lookupEnv(name)
	if !ok {
		return "", fmt.Errorf("${%s}: %w", body, ErrUnsetVariable)
	}
	return v, nil
}

// input resolves ${input:id}, asking LoadOptions.Input once per id.
func (ex *expander) input(id string) (string, error) {
	if v, ok := ex.resolved[id]; ok {
		return v, nil
	}
	in, declared := ex.inputs[id]
	if !declared {
		in = Input{ID: id}
	}
	if ex.opts.Input == nil {
		if declared && in.Default != "" {
			return in.Default, nil
		}
		return "", fmt.Errorf("${input:%s}: %w (no input function given)", id, ErrUnresolvedInput)
	}
	v, err := ex.opts.Input(in)
	if err != nil {
		return "", fmt.Errorf("${input:%s}: %w: %v", id, ErrUnresolvedInput, err)
	}
	ex.resolved[id] = v
	return v, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// readEnvFile reads KEY=VALUE lines ("#" comments, blank lines, an
// optional "export " prefix and surrounding quotes allowed).
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !validVarName(k) {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, errors.New(err.Error())
	}
	return env, nil
}
