package report

import (
	"fmt"
	"math"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/cycle/stats"
)

// Units of the p-values, stated beside each.
const (
	UnitWelch  = "episodes: one sample is one rollout episode's grader score (two-sided Welch t-test over trial scores)"
	UnitFisher = "episodes: grader pass/fail counts of the two models (two-sided Fisher exact test)"
	UnitSign   = "tasks: one sample is a task's mean grader score per model (exact two-sided sign test, tied tasks dropped)"
)

func (r *Report) tokens(ro rollout.Summary) []TokenRow {
	rows := []TokenRow{}
	for _, m := range append([]string{r.Baseline}, r.Models...) {
		row := TokenRow{Model: m}
		var out, prompt, sc float64
		scored := 0
		for _, x := range ro.Runs {
			if x.Model != m || x.Error != "" {
				continue
			}
			row.Episodes++
			out += float64(x.CompletionTokens)
			prompt += float64(x.PromptTokens)
			if s, ok := score(x); ok {
				sc += s
				scored++
			}
		}
		if row.Episodes > 0 {
			row.OutputPerEpisode, row.PromptPerEpisode = out/float64(row.Episodes), prompt/float64(row.Episodes)
		}
		if scored > 0 {
			mean := sc / float64(scored)
			row.MeanScore = &mean
			if row.OutputPerEpisode > 0 {
				row.ScorePer1kOutput = finite(1000 * mean / row.OutputPerEpisode)
			}
		}
		for _, g := range r.Generations {
			if g.Model == m {
				st, pr := g.Tokens.StoredSupervised, g.Tokens.ProcessedSupervised
				row.StoredSupervised, row.ProcessedSupervised = &st, &pr
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// statistics tests each candidate against the baseline on the grader's
// scores, each test with its unit.
func (r *Report) statistics(ro rollout.Summary) []Stat {
	out := []Stat{}
	base := scoresByTask(ro, r.Baseline)
	for _, m := range r.Models {
		cand := scoresByTask(ro, m)
		var x, y [][]float64
		var fx, fy []float64
		for _, t := range ro.Tasks {
			fx, fy = append(fx, cand[t]...), append(fy, base[t]...)
			if len(cand[t]) > 0 && len(base[t]) > 0 {
				x, y = append(x, cand[t]), append(y, base[t])
			}
		}
		w := Stat{Model: m, Test: "welch", Unit: UnitWelch}
		if t, err := stats.Welch(fx, fy); err != nil {
			w.Detail = "undefined: " + err.Error()
		} else {
			w.Statistic, w.P = finite(t.T), finite(t.P)
			w.Detail = fmt.Sprintf("t = %.4g, df = %.4g, n = %d vs %d", t.T, t.DF, len(fx), len(fy))
		}
		pc, fc := passFail(ro, m)
		pb, fb := passFail(ro, r.Baseline)
		f := Stat{Model: m, Test: "fisher", Unit: UnitFisher}
		if fr, err := stats.FisherExact(pc, fc, pb, fb); err != nil {
			f.Detail = "undefined: " + err.Error()
		} else {
			f.Statistic, f.P = finite(fr.OddsRatio), finite(fr.P)
			odds := "undefined (an empty row or column)"
			if !math.IsNaN(fr.OddsRatio) {
				odds = fmt.Sprintf("%.4g", fr.OddsRatio)
			}
			f.Detail = fmt.Sprintf("table [[%d passed, %d failed] (%s), [%d, %d] (%s)], odds ratio %s", pc, fc, m, pb, fb, r.Baseline, odds)
		}
		s := Stat{Model: m, Test: "sign", Unit: UnitSign}
		if st, err := stats.SignTaskMeans(x, y); err != nil {
			s.Detail = "undefined: " + err.Error()
		} else {
			s.P = finite(st.P)
			s.Detail = fmt.Sprintf("%d of %d tasks better (%d tied, dropped)", st.Positive, st.N, st.Dropped)
		}
		out = append(out, w, f, s)
	}
	return out
}

func scoresByTask(ro rollout.Summary, model string) map[string][]float64 {
	out := map[string][]float64{}
	for _, x := range ro.Runs {
		if s, ok := score(x); ok && x.Model == model {
			out[x.Task] = append(out[x.Task], s)
		}
	}
	return out
}

// passFail counts a model's graded runs that passed and failed.
func passFail(ro rollout.Summary, model string) (passed, failed int) {
	for _, x := range ro.Runs {
		switch {
		case x.Model != model || !x.Graded || x.Error != "":
		case x.Passed:
			passed++
		default:
			failed++
		}
	}
	return passed, failed
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// blindSpots lists, per pair, the external verdicts that preferred a side
// whose grader ran and failed.
func blindSpots(vs []judgepairs.Verdict, ro rollout.Summary) []BlindSpot {
	run := map[string]rollout.Run{}
	for _, x := range ro.Runs {
		run[x.EpisodeID] = x
	}
	type key struct{ pair, preferred string }
	byKey := map[key]*BlindSpot{}
	valid := map[string]int{}
	var order []key
	for _, v := range vs {
		o, ok := v.Outcome()
		if !ok || !v.External {
			continue
		}
		valid[v.Pair()]++
		if o == stats.Tie {
			continue
		}
		pe, oe, pm, om := v.CandidateEpisode, v.BaselineEpisode, v.Candidate, v.Baseline
		if o == stats.Loss {
			pe, oe, pm, om = oe, pe, om, pm
		}
		p, other := run[pe], run[oe]
		if !p.Graded || p.Passed {
			continue
		}
		k := key{v.Pair(), pm}
		if byKey[k] == nil {
			byKey[k] = &BlindSpot{Task: v.Task, Index: v.Index, Preferred: pm, PreferredEpisode: pe, Other: om, OtherEpisode: oe,
				OtherPassed: other.Graded && other.Passed, Judges: []string{}}
			order = append(order, k)
		}
		byKey[k].Judges = append(byKey[k].Judges, fmt.Sprintf("%s@%d", v.Model, v.Seed))
	}
	out := []BlindSpot{}
	for _, k := range order {
		b := byKey[k]
		b.Of = valid[k.pair]
		out = append(out, *b)
	}
	return out
}
