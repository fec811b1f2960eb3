package search

import (
	"fmt"
	"os"
	"strings"

	"github.com/mass-dev/mass/cycle/judge"
)

// optimizerInput gathers what the optimizer is shown at the step from
// v(current), as the reference's pipeline does at that step: at step 0 no
// verdict exists yet for it (it judges v0 only at step 1, and runs step 0
// without --judge-vs-baseline), so the history, best design, v0 root,
// scoreboard and baseline framing appear from step 1 on.
func (r *runner) optimizerInput(current int, latest EpisodeResult) (OptimizerInput, error) {
	o := r.cfg.Opts
	baseline := r.cfg.Rule != RuleAdjacent && current >= 1
	in := OptimizerInput{TaskText: r.taskText(), Current: current, Baseline: baseline, Opts: o,
		Evidence: r.evidence(current, latest), Metadata: ExecutionMetadata(latest, r.priorEpisodes(current), current)}
	var err error
	if in.CurrentDesign, err = r.designFile(current); err != nil || current == 0 {
		return in, err
	}
	d := r.decide()
	r.mu.Lock()
	in.History = append([]Comparison(nil), r.history...)
	arbs := append([]Comparison(nil), r.arbitrations...)
	r.mu.Unlock()
	proven := !baseline || d.BeatsReference
	var star *int
	if o.IncludeBestDesign && proven {
		champ := d.Champion
		star = &champ
		if champ != current {
			if err := r.bestSection(&in, champ, arbs); err != nil {
				return in, err
			}
		}
	}
	if o.HistoryDesignDiffs {
		in.Diffs = historyDiffs(in.History, baseline, r.vers.Path)
	}
	if baseline {
		in.Scoreboard = Scoreboard(verdicts(in.History), current, star)
	}
	if o.IncludeV0Design && (in.Best == nil || in.BestVersion != 0) {
		v0, err := r.designFile(0)
		if err != nil {
			return in, err
		}
		in.V0 = &v0
	}
	return in, nil
}

// bestSection shows the champion beside the current design, with the
// rationale of the verdict the current design lost: the arbitration when
// there is one, else its own baseline (or adjacent) comparison.
func (r *runner) bestSection(in *OptimizerInput, champ int, arbs []Comparison) error {
	best, err := r.designFile(champ)
	if err != nil {
		return err
	}
	in.Best, in.BestVersion = &best, champ
	var row *Comparison
	for i := len(arbs) - 1; i >= 0; i-- {
		if arbs[i].Key == ArbitrationKey(champ, in.Current) {
			row = &arbs[i]
			break
		}
	}
	if in.Baseline {
		in.BestCase = bestChampionOnlyWin
		if row != nil {
			in.BestCase = bestBothWin
		}
	}
	if row == nil {
		key := BaselineKey(in.Current)
		if !in.Baseline {
			key = AdjacentKey(in.Current)
		}
		for i := len(in.History) - 1; i >= 0; i-- {
			if in.History[i].Key == key {
				row = &in.History[i]
				break
			}
		}
	}
	if row != nil {
		in.BestRationale = row.Rationale
	}
	return nil
}

// designFile is a stored design as the reference reads it (trimmed).
func (r *runner) designFile(k int) (string, error) {
	b, err := os.ReadFile(r.vers.Path(k))
	if err != nil {
		return "", fmt.Errorf("read design v%d: %w", k, err)
	}
	return strings.TrimFunc(string(b), pySpace), nil
}

// taskText is the task as the optimizer reads it: the template's text
// before the design, else the task prompt, read the same way.
func (r *runner) taskText() string {
	if r.cfg.Template != nil {
		return r.cfg.Template.TaskText()
	}
	return taskText(r.cfg.Task.Prompt)
}

// judgeTask is the task as the judge reads it: with a query template, the
// reference's task_text_for_eval (the text before the design, read as
// taskText reads it), not the spec's bare prompt.
func (r *runner) judgeTask() judge.Task {
	t := r.cfg.Task
	if r.cfg.Template != nil {
		t.Prompt = r.cfg.Template.TaskText()
	}
	return t
}

// queryName is the reference's query{q}_ourTeam, else the task id.
func (r *runner) queryName() string {
	if r.cfg.ReferenceID != "" {
		return "query" + r.cfg.ReferenceID + "_ourTeam"
	}
	return r.cfg.TaskID
}

// evidence is section 2: the workspace bundle of v(current)'s episode,
// then (unless omit_full_results_json) every results/*.json file.
func (r *runner) evidence(current int, latest EpisodeResult) string {
	body, app := "(no workspace export)", "- `results/` directory is missing."
	if latest.Export != "" {
		if f, err := os.Open(latest.Export); err == nil {
			b, berr := judge.Build(f, r.cfg.Task.Required)
			f.Close()
			if berr == nil {
				body = b.Render()
			}
		}
		var err error
		if app, err = ResultsAppendix(latest.Export, r.queryName(), r.cfg.Opts.ResultsJSONMaxChars, r.cfg.Opts.ResultsJSONTotalMaxChars); err != nil {
			app = fmt.Sprintf("<read error: %v>", err)
		}
	}
	ws := fmt.Sprintf("# Workspace for current iteration (multi-agent-design-v%d)\n\n%s", current, strings.TrimRight(body, "\n"))
	if r.cfg.Opts.OmitFullResultsJSON {
		return ws
	}
	return ws + "\n\n# Full JSON artifacts under results/\n" + app
}

// priorEpisodes are the finished episodes of v0..v(current-1).
func (r *runner) priorEpisodes(current int) map[int]EpisodeResult {
	out := map[int]EpisodeResult{}
	for k := 0; k < current; k++ {
		if sl, ok := r.slots.get(slotName(k)); ok && sl.Result != nil {
			out[k] = *sl.Result
		}
	}
	return out
}

// Scoreboard is the reference's one-line record against the baseline,
// "Record vs no_harness: v0 W★ · v1 L · v2 T", versions 0..current, the
// proven champion starred (star nil: none); ? marks a version without a
// verdict.
func Scoreboard(rows []Verdict, current int, star *int) string {
	base, _, _ := verdictMaps(rows, nil)
	marks := map[string]string{WinB: "W", WinA: "L", WinTie: "T"}
	parts := make([]string, 0, current+1)
	for k := 0; k <= current; k++ {
		mark := "?"
		if w, ok := base[k]; ok && marks[w] != "" {
			mark = marks[w]
		}
		if star != nil && *star == k {
			mark += "★"
		}
		parts = append(parts, fmt.Sprintf("v%d %s", k, mark))
	}
	return "Record vs no_harness: " + strings.Join(parts, " · ")
}
