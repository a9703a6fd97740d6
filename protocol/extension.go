package protocol

import (
	"fmt"
	"strings"
)

// CheckExtensionID reports whether id is a well-formed extension
// identifier for capabilities.extensions: a mandatory prefix of
// dot-separated labels (each starting with a letter, ending with a letter
// or digit, with letters, digits and hyphens inside) and a slash, then a
// name (empty, or starting and ending with a letter or digit, with
// letters, digits, '-', '_' and '.' inside). Prefixes whose second label
// is modelcontextprotocol or mcp (io.modelcontextprotocol/) belong to the
// official extensions.
func CheckExtensionID(id string) error {
	prefix, name, ok := strings.Cut(id, "/")
	if !ok || prefix == "" {
		return fmt.Errorf("protocol: extension identifier %q has no prefix (want for example \"com.example/%s\")", id, id)
	}
	for label := range strings.SplitSeq(prefix, ".") {
		if !validLabel(label) {
			return fmt.Errorf("protocol: extension identifier %q: invalid prefix label %q", id, label)
		}
	}
	if !validName(name) {
		return fmt.Errorf("protocol: extension identifier %q: invalid name %q", id, name)
	}
	return nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || '0' <= c && c <= '9' }

func validLabel(l string) bool {
	if l == "" || !isLetter(l[0]) || !isAlnum(l[len(l)-1]) {
		return false
	}
	for i := 1; i < len(l)-1; i++ {
		if !isAlnum(l[i]) && l[i] != '-' {
			return false
		}
	}
	return true
}

func validName(n string) bool {
	if n == "" {
		return true
	}
	if !isAlnum(n[0]) || !isAlnum(n[len(n)-1]) {
		return false
	}
	for i := 1; i < len(n)-1; i++ {
		if c := n[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}
