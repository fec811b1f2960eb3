package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var (
	loadOnce sync.Once
	shared   *Tokenizer
	loadErr  error
)

// testTokenizer loads the Qwen3 fixture tokenizer once per test binary.
func testTokenizer(tb testing.TB) *Tokenizer {
	tb.Helper()
	loadOnce.Do(func() { shared, loadErr = Load("testdata") })
	if loadErr != nil {
		tb.Fatal(loadErr)
	}
	return shared
}

type encodeCase struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
}

func readEncodeCases(tb testing.TB) []encodeCase {
	f, err := os.Open("testdata/encode.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []encodeCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c encodeCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

func TestEncodeFixture(t *testing.T) {
	tok := testTokenizer(t)
	cases := readEncodeCases(t)
	if len(cases) < 100 {
		t.Fatalf("only %d fixture cases", len(cases))
	}
	for i, c := range cases {
		got := tok.Encode(c.Text)
		if !reflect.DeepEqual(got, c.IDs) {
			t.Errorf("case %d %q:\n got %v\nwant %v", i, c.Text, got, c.IDs)
		}
		back, err := tok.Decode(got)
		if err != nil {
			t.Fatal(err)
		}
		if want := norm.NFC.String(c.Text); back != want {
			t.Errorf("case %d: decode got %q, want %q", i, back, want)
		}
	}
}

func TestEncodeOffsets(t *testing.T) {
	tok := testTokenizer(t)
	for _, c := range readEncodeCases(t) {
		text := norm.NFC.String(c.Text)
		ids, ends := tok.EncodeOffsets(text)
		if got, want := ids, tok.Encode(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: got %v, want %v", text, got, want)
		}
		start := 0
		for k, id := range ids {
			piece, _ := tok.Decode([]int32{id})
			if got, want := text[start:ends[k]], piece; got != want {
				t.Fatalf("%q token %d: got span %q, want %q", text, k, got, want)
			}
			start = ends[k]
		}
	}
	// Not normalized: "e" + combining acute composes into one character.
	text := "cafe\u0301 ok"
	ids, ends := tok.EncodeOffsets(text)
	if got, want := ids, tok.Encode(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got, want := ends[len(ends)-1], len(text); got != want {
		t.Errorf("last end: got %d, want %d", got, want)
	}
	for k := 1; k < len(ends); k++ {
		if ends[k] < ends[k-1] {
			t.Errorf("ends not monotonic: %v", ends)
		}
	}
}

// TestHeapMatchesScan checks the priority-queue merge loop against the quadratic scan.
func TestHeapMatchesScan(t *testing.T) {
	tok := testTokenizer(t)
	words := []string{
		strings.Repeat(" ", 200), strings.Repeat("=", 97), strings.Repeat("ab", 60),
		"supercalifragilisticexpialidociousantidisestablishmentarianism",
		strings.Repeat("中文测试", 20), strings.Repeat("\u00e9", 50),
	}
	for _, w := range words {
		syms := make([]int32, 0, len(w))
		for i := 0; i < len(w); i++ {
			syms = append(syms, tok.byteTok[w[i]])
		}
		if got, want := tok.bpeHeap(w), scanMerge(tok, syms); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: heap %v, scan %v", w, got, want)
		}
	}
}

func scanMerge(tok *Tokenizer, syms []int32) []int32 {
	for len(syms) > 1 {
		best, bestRank, bestID := -1, int32(1<<31-1), int32(0)
		for i := 0; i+1 < len(syms); i++ {
			if rank, id, ok := tok.merges.get(syms[i], syms[i+1]); ok && rank < bestRank {
				best, bestRank, bestID = i, rank, id
			}
		}
		if best < 0 {
			break
		}
		syms[best] = bestID
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	return syms
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "Hello world", "I'm <|im_start|>user\nhi<|im_end|>", "\t\n  \r\n x", "café 中文 😀", "'S'LL'rE", "\xff\xfe"} {
		f.Add(s)
	}
	tok := testTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		back, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(s) {
			if back != s && isNFC(s) {
				t.Fatalf("invalid UTF-8 %q not kept: got %q", s, back)
			}
			return
		}
		if strings.Contains(s, "<") {
			// Added tokens split the normalization; re-encoding must still be stable.
			if got, want := tok.Encode(back), ids; !reflect.DeepEqual(got, want) {
				t.Fatalf("re-encode of %q: got %v, want %v", back, got, want)
			}
			return
		}
		if want := norm.NFC.String(s); back != want {
			t.Fatalf("decode(encode(%q)) = %q, want %q", s, back, want)
		}
	})
}
