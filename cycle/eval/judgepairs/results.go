package judgepairs

import (
	"math"
	"sort"

	"github.com/mass-dev/mass/cycle/stats"
)

// UnitNote says what the intervals resample, for every output.
const UnitNote = "win rate = wins / (wins + losses) over verdicts, ties excluded; the interval is an " +
	stats.IntervalMethod + " (six verdicts on one pair are not six samples); each row names its method"

// WinRate is stats.WinRateResult with NaN (no decisive verdict) as null.
type WinRate struct {
	Wins   int      `json:"wins"`
	Losses int      `json:"losses"`
	Ties   int      `json:"ties"`
	Pairs  int      `json:"pairs"`
	Rate   *float64 `json:"rate"`
	Low    *float64 `json:"low"`
	High   *float64 `json:"high"`
	Level  float64  `json:"level"`
	Method string   `json:"method"` // "clopper-pearson" (fewer than stats.MinBootstrapPairs decisive pairs) or "bootstrap"
}

// TaskWin is a candidate's win rate on one task.
type TaskWin struct {
	Task string `json:"task"`
	WinRate
}

// ModelResult is one candidate against the baseline, external judges only.
type ModelResult struct {
	Model   string    `json:"model"`
	Overall WinRate   `json:"overall"`
	Tasks   []TaskWin `json:"tasks"`
	Invalid int       `json:"invalid"` // external verdicts that never parsed
}

// Agreement is a self-judge's agreement with the external majority: on
// the pairs where the external verdicts have a strict plurality (win,
// loss or tie) and the self-judge's verdict is valid, the share where
// they are the same.
type Agreement struct {
	Judge   string   `json:"judge"`
	Agree   int      `json:"agree"`
	Pairs   int      `json:"pairs"`
	Rate    *float64 `json:"rate"`
	Invalid int      `json:"invalid"`
}

// Results is judgement.json, also the job's result.
type Results struct {
	Rollout    string        `json:"rollout"`
	Baseline   string        `json:"baseline"`
	Mode       string        `json:"mode"`
	Judges     []JudgeSpec   `json:"judges"`
	SelfJudges []string      `json:"self_judges"`
	Unit       string        `json:"unit"`
	Verdicts   int           `json:"verdicts"`
	Models     []ModelResult `json:"models"`
	Agreement  []Agreement   `json:"agreement"`
	Costs      []JudgeCost   `json:"costs"`    // per judge model, self-judges included
	CostUSD    float64       `json:"cost_usd"` // all verdicts
}

// Summarize computes the results from verdict files: candidates in the
// order given, tasks sorted, self-judges in the order given.
func Summarize(vs []Verdict, candidates, selfJudges []string) (Results, error) {
	r := Results{Unit: UnitNote, Verdicts: len(vs), Models: []ModelResult{}, Agreement: []Agreement{}, SelfJudges: selfJudges}
	for _, m := range candidates {
		mr, err := modelResult(vs, m)
		if err != nil {
			return r, err
		}
		r.Models = append(r.Models, mr)
	}
	r.Costs, r.CostUSD = Costs(vs)
	maj := Majorities(vs)
	for _, j := range selfJudges {
		r.Agreement = append(r.Agreement, agreement(vs, maj, j))
	}
	return r, nil
}

func modelResult(vs []Verdict, model string) (ModelResult, error) {
	mr := ModelResult{Model: model, Tasks: []TaskWin{}}
	byTask := map[string][]stats.Verdict{}
	var all []stats.Verdict
	for _, v := range vs {
		if !v.External || v.Candidate != model {
			continue
		}
		o, ok := v.Outcome()
		if !ok {
			mr.Invalid++
			continue
		}
		sv := stats.Verdict{Pair: v.Pair(), Outcome: o}
		all = append(all, sv)
		byTask[v.Task] = append(byTask[v.Task], sv)
	}
	var err error
	if mr.Overall, err = winRate(all); err != nil {
		return mr, err
	}
	tasks := make([]string, 0, len(byTask))
	for t := range byTask {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, t := range tasks {
		w, err := winRate(byTask[t])
		if err != nil {
			return mr, err
		}
		mr.Tasks = append(mr.Tasks, TaskWin{Task: t, WinRate: w})
	}
	return mr, nil
}

func winRate(vs []stats.Verdict) (WinRate, error) {
	if len(vs) == 0 {
		return WinRate{Level: 0.95}, nil
	}
	r, err := stats.WinRate(vs, stats.WinRateOptions{})
	if err != nil {
		return WinRate{}, err
	}
	method := "bootstrap"
	if r.Method == stats.ExactMethod {
		method = "clopper-pearson"
	}
	return WinRate{Wins: r.Wins, Losses: r.Losses, Ties: r.Ties, Pairs: r.Pairs, Rate: num(r.Rate), Low: num(r.Low), High: num(r.High),
		Level: r.Level, Method: method}, nil
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// Majorities is the external majority outcome of every pair that has a
// strict plurality among its valid external verdicts.
func Majorities(vs []Verdict) map[string]stats.Outcome {
	counts := map[string]map[stats.Outcome]int{}
	for _, v := range vs {
		if o, ok := v.Outcome(); ok && v.External {
			if counts[v.Pair()] == nil {
				counts[v.Pair()] = map[stats.Outcome]int{}
			}
			counts[v.Pair()][o]++
		}
	}
	out := map[string]stats.Outcome{}
	for p, c := range counts {
		best, n, unique := stats.Outcome(0), -1, false
		for _, o := range []stats.Outcome{stats.Win, stats.Loss, stats.Tie} {
			switch {
			case c[o] > n:
				best, n, unique = o, c[o], true
			case c[o] == n:
				unique = false
			}
		}
		if unique {
			out[p] = best
		}
	}
	return out
}

func agreement(vs []Verdict, maj map[string]stats.Outcome, judgeModel string) Agreement {
	a := Agreement{Judge: judgeModel}
	for _, v := range vs {
		if v.External || v.Model != judgeModel {
			continue
		}
		o, ok := v.Outcome()
		if !ok {
			a.Invalid++
			continue
		}
		m, has := maj[v.Pair()]
		if !has {
			continue
		}
		a.Pairs++
		if o == m {
			a.Agree++
		}
	}
	if a.Pairs > 0 {
		a.Rate = num(float64(a.Agree) / float64(a.Pairs))
	}
	return a
}
