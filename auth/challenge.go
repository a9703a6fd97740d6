package auth

import (
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 7235 §4.1):
// an auth scheme followed either by a token68 or by auth-params.
type Challenge struct {
	// Scheme is the auth scheme as sent ("Bearer", "DPoP"); compare it
	// case-insensitively.
	Scheme string
	// Token68 is the token68 form of the credentials, if the challenge
	// used it instead of parameters.
	Token68 string
	// Params holds the auth-params with lower-cased names and unquoted
	// values. When a name repeats, the first value is kept.
	Params map[string]string
}

// ResourceMetadata is the resource_metadata parameter (RFC 9728 §5.1).
func (c Challenge) ResourceMetadata() string { return c.Params["resource_metadata"] }

// Scopes splits the scope parameter on spaces.
func (c Challenge) Scopes() []string { return strings.Fields(c.Params["scope"]) }

// Error is the error parameter (RFC 6750 §3.1), for example
// "invalid_token" or "insufficient_scope".
func (c Challenge) Error() string { return c.Params["error"] }

// maxChallengeHeader bounds the header length parsed; a longer header is
// truncated first (a peer cannot make parsing cost more than this).
const maxChallengeHeader = 16 << 10

// ParseChallenges parses a WWW-Authenticate header value, which may hold
// several comma-separated challenges (several header lines joined with
// ", " are one value). It is lenient: malformed parts are skipped, never
// fatal, and it never panics.
func ParseChallenges(header string) []Challenge {
	if len(header) > maxChallengeHeader {
		header = header[:maxChallengeHeader]
	}
	p := &challengeParser{s: header}
	var out []Challenge
	for {
		p.skipListSeparators()
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		if p.skipSpaces() && !p.done() && p.s[p.i] != ',' {
			p.parseParams(&c)
		}
		out = append(out, c)
	}
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

// skipSpaces skips spaces and tabs and reports whether it skipped any.
func (p *challengeParser) skipSpaces() bool {
	start := p.i
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	return p.i > start
}

func (p *challengeParser) skipListSeparators() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTchar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

func isToken68char(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", b) >= 0
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// parseParams reads the credentials part of a challenge: a token68 or a
// comma-separated auth-param list. It stops before the scheme of the
// next challenge.
func (p *challengeParser) parseParams(c *Challenge) {
	// token68: 1*(token68char) *"=" followed by end, spaces or a comma,
	// and not followed by "=" + value (that would be a parameter).
	if t68, ok := p.tryToken68(); ok {
		c.Token68 = t68
		return
	}
	for {
		save := p.i
		name := p.token()
		if name == "" {
			return
		}
		p.skipSpaces()
		if p.peek() != '=' {
			// A bare token: the scheme of the next challenge.
			p.i = save
			return
		}
		p.i++ // '='
		p.skipSpaces()
		var val string
		if p.peek() == '"' {
			val = p.quoted()
		} else {
			val = p.token()
		}
		key := strings.ToLower(name)
		if _, dup := c.Params[key]; !dup {
			c.Params[key] = val
		}
		// Expect a comma before the next param (or challenge).
		p.skipSpaces()
		if p.peek() != ',' {
			// Garbage: skip to the next comma.
			for !p.done() && p.s[p.i] != ',' {
				p.i++
			}
		}
		p.skipListSeparators()
		if p.done() {
			return
		}
	}
}

func (p *challengeParser) tryToken68() (string, bool) {
	j := p.i
	for j < len(p.s) && isToken68char(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	k := j
	for k < len(p.s) && p.s[k] == '=' {
		k++
	}
	// "name=value" is a parameter, not token68: exactly one '=' followed
	// by a value character.
	if k == j+1 {
		rest := k
		for rest < len(p.s) && (p.s[rest] == ' ' || p.s[rest] == '\t') {
			rest++
		}
		if rest < len(p.s) && p.s[rest] != ',' {
			return "", false
		}
	}
	if k == j {
		// No padding: a token68 only when nothing follows but a list
		// separator (else it is a param name with spaces before '=').
		rest := k
		for rest < len(p.s) && (p.s[rest] == ' ' || p.s[rest] == '\t') {
			rest++
		}
		if rest < len(p.s) && p.s[rest] != ',' {
			return "", false
		}
	}
	t := p.s[p.i:k]
	p.i = k
	return t, true
}

// quoted reads a quoted-string starting at '"', handling backslash
// escapes; an unterminated string ends at the end of the input.
func (p *challengeParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		ch := p.s[p.i]
		p.i++
		switch ch {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// findChallenge returns the first challenge whose scheme is one of schemes
// (case-insensitively).
func findChallenge(cs []Challenge, schemes ...string) (Challenge, bool) {
	for _, c := range cs {
		for _, s := range schemes {
			if strings.EqualFold(c.Scheme, s) {
				return c, true
			}
		}
	}
	return Challenge{}, false
}
