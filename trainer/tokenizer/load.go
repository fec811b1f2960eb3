package tokenizer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/errclass"
)

// ErrUnsupported reports a tokenizer.json this package does not implement
// (class errclass.ErrInvalid).
var ErrUnsupported = errclass.New("unsupported tokenizer", errclass.ErrInvalid)

type fileJSON struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Special    bool   `json:"special"`
		Normalized bool   `json:"normalized"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Decoder      json.RawMessage `json:"decoder"`
	Model        struct {
		Type                    string          `json:"type"`
		Vocab                   map[string]int  `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
		ByteFallback            bool            `json:"byte_fallback"`
		ContinuingSubwordPrefix string          `json:"continuing_subword_prefix"`
		EndOfWordSuffix         string          `json:"end_of_word_suffix"`
		Dropout                 *float64        `json:"dropout"`
	} `json:"model"`
}

// Load reads dir/tokenizer.json.
func Load(dir string) (*Tokenizer, error) {
	return LoadFile(filepath.Join(dir, "tokenizer.json"))
}

// LoadFile reads a Hugging Face tokenizer.json and checks that it is a byte-level BPE of the
// Qwen2/Qwen3 family; anything else is refused with ErrUnsupported.
func LoadFile(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tokenizer: %w", errclass.Missing(err))
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", path, err)
	}
	return t, nil
}

// Parse builds a tokenizer from the bytes of a tokenizer.json.
func Parse(b []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode tokenizer.json: %w", err)
	}
	if err := checkPipeline(&f); err != nil {
		return nil, err
	}
	t := &Tokenizer{vocab: make(map[string]int32, len(f.Model.Vocab))}
	enc, dec := byteLevel()
	maxID := -1
	for s, id := range f.Model.Vocab {
		if id < 0 || id > 1<<30 {
			return nil, fmt.Errorf("vocab id %d of %q out of range", id, s)
		}
		t.vocab[s] = int32(id)
		maxID = max(maxID, id)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID > 1<<30 || a.Content == "" {
			return nil, fmt.Errorf("added token %q id %d: invalid", a.Content, a.ID)
		}
		if a.Normalized || a.SingleWord || a.LStrip || a.RStrip {
			return nil, fmt.Errorf("%w: added token %q uses normalized/single_word/lstrip/rstrip", ErrUnsupported, a.Content)
		}
		maxID = max(maxID, a.ID)
	}
	t.tokens = make([]string, maxID+1)
	t.special = make([]bool, maxID+1)
	for s, id := range t.vocab {
		t.tokens[id] = s
	}
	for b := 0; b < 256; b++ {
		id, ok := t.vocab[string(enc[b])]
		if !ok {
			return nil, fmt.Errorf("%w: vocab lacks byte-level token for byte %#x", ErrUnsupported, b)
		}
		t.byteTok[b] = id
	}
	merges, err := parseMerges(f.Model.Merges)
	if err != nil {
		return nil, err
	}
	t.merges = newMergeTable(len(merges))
	for rank, m := range merges {
		l, r := m[0], m[1]
		li, ok1 := t.vocab[l]
		ri, ok2 := t.vocab[r]
		ni, ok3 := t.vocab[l+r]
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("merge %d (%q %q): token not in vocab", rank, l, r)
		}
		t.merges.put(li, ri, int32(rank), ni)
	}
	t.added = newAddedMatcher()
	for _, a := range f.AddedTokens {
		t.tokens[a.ID] = a.Content
		t.special[a.ID] = a.Special
		t.vocab[a.Content] = int32(a.ID)
		t.added.add(a.Content, int32(a.ID))
	}
	t.added.finish()
	t.decBytes = make([][]byte, len(t.tokens))
	for id, s := range t.tokens {
		if s == "" {
			continue
		}
		if t.added.isAdded(int32(id)) {
			t.decBytes[id] = []byte(s)
			continue
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			b, ok := dec[r]
			if !ok {
				return nil, fmt.Errorf("%w: vocab token %q is not byte-level", ErrUnsupported, s)
			}
			out = append(out, b)
		}
		t.decBytes[id] = out
	}
	return t, nil
}

// parseMerges accepts both merge encodings: ["a", "b"] pairs (current) and "a b" strings.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		out := make([][2]string, len(pairs))
		for i, p := range pairs {
			if len(p) != 2 {
				return nil, fmt.Errorf("merge %d has %d parts", i, len(p))
			}
			out[i] = [2]string{p[0], p[1]}
		}
		return out, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err != nil {
		return nil, fmt.Errorf("merges are neither pairs nor strings: %w", err)
	}
	out := make([][2]string, len(strs))
	for i, s := range strs {
		l, r, ok := strings.Cut(s, " ")
		if !ok {
			return nil, fmt.Errorf("merge %d %q has no space", i, s)
		}
		out[i] = [2]string{l, r}
	}
	return out, nil
}

// checkPipeline refuses pipelines other than NFC + Qwen split + ByteLevel + BPE.
func checkPipeline(f *fileJSON) error {
	if f.Model.Type != "BPE" {
		return fmt.Errorf("%w: model type %q, want BPE", ErrUnsupported, f.Model.Type)
	}
	if f.Model.ByteFallback || f.Model.ContinuingSubwordPrefix != "" || f.Model.EndOfWordSuffix != "" ||
		(f.Model.Dropout != nil && *f.Model.Dropout != 0) {
		return fmt.Errorf("%w: BPE options byte_fallback/prefix/suffix/dropout", ErrUnsupported)
	}
	var norm struct{ Type string }
	if len(f.Normalizer) > 0 && string(f.Normalizer) != "null" {
		if err := json.Unmarshal(f.Normalizer, &norm); err != nil || norm.Type != "NFC" {
			return fmt.Errorf("%w: normalizer %s, want NFC", ErrUnsupported, f.Normalizer)
		}
	}
	var pre struct {
		Type          string
		Pretokenizers []struct {
			Type    string
			Pattern struct {
				Regex string
			}
			Behavior       string
			Invert         bool
			AddPrefixSpace bool `json:"add_prefix_space"`
			UseRegex       bool `json:"use_regex"`
		}
	}
	if err := json.Unmarshal(f.PreTokenizer, &pre); err != nil {
		return fmt.Errorf("%w: pre_tokenizer: %v", ErrUnsupported, err)
	}
	p := pre.Pretokenizers
	ok := pre.Type == "Sequence" && len(p) == 2 &&
		p[0].Type == "Split" && p[0].Pattern.Regex == QwenPattern && p[0].Behavior == "Isolated" && !p[0].Invert &&
		p[1].Type == "ByteLevel" && !p[1].AddPrefixSpace && !p[1].UseRegex
	if !ok {
		return fmt.Errorf("%w: pre_tokenizer is not the Qwen split + ByteLevel sequence", ErrUnsupported)
	}
	return nil
}
