package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is immutable and safe for concurrent
// use; per-goroutine word caches come from a pool.
type Tokenizer struct {
	vocab    map[string]int32 // byte-level token strings and added-token contents
	tokens   []string         // id -> token string (byte-level form, or added content)
	special  []bool
	decBytes [][]byte // id -> raw bytes
	byteTok  [256]int32
	merges   *mergeTable
	added    *addedMatcher
	pool     sync.Pool
}

// maxCacheWords bounds a word cache; it is cleared when it grows past this.
const maxCacheWords = 1 << 17

type encoder struct {
	cache   map[string][]int32
	scratch []int32
}

func (t *Tokenizer) getEncoder() *encoder {
	if e, ok := t.pool.Get().(*encoder); ok {
		return e
	}
	return &encoder{cache: make(map[string][]int32, 1024)}
}

// VocabSize returns the number of ids (the largest id + 1).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of a token given in its vocabulary form (added tokens by content).
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	id, ok := t.vocab[s]
	return id, ok
}

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int32) bool {
	return id >= 0 && int(id) < len(t.special) && t.special[id]
}

// Encode tokenizes text without adding special tokens; added tokens written in the text are
// recognized.
func (t *Tokenizer) Encode(text string) []int32 {
	return t.AppendEncode(make([]int32, 0, len(text)/3+4), text)
}

// AppendEncode appends the ids of text to out.
func (t *Tokenizer) AppendEncode(out []int32, text string) []int32 {
	e := t.getEncoder()
	defer t.pool.Put(e)
	for pos := 0; pos < len(text); {
		s, end, id := t.added.find(text, pos)
		if s < 0 {
			out = t.encodeSegment(out, e, text[pos:], nil, 0)
			break
		}
		out = t.encodeSegment(out, e, text[pos:s], nil, 0)
		out = append(out, id)
		pos = end
	}
	return out
}

// EncodeOffsets tokenizes text like Encode and also returns, per token, the byte offset in
// text just past the token's end. Where normalization changed the text, a token ending inside
// a normalization segment is mapped to the end of that segment in the original text.
func (t *Tokenizer) EncodeOffsets(text string) ([]int32, []int) {
	e := t.getEncoder()
	defer t.pool.Put(e)
	out := make([]int32, 0, len(text)/3+4)
	ends := make([]int, 0, cap(out))
	for pos := 0; pos < len(text); {
		s, end, id := t.added.find(text, pos)
		if s < 0 {
			s, end = len(text), len(text)
		}
		seg := text[pos:s]
		if isNFC(seg) {
			out = t.encodeSegment(out, e, seg, &ends, pos)
		} else {
			out = t.encodeUnnormalized(out, e, seg, &ends, pos)
		}
		if end > s {
			out = append(out, id)
			ends = append(ends, end)
		}
		pos = end
	}
	return out, ends
}

// encodeUnnormalized normalizes seg chunk by chunk (at normalization boundaries) so that
// token ends can be mapped back to offsets in seg.
func (t *Tokenizer) encodeUnnormalized(out []int32, e *encoder, seg string, ends *[]int, base int) []int32 {
	var normed []byte
	var normEnd, origEnd []int
	for i := 0; i < len(seg); {
		n := norm.NFC.NextBoundaryInString(seg[i:], true)
		if n <= 0 {
			n = len(seg) - i
		}
		normed = norm.NFC.AppendString(normed, seg[i:i+n])
		i += n
		normEnd = append(normEnd, len(normed))
		origEnd = append(origEnd, i)
	}
	var local []int
	out = t.encodeSegment(out, e, string(normed), &local, 0)
	k := 0
	for _, p := range local {
		for k < len(normEnd)-1 && normEnd[k] < p {
			k++
		}
		*ends = append(*ends, base+origEnd[k])
	}
	return out
}

func isNFC(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.IsNormalString(s)
		}
	}
	return true
}

// encodeSegment encodes text that holds no added token. When ends is not nil the end
// offset (plus base) of every token is appended to it.
func (t *Tokenizer) encodeSegment(out []int32, e *encoder, seg string, ends *[]int, base int) []int32 {
	if seg == "" {
		return out
	}
	if ends == nil && !isNFC(seg) {
		seg = norm.NFC.String(seg)
	}
	for i := 0; i < len(seg); {
		j := nextPiece(seg, i)
		word := seg[i:j]
		n0 := len(out)
		if ids, ok := e.cache[word]; ok {
			out = append(out, ids...)
		} else {
			out = t.bpe(out, word, &e.scratch)
			if len(e.cache) >= maxCacheWords {
				clear(e.cache)
			}
			e.cache[strings.Clone(word)] = append([]int32(nil), out[n0:]...)
		}
		if ends != nil {
			p := base + i
			for _, id := range out[n0:] {
				p += len(t.decBytes[id])
				*ends = append(*ends, p)
			}
		}
		i = j
	}
	return out
}

// Decode turns ids back into text (special tokens included). Byte sequences that are not
// valid UTF-8 are kept as they are.
func (t *Tokenizer) Decode(ids []int32) (string, error) {
	n := 0
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.decBytes) || t.decBytes[id] == nil {
			return "", fmt.Errorf("decode: unknown token id %d", id)
		}
		n += len(t.decBytes[id])
	}
	b := make([]byte, 0, n)
	for _, id := range ids {
		b = append(b, t.decBytes[id]...)
	}
	return string(b), nil
}

// Token returns the vocabulary form of id ("" if unknown).
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}
