package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/report"
	"github.com/mass-dev/mass/cycle/report/reporttest"
	"github.com/mass-dev/mass/datadir"
)

var spec = reporttest.Spec{Name: "eval-1", Tasks: []string{"projectile-sim", "orbit-fit"}, Models: []string{"base", "gen-1", "gen-2"},
	Episodes: 6, Seed: 3, Judges: []judgepairs.JudgeSpec{{Model: "judge-a", Seeds: []int64{42, 43, 44}}, {Model: "judge-b", Seeds: []int64{42, 43, 44}}}}

var (
	shared     datadir.Layout
	sharedOnce sync.Once
	sharedErr  error
	sharedDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// build reports on the shared fixture (written once: the tests only read it).
func build(t testing.TB, gens ...string) (*report.Report, datadir.Layout) {
	t.Helper()
	sharedOnce.Do(func() {
		if sharedDir, sharedErr = os.MkdirTemp("", "report-fixture-"); sharedErr == nil {
			shared, sharedErr = reporttest.Write(sharedDir, spec)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	r, err := report.Build(context.Background(), shared, report.Request{Eval: spec.Name, Gens: gens})
	if err != nil {
		t.Fatal(err)
	}
	return r, shared
}

// rawVerdict is a verdict file read with nothing but encoding/json.
type rawVerdict struct {
	Task, Candidate, Baseline, Model, Status, Winner string
	Index                                            int
	External                                         bool
	WinnerLabel                                      string `json:"winner_label"`
}

func readRaw(t *testing.T, dir string) []rawVerdict {
	t.Helper()
	var out []rawVerdict
	err := filepath.Walk(filepath.Join(dir, "verdicts"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var v rawVerdict
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildRecomputedFromVerdictFiles: every win rate, tie count, pair
// count and agreement in the report equals a tally made here from the raw
// verdict files.
func TestBuildRecomputedFromVerdictFiles(t *testing.T) {
	r, l := build(t, "1", "gen-2")
	raw := readRaw(t, l.Eval(spec.Name))
	if got, want := r.Verdicts, len(raw); got != want || want != 2*2*6*(6+3) {
		t.Fatalf("verdicts %d, files %d", got, want)
	}
	type tally struct{ w, l, t, inv int }
	count := map[string]*tally{}
	pairs := map[string]map[string]bool{}
	for _, v := range raw {
		if !v.External {
			continue
		}
		for _, k := range []string{v.Candidate, v.Candidate + "/" + v.Task} {
			if count[k] == nil {
				count[k], pairs[k] = &tally{}, map[string]bool{}
			}
			c := count[k]
			switch {
			case v.Status != "valid":
				c.inv++
				continue
			case v.Winner == "tie":
				c.t++
			case v.WinnerLabel == v.Candidate:
				c.w++
			default:
				c.l++
			}
			pairs[k][v.Task+string(rune(v.Index))] = true
		}
	}
	if len(r.WinRates) != 2 || r.WinRates[0].Model != "gen-1" || r.WinRates[1].Model != "gen-2" {
		t.Fatalf("models %+v", r.WinRates)
	}
	check := func(key string, w judgepairs.WinRate) {
		c := count[key]
		if w.Wins != c.w || w.Losses != c.l || w.Ties != c.t || w.Pairs != len(pairs[key]) {
			t.Errorf("%s: report %d/%d/%d over %d pairs, files %d/%d/%d over %d", key, w.Wins, w.Losses, w.Ties, w.Pairs, c.w, c.l, c.t, len(pairs[key]))
		}
		if want := float64(c.w) / float64(c.w+c.l); w.Rate == nil || math.Abs(*w.Rate-want) > 1e-12 {
			t.Errorf("%s: rate %v, want %v", key, w.Rate, want)
		}
		if w.Low == nil || w.High == nil || *w.Low > *w.Rate || *w.High < *w.Rate {
			t.Errorf("%s: interval %v–%v does not hold %v", key, w.Low, w.High, w.Rate)
		}
	}
	for _, m := range r.WinRates {
		check(m.Model, m.Overall)
		if m.Invalid != count[m.Model].inv {
			t.Errorf("%s invalid %d, files %d", m.Model, m.Invalid, count[m.Model].inv)
		}
		for _, tw := range m.Tasks {
			check(m.Model+"/"+tw.Task, tw.WinRate)
		}
	}
	checkAgreement(t, r, raw)
	if !strings.Contains(r.Unit, "pairs") || !strings.Contains(r.Unit, "not six samples") {
		t.Errorf("unit note %q does not say intervals are at the pair level", r.Unit)
	}
}

// checkAgreement recomputes each self-judge's agreement with the strict
// external plurality of each pair.
func checkAgreement(t *testing.T, r *report.Report, raw []rawVerdict) {
	t.Helper()
	outcome := func(v rawVerdict) string {
		switch {
		case v.Status != "valid":
			return ""
		case v.Winner == "tie":
			return "tie"
		case v.WinnerLabel == v.Candidate:
			return "win"
		}
		return "loss"
	}
	votes := map[string]map[string]int{}
	for _, v := range raw {
		if o := outcome(v); v.External && o != "" {
			k := v.Task + "/" + v.Candidate + "/" + string(rune(v.Index))
			if votes[k] == nil {
				votes[k] = map[string]int{}
			}
			votes[k][o]++
		}
	}
	for _, a := range r.Agreement {
		agree, n := 0, 0
		for _, v := range raw {
			o := outcome(v)
			if v.External || v.Model != a.Judge || o == "" {
				continue
			}
			c := votes[v.Task+"/"+v.Candidate+"/"+string(rune(v.Index))]
			best, top, uniq := "", -1, false
			for _, k := range []string{"win", "loss", "tie"} {
				if c[k] > top {
					best, top, uniq = k, c[k], true
				} else if c[k] == top {
					uniq = false
				}
			}
			if !uniq {
				continue
			}
			n++
			if best == o {
				agree++
			}
		}
		if a.Agree != agree || a.Pairs != n {
			t.Errorf("agreement of %s: report %d/%d, files %d/%d", a.Judge, a.Agree, a.Pairs, agree, n)
		}
	}
	if len(r.Agreement) != 3 {
		t.Errorf("agreement rows %d, want one per rollout model", len(r.Agreement))
	}
}

// TestAuditTokensBlindSpots: the aggregated audit reads every episode's
// ledger (the fixture's base episodes delegate once and hand no code off,
// gen-g episodes delegate g+1 times with a handoff), and the token means
// and blind spots follow the rollout and the verdicts.
func TestAuditTokensBlindSpots(t *testing.T) {
	r, l := build(t)
	n := len(spec.Tasks) * spec.Episodes
	for _, a := range r.Audit {
		wantHandoff := n
		if a.Model == "base" {
			wantHandoff = 0
		}
		if a.N != n || a.Audited != n || a.Delegation != n || a.CodeHandoff != wantHandoff || len(a.AuditErrors) > 0 {
			t.Errorf("audit %s: %+v", a.Model, a)
		}
		if (a.Model == "base") != (a.JudgePreference == nil) || a.PassRate == nil || *a.PassRate != float64(a.Passed)/float64(a.Graded) {
			t.Errorf("audit %s: pass rate %v preference %v", a.Model, a.PassRate, a.JudgePreference)
		}
	}
	raw := readRaw(t, l.Eval(spec.Name))
	var ro struct {
		Runs []struct {
			EpisodeID string `json:"episode_id"`
			Passed    bool   `json:"passed"`
		} `json:"runs"`
	}
	b, _ := os.ReadFile(filepath.Join(l.Eval(spec.Name), "rollout.json"))
	if err := json.Unmarshal(b, &ro); err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, x := range ro.Runs {
		failed[x.EpisodeID] = !x.Passed
	}
	rows, judges := map[string]bool{}, 0
	for _, v := range raw {
		if !v.External || v.Status != "valid" || v.Winner == "tie" {
			continue
		}
		pref := v.Candidate
		if v.WinnerLabel != v.Candidate {
			pref = v.Baseline
		}
		ep := map[string]string{}
		for _, x := range r.Runs {
			if x.Task == v.Task && x.Index == v.Index {
				ep[x.Model] = x.EpisodeID
			}
		}
		if failed[ep[pref]] {
			rows[v.Task+string(rune(v.Index))+v.Candidate+pref] = true
			judges++
		}
	}
	got := 0
	for _, bs := range r.BlindSpots {
		got += len(bs.Judges)
		if !failed[bs.PreferredEpisode] || len(bs.Judges) > bs.Of {
			t.Errorf("blind spot %+v: preferred side passed or judges miscounted", bs)
		}
	}
	if len(rows) == 0 || len(r.BlindSpots) != len(rows) || got != judges {
		t.Errorf("blind spots: report %d rows / %d verdicts, files %d / %d", len(r.BlindSpots), got, len(rows), judges)
	}
	if len(r.Tokens) != 3 || r.Tokens[1].StoredSupervised == nil || r.Tokens[0].StoredSupervised != nil {
		t.Errorf("tokens %+v", r.Tokens)
	}
	if len(r.Generations) != 2 || len(r.Generations[0].Loss) == 0 || len(r.Generations[0].Ranking) != 2 {
		t.Errorf("generations %+v", r.Generations)
	}
	for _, g := range r.Generations {
		draws := 0
		var tokens int64
		for _, c := range g.Exposure {
			draws, tokens = draws+c.Draws, tokens+c.Tokens
		}
		// Up to the kept checkpoint, step 45, of 3 windows of 1000 tokens.
		if g.ExposureStep != 45 || draws != 45*3 || tokens != 45*3*1000 || len(g.Exposure) < 2 {
			t.Errorf("generation %d exposure up to step %d: %+v", g.G, g.ExposureStep, g.Exposure)
		}
	}
	for _, s := range r.Statistics {
		if s.Unit == "" || (s.P == nil && !strings.HasPrefix(s.Detail, "undefined")) {
			t.Errorf("statistic %+v has no unit or p", s)
		}
	}
}

// TestRenderSelfContained: the page loads nothing from anywhere (no
// script, no external URL but the SVG namespace), declares its CSP and
// carries every section and plot.
func TestRenderSelfContained(t *testing.T) {
	r, _ := build(t)
	var buf bytes.Buffer
	if err := report.Render(&buf, r, report.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"<script", "http://", "https://", "<img", "<link", "@import", "url("} {
		if strings.Contains(rest, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	if !strings.Contains(page, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;`) {
		t.Errorf("no CSP meta")
	}
	if got, want := strings.Count(page, `<svg `), 1+2*2+2; got != want {
		t.Errorf("%d plots, want %d", got, want)
	}
	for _, id := range []string{"win-rates", "agreement", "statistics", "generations", "exposure-1", "audit", "tokens", "blind-spots", "episodes"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("no section %s", id)
		}
	}
	if strings.Count(page, `href="file://`) != len(r.Runs) {
		t.Errorf("episode links: %d, want %d", strings.Count(page, `href="file://`), len(r.Runs))
	}
}

// BenchmarkBuild110 builds and renders the report of 110 rollout
// episodes (11 held-out tasks × 5 episodes × base and gen-1), two
// external judges × 3 seeds and two self-judges: 440 verdict files, 110
// ledgers to audit, one generation.
func BenchmarkBuild110(b *testing.B) {
	s := reporttest.Spec{Name: "bench", Models: []string{"base", "gen-1"}, Episodes: 5, Seed: 1, Judges: spec.Judges}
	for i := 0; i < 11; i++ {
		s.Tasks = append(s.Tasks, "task-"+string(rune('a'+i)))
	}
	l, err := reporttest.Write(b.TempDir(), s)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := report.Build(context.Background(), l, report.Request{Eval: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := report.Render(&bytes.Buffer{}, r, report.RenderOptions{}); err != nil {
			b.Fatal(err)
		}
		if len(r.Runs) != 110 {
			b.Fatalf("%d runs", len(r.Runs))
		}
	}
}

// TestBadInputClearError: a damaged verdict file or an unknown model is a
// clear error that names it, and nothing is written.
func TestBadInputClearError(t *testing.T) {
	s := reporttest.Spec{Name: "small", Tasks: []string{"t"}, Models: []string{"base", "gen-1"}, Episodes: 1, Seed: 1, Judges: spec.Judges[:1]}
	l, err := reporttest.Write(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Build(context.Background(), l, report.Request{Eval: "small", Gens: []string{"gen-7"}}); err == nil || !strings.Contains(err.Error(), "gen-7") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := report.Build(context.Background(), l, report.Request{Eval: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown evaluation: %v", err)
	}
	p := judgepairs.Path(l.Eval("small"), "t", 0, "gen-1", "judge-a", 42)
	if err := os.WriteFile(p, []byte(`{"task":"t","winner":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Build(context.Background(), l, report.Request{Eval: "small"}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("damaged verdict: %v", err)
	}
}

// TestIntervalMethodBySize: an evaluation of 3 pairs per model gets the
// exact interval (a bootstrap over 3 agreeing pairs had zero width), one of
// 300 pairs the pair bootstrap; each row and the page name the method.
func TestIntervalMethodBySize(t *testing.T) {
	for _, tt := range []struct {
		episodes int
		method   string
	}{{3, "clopper-pearson"}, {300, "bootstrap"}} {
		s := reporttest.Spec{Name: fmt.Sprint("n", tt.episodes), Tasks: []string{"t"}, Models: []string{"base", "gen-1"},
			Episodes: tt.episodes, Seed: 7, Judges: spec.Judges}
		l, err := reporttest.Write(t.TempDir(), s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.Build(context.Background(), l, report.Request{Eval: s.Name})
		if err != nil {
			t.Fatal(err)
		}
		w := r.WinRates[0].Overall
		if w.Pairs != tt.episodes || w.Method != tt.method || w.Low == nil || w.High == nil {
			t.Fatalf("%d pairs: %+v, want method %s", tt.episodes, w, tt.method)
		}
		if tt.episodes == 3 && *w.High-*w.Low < 0.3 {
			t.Errorf("3 pairs: interval [%v, %v] is narrower than an exact one can be", *w.Low, *w.High)
		}
		var buf bytes.Buffer
		if err := report.Render(&buf, r, report.RenderOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), ">"+tt.method+"<") || !strings.Contains(buf.String(), "Clopper-Pearson") {
			t.Errorf("%d pairs: the page does not name the method %s", tt.episodes, tt.method)
		}
	}
}

// TestReportCosts: the report's per-judge and total cost_usd are the sums
// of the verdict files' cost_usd, each billed input × input price +
// output × output price; unpriced self-judges are counted as such.
func TestReportCosts(t *testing.T) {
	r, l := build(t)
	vs, err := judgepairs.ReadVerdicts(l.Eval(spec.Name))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	total := 0.0
	for _, v := range vs {
		c := 0.0
		if v.External {
			c = (float64(v.PromptTokens)*reporttest.Price.InputPerMTok + float64(v.CompletionTokens)*reporttest.Price.OutputPerMTok) / 1e6
		}
		want[v.Model] += c
		total += c
	}
	if math.Abs(r.CostUSD-total) > 1e-9 || total == 0 {
		t.Errorf("cost_usd %v, want %v", r.CostUSD, total)
	}
	if len(r.Costs) != len(want) {
		t.Fatalf("%d judges costed, want %d", len(r.Costs), len(want))
	}
	for _, c := range r.Costs {
		if math.Abs(c.CostUSD-want[c.Judge]) > 1e-9 || (c.External && c.Unpriced != 0) || (!c.External && c.Unpriced != c.Verdicts) {
			t.Errorf("judge %s: %+v, want cost %v", c.Judge, c, want[c.Judge])
		}
	}
	var page bytes.Buffer
	if err := report.Render(&page, r, report.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `id="cost-table"`) || !strings.Contains(page.String(), fmt.Sprintf("%.4f", total)) {
		t.Error("the page has no cost table with the total")
	}
}
