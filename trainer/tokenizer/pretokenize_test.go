package tokenizer

import (
	"reflect"
	"testing"
)

func pieces(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func TestPieces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"I'm they'LL it's", []string{"I", "'m", " they", "'LL", " it", "'s"}},
		{"x  y", []string{"x", " ", " y"}},                   // \s+(?!\S) leaves the last space to the word
		{"a   \n\n  b", []string{"a", "   \n\n", " ", " b"}}, // \s*[\r\n]+ then \s+(?!\S)
		{"end   ", []string{"end", "   "}},                   // trailing whitespace at the end of text
		{"12345", []string{"1", "2", "3", "4", "5"}},
		{" {\"a\": 1}\n", []string{" {\"", "a", "\":", " ", "1", "}\n"}},
		{"\tfoo", []string{"\tfoo"}},
		{"café中文", []string{"café中文"}},
		{"$$x", []string{"$$", "x"}},
		{" !!\r\n\r\nx", []string{" !!\r\n\r\n", "x"}},
		{"\xff\xfeab", []string{"\xff\xfe", "ab"}},
	}
	for _, tt := range tests {
		if got := pieces(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}
