package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The Qwen2/Qwen3 split pattern, applied with "Isolated" behaviour:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Go's regexp has no lookahead, so nextPiece walks the alternatives by hand. Every rune
// matches one alternative, so the pieces cover the text without gaps.

// QwenPattern is the split pattern nextPiece implements; tokenizer.json must carry exactly it.
const QwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

const (
	clLetter = 1 << iota
	clNumber
	clSpace
	clNewline // \r or \n (also clSpace)
)

var asciiClass [128]uint8

func init() {
	for r := rune(0); r < 128; r++ {
		asciiClass[r] = slowClass(r)
	}
}

func slowClass(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clLetter
	}
	if unicode.IsNumber(r) {
		c |= clNumber
	}
	if unicode.IsSpace(r) {
		c |= clSpace
	}
	if r == '\r' || r == '\n' {
		c |= clNewline
	}
	return c
}

// runeAt decodes the rune at i and its class. Invalid bytes decode as one-byte RuneError,
// which classifies as a symbol.
func runeAt(s string, i int) (rune, int, uint8) {
	b := s[i]
	if b < utf8.RuneSelf {
		return rune(b), 1, asciiClass[b]
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, w, slowClass(r)
}

func isOther(c uint8) bool { return c&(clLetter|clNumber|clSpace) == 0 }

// nextPiece returns the end of the pre-token that starts at i (i < len(s)).
func nextPiece(s string, i int) int {
	r, w, c := runeAt(s, i)
	n := len(s)

	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r == '\'' && i+1 < n {
		switch lower(s[i+1]) {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < n && lower(s[i+2]) == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < n && lower(s[i+2]) == 'l' {
				return i + 3
			}
		}
	}

	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c&clLetter != 0 {
		return scanLetters(s, i+w)
	}
	if c&(clNewline|clNumber) == 0 && i+w < n {
		if _, w2, c2 := runeAt(s, i+w); c2&clLetter != 0 {
			return scanLetters(s, i+w+w2)
		}
	}

	// \p{N}
	if c&clNumber != 0 {
		return i + w
	}

	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	j := i
	if r == ' ' && i+1 < n {
		if _, _, c2 := runeAt(s, i+1); isOther(c2) {
			j = i + 1
		}
	}
	if _, wj, cj := runeAt(s, j); isOther(cj) {
		j += wj
		for j < n {
			_, w2, c2 := runeAt(s, j)
			if !isOther(c2) {
				break
			}
			j += w2
		}
		for j < n && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}

	// Here the rune is whitespace. Find the whitespace run [i, e), its last newline and
	// where its last rune starts.
	e, lastNL, lastStart, count := i, -1, i, 0
	for e < n {
		_, w2, c2 := runeAt(s, e)
		if c2&clSpace == 0 {
			break
		}
		if c2&clNewline != 0 {
			lastNL = e
		}
		lastStart = e
		e += w2
		count++
	}
	// \s*[\r\n]+
	if lastNL >= 0 {
		return lastNL + 1
	}
	// \s+(?!\S)
	if e == n {
		return e
	}
	if count >= 2 {
		return lastStart
	}
	// \s+
	return e
}

func scanLetters(s string, j int) int {
	for j < len(s) {
		_, w, c := runeAt(s, j)
		if c&clLetter == 0 {
			break
		}
		j += w
	}
	return j
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
