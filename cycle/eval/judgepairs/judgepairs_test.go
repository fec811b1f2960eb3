package judgepairs

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/cycle/stats"
)

// prefer judges like an evaluator that always prefers the candidate on
// even indexes and calls odd ones a tie, shown on the sides judge.Swapped
// picks.
type prefer struct{ calls atomic.Int64 }

func (p *prefer) Judge(_ context.Context, r Request) (judge.Result, error) {
	p.calls.Add(1)
	res := judge.Result{Key: r.Key, Model: r.Model, Seed: r.Seed, Mode: r.Mode, A: r.Candidate, B: r.Baseline, Status: judge.StatusValid, Rationale: "x"}
	if judge.Swapped(r.Seed, r.Key) {
		res.A, res.B, res.Swapped = r.Baseline, r.Candidate, true
	}
	switch {
	case r.Model == "gen-1" && r.Index == 0:
		res.Winner, res.WinnerLabel = judge.WinnerB, res.B // the self-judge disagrees once
		if res.B != r.Baseline {
			res.Winner, res.WinnerLabel = judge.WinnerA, res.A
		}
	case r.Index%2 == 0:
		res.WinnerLabel = r.Candidate
		res.Winner = map[bool]string{true: judge.WinnerA, false: judge.WinnerB}[res.A == r.Candidate]
	default:
		res.Winner = judge.WinnerTie
	}
	return res, nil
}

func testRollout() rollout.Summary {
	ro := rollout.Summary{Name: "ev", Tasks: []string{"t"}, Models: []string{"base", "gen-1"}, Episodes: 4}
	for _, m := range ro.Models {
		for i := 0; i < 4; i++ {
			ro.Runs = append(ro.Runs, rollout.Run{Task: "t", Model: m, Index: i, EpisodeResult: rollout.EpisodeResult{EpisodeID: m + string(rune('0'+i))}})
		}
	}
	return ro
}

// TestExecuteWritesAndResumes: every pair gets one verdict file per
// external judge seed and per self-judge; a second run judges nothing
// again; the results follow the files.
func TestExecuteWritesAndResumes(t *testing.T) {
	dir := t.TempDir()
	p, _ := ParseParams([]byte(`{"rollout":"ev"}`))
	j := &prefer{}
	c := Config{Dir: dir, Rollout: testRollout(), Params: p,
		Parts: Parts{Judges: []JudgeSpec{{Model: "ja", Seeds: []int64{42, 43, 44}}, {Model: "jb", Seeds: []int64{42, 43, 44}}}, Judger: j}}
	res, err := Execute(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := j.calls.Load(), int64(4*(6+2)); got != want {
		t.Fatalf("%d judgments, want %d", got, want)
	}
	if _, err := Execute(context.Background(), c); err != nil || j.calls.Load() != 32 {
		t.Fatalf("resume judged again: %d calls, %v", j.calls.Load(), err)
	}
	c.Params.Mode = ModeAgent
	if _, err := Execute(context.Background(), c); err == nil || !strings.Contains(err.Error(), "evaluator mode bundle") {
		t.Errorf("a rerun in another mode reused the verdicts: %v", err)
	}
	o := res.Models[0].Overall
	if o.Wins != 12 || o.Losses != 0 || o.Ties != 12 || o.Pairs != 4 || o.Rate == nil || *o.Rate != 1 {
		t.Errorf("overall %+v", o)
	}
	if !strings.Contains(res.Unit, "pair") {
		t.Errorf("unit %q", res.Unit)
	}
	ag := map[string]Agreement{}
	for _, a := range res.Agreement {
		ag[a.Judge] = a
	}
	if a := ag["base"]; a.Agree != 4 || a.Pairs != 4 {
		t.Errorf("base agreement %+v", a)
	}
	if a := ag["gen-1"]; a.Agree != 3 || a.Pairs != 4 {
		t.Errorf("gen-1 agreement %+v", a)
	}
	vs, err := ReadVerdicts(dir)
	if err != nil || len(vs) != 32 {
		t.Fatalf("%d verdicts, %v", len(vs), err)
	}
	swapped := 0
	for _, v := range vs {
		if v.Swapped {
			swapped++
		}
	}
	if swapped == 0 || swapped == len(vs) {
		t.Errorf("sides never vary with the seed: %d of %d swapped", swapped, len(vs))
	}
}

func TestPlanRefuses(t *testing.T) {
	p, _ := ParseParams([]byte(`{"rollout":"ev"}`))
	for name, c := range map[string]Config{
		"no judges":         {Rollout: testRollout(), Params: p},
		"judge in rollout":  {Rollout: testRollout(), Params: p, Parts: Parts{Judges: []JudgeSpec{{Model: "gen-1", Seeds: []int64{1}}}}},
		"unknown baseline":  {Rollout: testRollout(), Params: Params{Rollout: "ev", Baseline: "gen-9"}, Parts: Parts{Judges: []JudgeSpec{{Model: "j", Seeds: []int64{1}}}}},
		"unknown judge":     {Rollout: testRollout(), Params: Params{Rollout: "ev", Judges: []string{"zz"}}, Parts: Parts{Judges: []JudgeSpec{{Model: "j", Seeds: []int64{1}}}}},
		"foreign selfjudge": {Rollout: testRollout(), Params: Params{Rollout: "ev", SelfJudges: []string{"j"}}, Parts: Parts{Judges: []JudgeSpec{{Model: "j", Seeds: []int64{1}}}}},
	} {
		if _, _, _, err := c.plan(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMajorities(t *testing.T) {
	v := func(pair int, ext bool, o string) Verdict {
		x := Verdict{Task: "t", Index: pair, Candidate: "c", Baseline: "b", External: ext, Result: judge.Result{Model: "m", Status: judge.StatusValid}}
		switch o {
		case "w":
			x.WinnerLabel = "c"
		case "l":
			x.WinnerLabel = "b"
		case "t":
			x.Winner = judge.WinnerTie
		case "i":
			x.Status = judge.StatusInvalid
		}
		return x
	}
	m := Majorities([]Verdict{v(0, true, "w"), v(0, true, "w"), v(0, true, "l"), v(1, true, "w"), v(1, true, "l"),
		v(2, true, "t"), v(2, true, "i"), v(3, false, "w")})
	if len(m) != 2 || m[PairID("t", 0, "c")] != stats.Win || m[PairID("t", 2, "c")] != stats.Tie {
		t.Errorf("majorities %v: want pair 0 win, pair 2 tie, pair 1 split, pair 3 self only", m)
	}
}

func FuzzParseVerdict(f *testing.F) {
	f.Add([]byte(`{"task":"t","index":1,"candidate":"c","baseline":"b","model":"j","seed":42,"status":"valid","winner":"A","winner_label":"c","external":true}`))
	f.Add([]byte(`{"task":"t","candidate":"c","baseline":"c","model":"j"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVerdict(b)
		if err != nil {
			return
		}
		if v.Task == "" || v.Candidate == v.Baseline || v.Index < 0 {
			t.Fatalf("accepted %+v", v)
		}
		v.Outcome()
		_ = v.Pair()
	})
}

func FuzzParseParams(f *testing.F) {
	f.Add([]byte(`{"rollout":"ev","mode":"agent","judges":["a"]}`))
	f.Add([]byte(`{"rollout":"../x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseParams(b)
		if err != nil {
			return
		}
		if p.Mode != ModeBundle && p.Mode != ModeAgent || p.Concurrency < 1 || p.Rollout == "" || strings.Contains(p.Rollout, "/") {
			t.Fatalf("accepted %+v", p)
		}
	})
}
