package host

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// as VS Code writes its configuration files, into plain JSON. Comments
// become spaces (keeping offsets for error messages); a comma followed,
// after whitespace and comments, by "}" or "]" is dropped. Strings are
// left as they are.
func stripJSONC(data []byte) []byte {
	b := make([]byte, len(data))
	copy(b, data)
	eachOutsideStrings(b, func(i int) int { return blankComment(b, i) })
	eachOutsideStrings(b, func(i int) int {
		if b[i] == ',' {
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && (b[j] == '}' || b[j] == ']') {
				b[i] = ' '
			}
		}
		return i
	})
	return b
}

// eachOutsideStrings calls f with the index of every byte of b that is
// not inside a JSON string; f returns the index of the last byte it
// consumed.
func eachOutsideStrings(b []byte, f func(i int) int) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		default:
			i = f(i)
		}
	}
}

// blankComment blanks the comment starting at i, if one does (keeping
// newlines), and returns the index of its last byte, or i.
func blankComment(b []byte, i int) int {
	if b[i] != '/' || i+1 >= len(b) || b[i+1] != '/' && b[i+1] != '*' {
		return i
	}
	end := len(b)
	if b[i+1] == '/' {
		for j := i; j < len(b); j++ {
			if b[j] == '\n' {
				end = j
				break
			}
		}
	} else {
		for j := i + 2; j+1 < len(b); j++ {
			if b[j] == '*' && b[j+1] == '/' {
				end = j + 2
				break
			}
		}
	}
	for k := i; k < end; k++ {
		if b[k] != '\n' {
			b[k] = ' '
		}
	}
	return end - 1
}
