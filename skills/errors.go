package skills

import (
	"errors"
	"fmt"
)

// Check names what a [VerifyError] found wrong with a file.
type Check string

// The checks a file read goes through, in order.
const (
	// CheckUnlisted: the file is not in the held entry's file list.
	CheckUnlisted Check = "unlisted"
	// CheckContent: the server's answer carried no content for the file
	// (or a blob that is not base64).
	CheckContent Check = "content"
	// CheckSize: the content's length is not the entry's size.
	CheckSize Check = "size"
	// CheckDigest: the content's SHA-256 digest is not the entry's.
	CheckDigest Check = "digest"
)

// VerifyError reports a skill file whose content does not match the
// skill's entry. Its content is never handed out.
type VerifyError struct {
	// Skill is the URI of the skill's SKILL.md.
	Skill string
	// URI is the file's URI.
	URI string
	// Check is what failed.
	Check Check
	// Want is what the entry lists (a size in bytes or a digest); Got is
	// what the server sent. Both are "" for CheckUnlisted.
	Want, Got string
}

func (e *VerifyError) Error() string {
	switch e.Check {
	case CheckUnlisted:
		return fmt.Sprintf("skills: %s: %s is not a file of the skill's entry", e.Skill, e.URI)
	case CheckContent:
		return fmt.Sprintf("skills: %s: %s: %s", e.Skill, e.URI, e.Got)
	}
	return fmt.Sprintf("skills: %s: %s: %s mismatch: the entry lists %s, the server sent %s", e.Skill, e.URI, e.Check, e.Want, e.Got)
}

// FrontmatterError reports a SKILL.md whose YAML frontmatter is not the
// one its entry carries; the skill is not loaded.
type FrontmatterError struct {
	// Skill is the URI of the skill's SKILL.md.
	Skill string
	// Field is the first differing top-level field, in sorted order; ""
	// when the file has no frontmatter block or it does not parse (Err).
	Field string
	// Entry is the entry's value of Field, File the file's; nil where
	// the field is absent.
	Entry, File any
	// Err is the YAML parse error, or why the block was not parsed
	// (larger than 32 KiB, aliases that expand to too much), if that was
	// the failure.
	Err error
}

func (e *FrontmatterError) Error() string {
	if e.Field == "" {
		if e.Err != nil {
			return fmt.Sprintf("skills: %s: SKILL.md frontmatter: %v", e.Skill, e.Err)
		}
		return fmt.Sprintf("skills: %s: SKILL.md has no frontmatter mapping", e.Skill)
	}
	return fmt.Sprintf("skills: %s: frontmatter field %q differs: the entry has %s, SKILL.md has %s", e.Skill, e.Field, show(e.Entry), show(e.File))
}

// Unwrap returns the parse error, if any.
func (e *FrontmatterError) Unwrap() error { return e.Err }

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	return fmt.Sprintf("%#v", v)
}

// EntryError reports an entry that breaks the extension's rules, so that
// no host may load it.
type EntryError struct {
	// Skill is the entry's URI ("" when it has none).
	Skill string
	// Field is the entry field at fault, for example "resources[2].digest".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("skills: invalid entry %q: %s: %s", e.Skill, e.Field, e.Reason)
}

// ErrDynamic is returned by [Host.Load] for a skill whose resources are
// "dynamic": its content cannot be verified, and this host declines such
// skills, as the extension allows.
var ErrDynamic = errors.New("skills: the skill is dynamic (no digests to verify its content against)")
