package search

import (
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// pyHistory re-types, in Python, the reference's rules for the history
// sections: collapse and cut (_shorten), defect sentences
// (_history_action_items), recurring-issue buckets
// (_history_delta_checklist_text) and the per-row summary
// (_history_summary_text, repo lines left out as mass does). It is the
// oracle for the Go port on random rationales.
const pyHistory = `import json, re, sys
CUES = ("fail","fails","failed","missing","inconsistent","mismatch","not ","lack","weak","nan","null","error","defect","reproducibility")
def shorten(t, n):
    t = " ".join(t.split())
    return t if len(t) <= n else t[:n-3].rstrip() + "..."
def items(r, n=6):
    out, seen = [], set()
    for s in re.split(r"(?<=[.!?])\s+", " ".join(r.split())):
        s = s.strip()
        if not s or not any(c in s.lower() for c in CUES) or s in seen:
            continue
        seen.add(s); out.append(s)
        if len(out) >= n:
            break
    return out
BUCKETS = [("report-metrics inconsistency", r"(inconsistent|mismatch|contradict|does not match|conflict)"),
    ("missing deliverables or sections", r"(missing|absent|not found|not present)"),
    ("stability/robustness gap", r"(stability|robustness|subperiod|pre_2020|post_2020)"),
    ("null/nan quality defect", r"(nan|null|none|non-standard json)"),
    ("reproducibility gap", r"(reproducibility|not reproducible|cannot reproduce|requirements|pin)"),
    ("validation/test weakness", r"(validation|test|insufficient evidence|not proven|unclear)")]
def checklist(rows):
    if not rows:
        return "- No recurring issues yet."
    counts = {n: 0 for n, _ in BUCKETS}; ex = {}
    for row in rows:
        r = row["rationale"].strip()
        if not r:
            continue
        for n, p in BUCKETS:
            if re.search(p, r.lower()):
                counts[n] += 1
                if n not in ex:
                    it = items(r, 1)
                    if it:
                        ex[n] = it[0]
    ranked = sorted(((n, c) for n, c in counts.items() if c > 0), key=lambda x: x[1], reverse=True)
    if not ranked:
        return "- No repeated issue patterns detected yet."
    lines = ["- Prioritize fixes for recurring issues below (higher count = more repeated in history):"]
    for n, c in ranked:
        lines.append(f"- [{c}x] {n}: e.g., {ex[n]}" if n in ex else f"- [{c}x] {n}")
    return "\n".join(lines)
def summary(rows):
    if not rows:
        return "- No prior pairwise history yet."
    lines = []
    for row in rows:
        r = row["rationale"].strip()
        lines.append(f"- Comparison: {row['comparison']}")
        if row["key"]:
            lines.append(f"  - Key: {row['key']}")
        lines.append(f"  - Winner: {row['winner']}")
        if r:
            lines.append(f"  - Rationale (verbatim excerpt): {shorten(r, 2400)}")
        it = items(r)
        if it:
            lines.append("  - Actionable takeaways for next version:")
            lines += [f"    - {i}" for i in it]
        lines.append("  - Use this history as constraints: preserve winning traits, fix listed defects.")
    return "\n".join(lines)
out = []
for rows in json.load(sys.stdin):
    out.append([summary(rows), checklist(rows), [shorten(r["rationale"], 40) for r in rows]])
json.dump(out, sys.stdout)`

func TestHistorySectionsMatchPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	words := []string{"The", "report", "is", "missing", "inconsistent", "NaN", "not", "pinned", "validation", "weak", "stable", "ok",
		"B", "A's", "test", "Mismatch!", "error?", "fine.", "none", "lacks", "subperiod", "café", "\u00a0", "\n", "  ", "results/metrics.json."}
	rng := rand.New(rand.NewSource(11))
	type row struct {
		Key        string `json:"key"`
		Comparison string `json:"comparison"`
		Winner     string `json:"winner"`
		Rationale  string `json:"rationale"`
	}
	var sets [][]row
	for i := 0; i < 200; i++ {
		var rows []row
		for j := 0; j < rng.Intn(4); j++ {
			var b strings.Builder
			for k := 0; k < rng.Intn(40); k++ {
				b.WriteString(words[rng.Intn(len(words))])
				b.WriteString([]string{" ", ". ", "! ", "? ", " ", "\t"}[rng.Intn(6)])
			}
			rows = append(rows, row{Key: BaselineKey(j), Comparison: "x vs y", Winner: []string{"A", "B", "tie"}[rng.Intn(3)], Rationale: b.String()})
		}
		sets = append(sets, append([]row{}, rows...))
	}
	in, _ := json.Marshal(sets)
	cmd := exec.Command(py, "-c", pyHistory)
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v: %s", err, stderr.String())
	}
	var want []struct {
		Summary, Checklist string
		Short              []string
	}
	var raw [][]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		var w struct {
			Summary, Checklist string
			Short              []string
		}
		_ = json.Unmarshal(r[0], &w.Summary)
		_ = json.Unmarshal(r[1], &w.Checklist)
		_ = json.Unmarshal(r[2], &w.Short)
		want = append(want, w)
	}
	for i, rows := range sets {
		cs := make([]Comparison, len(rows))
		for j, r := range rows {
			cs[j] = Comparison{Key: r.Key, Comparison: r.Comparison, Winner: r.Winner, Rationale: r.Rationale}
		}
		if got := historySummary(cs, nil); got != want[i].Summary {
			t.Fatalf("set %d summary:\n got %q\nwant %q", i, got, want[i].Summary)
		}
		if got := deltaChecklist(cs); got != want[i].Checklist {
			t.Fatalf("set %d checklist:\n got %q\nwant %q", i, got, want[i].Checklist)
		}
		for j, r := range rows {
			if got := shorten(r.Rationale, 40); got != want[i].Short[j] {
				t.Fatalf("set %d shorten %q:\n got %q\nwant %q", i, r.Rationale, got, want[i].Short[j])
			}
		}
	}
}
