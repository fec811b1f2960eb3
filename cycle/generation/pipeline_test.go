package generation

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// kendall is Kendall's τ-a between two scorings of the same ids.
func kendall(ids []string, x, y map[string]float64) float64 {
	c, d := 0, 0
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			s := (x[ids[i]] - x[ids[j]]) * (y[ids[i]] - y[ids[j]])
			switch {
			case s > 0:
				c++
			case s < 0:
				d++
			}
		}
	}
	n := len(ids) * (len(ids) - 1) / 2
	return float64(c-d) / float64(n)
}

func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func TestGenerationEndToEnd(t *testing.T) {
	w := &world{root: t.TempDir(), failEvery: map[string]int64{"beta": 2, "gamma": 1}, invalid: 0.1}
	cfg := w.config("alpha", "beta", "gamma", "lost-1", "nosearch-1")
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != StatusDone || sum.Generation != 1 || sum.Model != "gen-1" || sum.Parent != "base" {
		t.Fatalf("summary head: %+v", sum)
	}
	reasons := map[string]string{}
	for _, e := range sum.Excluded {
		reasons[e.ID] = e.Reason
	}
	for id, want := range map[string]string{"lost-1": "never beat", "nosearch-1": "no retained workflow", "gamma": "stopped early: 0 of "} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("task %s: excluded for %q, want %q", id, reasons[id], want)
		}
	}
	calls := w.calls()
	// gamma's episodes all fail: once 5 of the cap of 10 failed, 6 eligible
	// are out of reach and no more start (at most 2 others were running).
	if n := count(calls, "episode gamma") / 2; n < 5 || n > 5+cfg.Concurrency-1 {
		t.Errorf("gamma ran %d episodes, want 5 to %d (stopped once 6 eligible were out of reach)", n, 5+cfg.Concurrency-1)
	}
	if !strings.Contains(reasons["gamma"], "need 6") || !strings.Contains(reasons["gamma"], "cannot reach it") ||
		!strings.Contains(reasons["gamma"], "commonest reason: a required output is missing") {
		t.Errorf("gamma's reason %q does not say what it needed and why it stopped", reasons["gamma"])
	}
	var alpha *TaskSummary
	for i := range sum.Tasks {
		ts := sum.Tasks[i]
		if ts.ID == "alpha" {
			alpha = &sum.Tasks[i]
		}
		if ts.ID == "beta" && ts.Episodes > cfg.Episodes && ts.Successful > cfg.MinSuccess {
			t.Errorf("beta topped up beyond need: %d runs, %d eligible", ts.Episodes, ts.Successful)
		}
		if ts.Judgments+ts.InvalidJudgments != ts.Successful*cfg.Opponents/2 {
			t.Errorf("%s: %d+%d judgments over %d episodes", ts.ID, ts.Judgments, ts.InvalidJudgments, ts.Successful)
		}
		if reasons[ts.ID] == "" && (len(ts.Train) != 5 || len(ts.Val) != 1) {
			t.Errorf("%s: selection %v %v", ts.ID, ts.Train, ts.Val)
		}
	}
	if alpha == nil || alpha.Episodes != 8 || alpha.Successful != 8 || len(alpha.Ranking) != 8 {
		t.Fatalf("alpha: %+v", alpha)
	}
	checkOrder(t, w, alpha)
	checkOutputs(t, w, cfg, sum)
}

// checkOrder: the Bradley–Terry order agrees with the hidden quality.
func checkOrder(t *testing.T, w *world, ts *TaskSummary) {
	t.Helper()
	score, q := map[string]float64{}, map[string]float64{}
	var ids []string
	for _, r := range ts.Ranking {
		ids = append(ids, r.ID)
		score[r.ID] = r.Score
		v, err := w.quality(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		q[r.ID] = v
	}
	tau := kendall(ids, score, q)
	t.Logf("Kendall τ between the Bradley–Terry scores and the seeded quality: %.3f", tau)
	if tau < 0.4 {
		t.Errorf("τ = %.3f: the ranking does not follow quality", tau)
	}
}

func checkOutputs(t *testing.T, w *world, cfg Config, sum Summary) {
	t.Helper()
	var sel Selection
	if _, err := readJSON(filepath.Join(sum.Dataset, "selection.json"), &sel); err != nil {
		t.Fatal(err)
	}
	var want Selection
	for _, ts := range sum.Tasks {
		want.Train = append(want.Train, ts.Train...)
		want.Val = append(want.Val, ts.Val...)
	}
	sort.Strings(sel.Train)
	sort.Strings(want.Train)
	if strings.Join(sel.Train, ",") != strings.Join(want.Train, ",") || strings.Join(sel.Val, ",") != strings.Join(want.Val, ",") {
		t.Errorf("dataset built from %v, selection %v", sel, want)
	}
	if sum.Tokens.StoredSupervised != int64(500*(len(want.Train)+len(want.Val))) || sum.Tokens.ProcessedSupervised != 4500 {
		t.Errorf("tokens %+v", sum.Tokens)
	}
	eps, judg := count(w.calls(), "episode")/2, count(w.calls(), "judge")/2
	if lo := int64(eps*1000 + judg*200); sum.Tokens.Generated < lo || sum.Tokens.Generated > lo+int64(eps*100) {
		t.Errorf("generated tokens %d for %d episodes and %d judgments", sum.Tokens.Generated, eps, judg)
	}
	if _, err := os.Stat(filepath.Join(sum.Merged, "config.json")); err != nil {
		t.Errorf("merged model: %v", err)
	}
	var m Model
	if _, err := readJSON(filepath.Join(w.root, "models", "gen-1.json"), &m); err != nil || m.G != 1 || m.Parent != "base" || m.Weights != sum.Merged {
		t.Errorf("registered %+v (%v)", m, err)
	}
	if len(sum.Stages) != len(Stages) {
		t.Errorf("stages %+v", sum.Stages)
	}
	// The JSON carries the keys.
	b, _ := json.Marshal(sum)
	for _, k := range []string{`"generation":1`, `"dir":`, `"tasks":[`, `"episodes":`, `"successful":`, `"judgments":`,
		`"invalid_judgments":`, `"ranking":[`, `"train":[`, `"val":[`, `"excluded":[`, `"adapter":`, `"merged":`,
		`"generated":`, `"stored_supervised":`, `"processed_supervised":`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("generation.json lacks %s", k)
		}
	}
	// A second run redoes nothing.
	before := len(w.calls())
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if after := len(w.calls()); after != before {
		t.Errorf("rerun of a done generation made %d calls", after-before)
	}
}

func TestConfigValidate(t *testing.T) {
	w := &world{root: t.TempDir()}
	for name, mod := range map[string]func(*Config){
		"g zero":          func(c *Config) { c.G = 0 },
		"wrong parent g":  func(c *Config) { c.Parent.G = 3 },
		"odd opponents":   func(c *Config) { c.Opponents = 5 },
		"cap below runs":  func(c *Config) { c.Cap = 2 },
		"min below split": func(c *Config) { c.MinSuccess = 3 },
		"no tasks":        func(c *Config) { c.Tasks = nil },
		"task twice":      func(c *Config) { c.Tasks = []string{"a", "a"} },
		"no judge":        func(c *Config) { c.Judge = nil },
	} {
		c := w.config("alpha")
		mod(&c)
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
