//go:build windows

package transport

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// errBatchArg reports an argument that cannot be passed to a batch file
// safely: cmd.exe ends a command line at a line break, and NUL ends it.
var errBatchArg = errors.New("an argument of a .cmd or .bat file contains a line break or NUL")

// batchCommandLine makes a batch file (npx.cmd and the other npm, pnpm
// and yarn shims) run through cmd.exe with a command line quoted for it.
// exec.Command already resolved the name with PATHEXT; os/exec quotes
// arguments for programs that parse them like the C runtime, which
// cmd.exe does not: an argument such as "a&calc" would run calc.
func batchCommandLine(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return nil
	}
	switch strings.ToLower(filepath.Ext(cmd.Path)) {
	case ".cmd", ".bat":
	default:
		return nil
	}
	comspec := comspecPath()
	line, err := batchLine(comspec, cmd.Path, cmd.Args[1:])
	if err != nil {
		return err
	}
	cmd.Path = comspec
	cmd.SysProcAttr.CmdLine = line
	return nil
}

// comspecPath returns cmd.exe: COMSPEC when it is an absolute path, else
// the one in the system directory.
func comspecPath() string {
	if c := os.Getenv("COMSPEC"); filepath.IsAbs(c) {
		return c
	}
	dir, err := windows.GetSystemDirectory()
	if err != nil {
		return `C:\Windows\System32\cmd.exe`
	}
	return filepath.Join(dir, "cmd.exe")
}

// batchLine returns the command line that runs script with args through
// comspec: /d (no AutoRun), /v:off (no delayed expansion, so "!" is
// literal), /s /c "…" (the outer quotes are removed and the rest run).
// Every word is quoted (see quoteBatchArg), so cmd.exe's operators
// (& | < > ^ ( )) inside them are literal.
func batchLine(comspec, script string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString(`"` + comspec + `" /d /e:on /v:off /s /c "`)
	for i, a := range append([]string{script}, args...) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if err := quoteBatchArg(&b, a); err != nil {
			return "", err
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// quoteBatchArg writes a quoted for both readers of a batch file's
// arguments: cmd.exe, which must see every character inside quotes, and
// the program the batch file passes %* to, which splits its command line
// like the C runtime. A quote is doubled ("" inside quotes: cmd.exe sees
// the quoting go off and on again around nothing, the C runtime reads one
// literal quote); backslashes before a quote, or before the closing quote,
// are doubled (the C runtime's rule); "%" becomes "%%cd:~,%", which
// cmd.exe expands to "%" without reading a variable name after it.
func quoteBatchArg(b *strings.Builder, a string) error {
	if strings.ContainsAny(a, "\x00\r\n") {
		return errBatchArg
	}
	b.WriteByte('"')
	slashes := 0
	for _, r := range a {
		switch r {
		case '\\':
			slashes++
			b.WriteByte('\\')
			continue
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes))
			b.WriteString(`""`)
		case '%':
			b.WriteString(`%%cd:~,%`)
		default:
			b.WriteRune(r)
		}
		slashes = 0
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	b.WriteByte('"')
	return nil
}
