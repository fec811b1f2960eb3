package tokenizer

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Load("testdata"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseRefusesOtherPipelines(t *testing.T) {
	raw, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	tests := []struct{ name, old, new string }{
		{"normalizer", `"type": "NFC"`, `"type": "NFKC"`},
		{"model", `"type": "BPE"`, `"type": "WordPiece"`},
		{"pattern", `\\s+(?!\\S)|\\s+`, `\\s+`},
	}
	for _, tt := range tests {
		if !strings.Contains(s, tt.old) {
			t.Fatalf("%s: fixture lacks %q", tt.name, tt.old)
		}
		_, err := Parse([]byte(strings.Replace(s, tt.old, tt.new, 1)))
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: got %v, want ErrUnsupported", tt.name, err)
		}
	}
}
