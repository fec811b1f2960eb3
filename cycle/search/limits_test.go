package search

import (
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
)

// pyLimits re-types the reference's _fixed_agent_limit_matches patterns in
// Python's re, the oracle for FixedAgentLimits on ASCII text (Python's \w,
// \s and \b are Unicode-aware, Go's are ASCII: designs with non-ASCII
// words next to a cap may match differently).
const pyLimits = `import json, re, sys
P = [re.compile(r"\b(?:maximum|max(?:imum)?\s+of|at\s+most|up\s+to)\s+\d+\s+(?:agent|subagent|recall|re-delegation|redelegation|hop|turn|tool|iteration|round|minute|hour)s?\b", re.I),
     re.compile(r"\b(?:agent|subagent|recall|re-delegation|redelegation|hop|turn|tool)(?:\s+\w+){0,3}\s+(?:is|are)?\s*(?:limited|capped)\s+to\s+\d+\b", re.I)]
out = []
for s in json.load(sys.stdin):
    m = []
    for p in P:
        for x in p.finditer(s):
            e = " ".join(x.group(0).split())
            if e not in m:
                m.append(e)
    out.append(m)
json.dump(out, sys.stdout)`

func TestFixedAgentLimitsMatchPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	toks := []string{"at most", "At  Most", "up to", "maximum of", "max of", "maximum", "3", "12", "agents", "agent", "subagent", "hops",
		"tool", "tools", "turns", "minutes", "hour", "rounds", "recall", "re-delegation", "is", "are", "limited", "capped", "to", "the",
		"loop", "calls", ".", ",", "\n", "x3", "agentsx"}
	rng := rand.New(rand.NewSource(5))
	var in []string
	for i := 0; i < 400; i++ {
		var b strings.Builder
		for j := 0; j < 3+rng.Intn(14); j++ {
			b.WriteString(toks[rng.Intn(len(toks))])
			b.WriteString([]string{" ", " ", "  ", "\t", ""}[rng.Intn(5)])
		}
		in = append(in, b.String())
	}
	raw, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", pyLimits)
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want [][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	hits := 0
	for i, s := range in {
		got := FixedAgentLimits(s)
		if strings.Join(got, "|") != strings.Join(want[i], "|") {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want[i])
		}
		hits += len(got)
	}
	if hits == 0 {
		t.Fatal("no input matched: the test checks nothing")
	}
}

// pyAppendix re-types the reference's _build_all_results_json_evidence
// loop (caps in characters, head and tail kept, the budget test after the
// cut) as the oracle for renderResults.
const pyAppendix = `import json, sys
out = []
for files, per, total in json.load(sys.stdin):
    blocks, used, omitted = [], 0, []
    for rel, body in files:
        cut = False
        if per and len(body) > per:
            half = per // 2
            body = body[:half] + "\n... [truncated: middle omitted] ...\n" + body[len(body) - (per - half):]
            cut = True
        if total and used + len(body) > total:
            omitted.append(rel)
            continue
        used += len(body)
        blocks += [f"### File: ` + "`{rel}`" + `{' [truncated]' if cut else ''}", "` + "```" + `", body, "` + "```" + `"]
    if omitted:
        blocks.append("- Omitted due to appendix character budget: " + ", ".join(f"` + "`{n}`" + `" for n in omitted))
    out.append("\n\n".join(blocks) if files else "- No JSON files found under ` + "`results/`" + `.")
json.dump(out, sys.stdout)`

func TestResultsAppendixMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	rng := rand.New(rand.NewSource(9))
	type set struct {
		files      [][2]string
		per, total int
	}
	var sets []set
	var in []any
	for i := 0; i < 200; i++ {
		var s set
		for j := 0; j < rng.Intn(5); j++ {
			body := strings.Repeat([]string{"a", "é", "{\"k\": 1}\n", "日本"}[rng.Intn(4)], rng.Intn(40))
			s.files = append(s.files, [2]string{"results/f" + string(rune('a'+j)) + ".json", body})
		}
		s.per, s.total = rng.Intn(30), rng.Intn(90)
		sets = append(sets, s)
		files := make([][2]string, len(s.files))
		copy(files, s.files)
		in = append(in, []any{files, s.per, s.total})
	}
	raw, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", pyAppendix)
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, s := range sets {
		var files []resultFile
		for _, f := range s.files {
			files = append(files, resultFile{rel: f[0], body: f[1]})
		}
		if got := renderResults(files, true, s.per, s.total); got != want[i] {
			t.Fatalf("set %d (per %d, total %d):\n got %q\nwant %q", i, s.per, s.total, got, want[i])
		}
	}
}
