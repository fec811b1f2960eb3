// Package reporttest writes an evaluation into a data directory the way
// massd's jobs do — a rollout summary, verdict files in cycle/judge's
// result format, episode records with a real hash-chained ledger, a
// generation summary and mass-train's metrics — for the report's tests,
// the browser check and the build benchmark. Outcomes follow a seeded
// generator, never a fixed answer, so a test recomputes them from disk.
package reporttest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/rank"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/generationfmt"
)

// Spec is the shape of the evaluation to write.
type Spec struct {
	Name     string
	Tasks    []string
	Models   []string // baseline first; "gen-<g>" models get a generation directory
	Episodes int
	Judges   []judgepairs.JudgeSpec
	Seed     uint64
}

// Write writes the evaluation under root and returns its layout.
func Write(root string, s Spec) (datadir.Layout, error) {
	l := datadir.New(root)
	rng := rand.New(rand.NewPCG(s.Seed, 7))
	ro := rollout.Summary{Name: s.Name, Dir: l.Eval(s.Name), Tasks: s.Tasks, Models: s.Models, Episodes: s.Episodes, Runs: []rollout.Run{}}
	for ti, t := range s.Tasks {
		for mi, m := range s.Models {
			for i := 0; i < s.Episodes; i++ {
				id := fmt.Sprintf("ep-%02d%02d%04d", ti, mi, i)
				passed := rng.Float64() < 0.4+0.2*float64(mi)
				score := map[bool]float64{true: 1, false: 0}[passed]
				if err := writeEpisode(l.Episode(id), id, mi+1, rng); err != nil {
					return l, err
				}
				ro.Runs = append(ro.Runs, rollout.Run{Task: t, Model: m, Index: i, Seed: rollout.SeedFor(0, t, i),
					EpisodeResult: rollout.EpisodeResult{EpisodeID: id, Exit: "completed", Success: true, Graded: true, Passed: passed, Score: &score,
						PromptTokens: int64(4000 + rng.IntN(2000)), CompletionTokens: int64(800 + 300*mi + rng.IntN(400))}})
			}
		}
	}
	if err := generation.WriteJSON(filepath.Join(l.Eval(s.Name), rollout.SummaryFile), ro); err != nil {
		return l, err
	}
	if err := writeVerdicts(l, s, ro, rng); err != nil {
		return l, err
	}
	for g, m := range s.Models {
		if g > 0 {
			if err := writeGeneration(l, g, m, s.Models[g-1], s.Tasks, rng); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// Price is what the fixture's external judges cost (USD per million tokens).
var Price = model.Price{InputPerMTok: 5, OutputPerMTok: 25}

func writeVerdicts(l datadir.Layout, s Spec, ro rollout.Summary, rng *rand.Rand) error {
	dir := l.Eval(s.Name)
	for _, pr := range judgepairs.Pairs(ro, s.Models[0]) {
		mi := indexOf(s.Models, pr.Candidate)
		var judges []judgepairs.JudgeSpec
		judges = append(judges, s.Judges...)
		for _, m := range s.Models {
			judges = append(judges, judgepairs.JudgeSpec{Model: m, Seeds: []int64{judgepairs.DefaultSelfSeed}})
		}
		for ji, j := range judges {
			for _, seed := range j.Seeds {
				key := judgepairs.PairID(pr.Task, pr.Index, pr.Candidate)
				res := judge.Result{Key: key, Model: j.Model, Seed: seed, Mode: "bundle", A: pr.Candidate, B: pr.Baseline,
					Status: judge.StatusValid, Rationale: "[fixture] compared the evidence bundles"}
				if judge.Swapped(seed, key) {
					res.A, res.B, res.Swapped = pr.Baseline, pr.Candidate, true
				}
				u := rng.Float64()
				switch {
				case u < 0.03:
					res.Status, res.Winner = judge.StatusInvalid, judge.StatusInvalid
				case u < 0.15:
					res.Winner = judge.WinnerTie
				case u < 0.45+0.1*float64(mi):
					res.WinnerLabel = pr.Candidate
				default:
					res.WinnerLabel = pr.Baseline
				}
				if res.WinnerLabel != "" {
					res.Winner = map[bool]string{true: judge.WinnerA, false: judge.WinnerB}[res.WinnerLabel == res.A]
				}
				res.Attempts, res.PromptTokens, res.CompletionTokens = 1, int64(20000+1000*ji), 400+seed
				v := judgepairs.Verdict{Task: pr.Task, Index: pr.Index, Candidate: pr.Candidate, Baseline: pr.Baseline,
					CandidateEpisode: pr.CandidateEp, BaselineEpisode: pr.BaseEp, External: ji < len(s.Judges), Result: res}
				if v.External { // the external judges are priced, the self-judges (local) are not
					v.Price = &Price
					v.CostUSD = Price.Cost(v.PromptTokens, v.CompletionTokens)
				}
				if err := generation.WriteJSON(judgepairs.Path(dir, pr.Task, pr.Index, pr.Candidate, j.Model, seed), v); err != nil {
					return err
				}
			}
		}
	}
	res := judgepairs.Results{Rollout: s.Name, Baseline: s.Models[0], Mode: "bundle", Judges: s.Judges}
	return generation.WriteJSON(filepath.Join(dir, judgepairs.ResultsFile), res)
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// writeEpisode writes an episode record whose ledger shows `team`
// delegations and, with two or more, a code handoff.
func writeEpisode(dir, id string, team int, rng *rand.Rand) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	w, err := ledger.Create(filepath.Join(dir, "ledger.jsonl"), id)
	if err != nil {
		return err
	}
	ts := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	add := func(r ledger.Record) error {
		ts = ts.Add(time.Second)
		r.TS = ts
		_, err := w.Append(r)
		return err
	}
	det := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	recs := []ledger.Record{{Agent: "orchestrator", Tool: ledger.ToolAgentStart, OK: true, Detail: det(map[string]any{"role": "orchestrator", "parent": ""})}}
	for k := 1; k <= team; k++ {
		wk := fmt.Sprintf("worker-%d", k)
		recs = append(recs, ledger.Record{Agent: wk, Tool: ledger.ToolAgentStart, OK: true, Detail: det(map[string]any{"role": "worker", "parent": "orchestrator"})})
		if k == 1 {
			recs = append(recs, ledger.Record{Agent: wk, Tool: "write_file", Path: "/workspace/dryrun/hello.py", OK: true, Bytes: 40,
				SHA256After: fmt.Sprintf("%064x", rng.Uint64()), Detail: det(map[string]any{"created": true})})
		} else {
			recs = append(recs, ledger.Record{Agent: wk, Tool: "read_file", Path: "/workspace/dryrun/hello.py", OK: true})
		}
		recs = append(recs, ledger.Record{Agent: wk, Tool: ledger.ToolAgentFinish, OK: true, Detail: det(map[string]any{"stop": "final", "changed": []string{}})},
			ledger.Record{Agent: "orchestrator", Tool: "agent", OK: true, Detail: det(map[string]any{"subagent": wk})})
	}
	recs = append(recs, ledger.Record{Agent: "orchestrator", Tool: ledger.ToolAgentFinish, OK: true, Detail: det(map[string]any{"stop": "final", "changed": []string{}})})
	for _, r := range recs {
		if err := add(r); err != nil {
			return err
		}
	}
	return w.Close()
}

func writeGeneration(l datadir.Layout, g int, model, parent string, tasks []string, rng *rand.Rand) error {
	dir := l.Generation(fmt.Sprint(g))
	s := generationfmt.Summary{Generation: g, Dir: dir, Model: model, Parent: parent, Status: generationfmt.StatusDone,
		Tokens:   generationfmt.Tokens{Generated: int64(1e6 + rng.IntN(1e5)), StoredSupervised: int64(2e5 + rng.IntN(1e4)), ProcessedSupervised: int64(3e5 + rng.IntN(1e4))},
		Training: &generationfmt.Training{Steps: 60, BestStep: 45, BestValLoss: 1.2}}
	for _, t := range tasks {
		var ids []string
		var ms []rank.Match
		for i := 0; i < 18; i++ {
			ids = append(ids, fmt.Sprintf("%s-t%02d", t, i))
		}
		pairs, _ := rank.Ring(ids, 6, rng.Uint64())
		for _, p := range pairs {
			ms = append(ms, rank.Match{A: p.A, B: p.B, Winner: []rank.Outcome{rank.AWins, rank.BWins, rank.Tie}[rng.IntN(3)]})
		}
		scores, err := rank.Fit(ids, ms, rank.Options{})
		if err != nil {
			return err
		}
		ts := generationfmt.TaskSummary{ID: t, Episodes: 18, Successful: 18, Judgments: len(ms), Train: ids[:15], Val: ids[15:16]}
		for _, sc := range scores {
			ts.Ranking = append(ts.Ranking, generationfmt.RankEntry{ID: sc.ID, Score: sc.Score, Rank: sc.Rank})
		}
		s.Tasks = append(s.Tasks, ts)
	}
	if err := generation.WriteJSON(filepath.Join(dir, generationfmt.SummaryFile), s); err != nil {
		return err
	}
	var b []byte
	loss := 2.5
	for step := 1; step <= 60; step++ {
		loss *= 0.97 + 0.02*rng.Float64()
		b = fmt.Appendf(b, `{"step":%d,"loss":%.4f,"processed_supervised_tokens":%d,"elapsed_s":1,"steps":60}`+"\n", step, loss, step*5000)
		if step%15 == 0 {
			b = fmt.Appendf(b, `{"step":%d,"val_loss":%.4f,"processed_supervised_tokens":%d,"elapsed_s":1,"steps":60}`+"\n", step, loss*1.1, step*5000)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "train"), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "train", "metrics.jsonl"), b, 0o640); err != nil {
		return err
	}
	return writeExposure(filepath.Join(dir, "train", "exposure.jsonl"), tasks, rng)
}

// writeExposure writes mass-train's exposure.jsonl of 60 steps of 3
// windows each, drawn over the tasks and two roles.
func writeExposure(p string, tasks []string, rng *rand.Rand) error {
	var b []byte
	for step := 1; step <= 60; step++ {
		b = fmt.Appendf(b, `{"step":%d,"rows":[`, step)
		for i := 0; i < 3; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			role := []string{"orchestrator", "worker"}[rng.IntN(2)]
			b = fmt.Appendf(b, `{"index":%d,"task":%q,"role":%q,"episode":"ep","thread":"t","segment":0,"window":0,"tokens":1000}`,
				rng.IntN(40), tasks[rng.IntN(len(tasks))], role)
		}
		b = append(b, "]}\n"...)
	}
	return os.WriteFile(p, b, 0o640)
}
