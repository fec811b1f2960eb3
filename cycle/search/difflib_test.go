package search

import (
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// TestUnifiedLinesMatchesPython checks the difflib port against python3's
// own difflib.unified_diff(n=1, lineterm="") on random line sequences
// (small alphabets, so that matches, replacements and ties are common;
// some longer than 200 lines, where the junk heuristic applies).
func TestUnifiedLinesMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	rng := rand.New(rand.NewSource(7))
	type pair struct{ A, B []string }
	var pairs []pair
	for i := 0; i < 300; i++ {
		n, m, alpha := rng.Intn(12), rng.Intn(12), 1+rng.Intn(5)
		if i%25 == 0 {
			n, m, alpha = 200+rng.Intn(60), 200+rng.Intn(60), 3
		}
		gen := func(k int) []string {
			out := make([]string, k)
			for j := range out {
				out[j] = string(rune('a' + rng.Intn(alpha)))
			}
			return out
		}
		a := gen(n)
		b := append([]string{}, a...)
		if rng.Intn(2) == 0 {
			b = gen(m)
		} else {
			for e := 0; e < 1+rng.Intn(4) && len(b) > 0; e++ {
				b[rng.Intn(len(b))] = string(rune('a' + rng.Intn(alpha+1)))
			}
		}
		pairs = append(pairs, pair{a, b})
	}
	in, _ := json.Marshal(pairs)
	script := `import difflib, json, sys
for p in json.load(sys.stdin):
    print(json.dumps("\n".join(difflib.unified_diff(p["A"], p["B"], fromfile="x", tofile="y", lineterm="", n=1))))`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pairs) {
		t.Fatalf("python3 gave %d diffs for %d pairs", len(lines), len(pairs))
	}
	for i, p := range pairs {
		var want string
		if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
			t.Fatal(err)
		}
		if got := UnifiedLines(p.A, p.B, "x", "y", 1); got != want {
			t.Fatalf("pair %d (%v / %v):\n got %q\nwant %q", i, p.A, p.B, got, want)
		}
	}
}

func TestPySplitLines(t *testing.T) {
	for in, want := range map[string][]string{"": nil, "a\n": {"a"}, "a\r\nb\rc\n\nd": {"a", "b", "c", "", "d"}, "x\u2028y": {"x", "y"}} {
		got := pySplitLines(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%q: %q", in, got)
		}
	}
}
