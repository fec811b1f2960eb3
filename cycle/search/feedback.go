package search

import (
	"fmt"
	"os"
	"strings"

	"github.com/mass-dev/mass/cycle/judge"
)

// Caps of the optimizer's feedback sections.
const (
	rationaleChars = 1200
	diffChars      = 6000
	maxDiffs       = 6
)

func (r *runner) optimizerInput(current int, latest EpisodeResult) (OptimizerInput, error) {
	d := r.decide()
	r.mu.Lock()
	champ, hist := r.champion, append(append([]Comparison(nil), r.history...), r.arbitrations...)
	r.mu.Unlock()
	read := func(k int) (string, error) {
		b, err := os.ReadFile(r.vers.Path(k))
		if err != nil {
			return "", fmt.Errorf("read design v%d: %w", k, err)
		}
		return string(b), nil
	}
	in := OptimizerInput{Task: strings.TrimSpace(r.cfg.Task.Prompt), ChampionVersion: champ, CurrentVersion: current,
		Status: RedactedStatus(latest), History: historyText(hist), Scoreboard: Scoreboard(verdicts(hist), d.Current, d.Retained)}
	var err error
	if in.V0, err = read(0); err != nil {
		return in, err
	}
	if in.Champion, err = read(champ); err != nil {
		return in, err
	}
	if in.Current, err = read(current); err != nil {
		return in, err
	}
	in.Evidence = "(no workspace export)"
	if latest.Export != "" {
		if f, err := os.Open(latest.Export); err == nil {
			b, berr := judge.Build(f, r.cfg.Task.Required)
			f.Close()
			if berr == nil {
				in.Evidence = b.Render()
			}
		}
	}
	in.Diffs = r.diffs()
	return in, nil
}

func historyText(hist []Comparison) string {
	if len(hist) == 0 {
		return "(none yet)\n"
	}
	var b strings.Builder
	for _, c := range hist {
		rat := c.Rationale
		if len(rat) > rationaleChars {
			rat = rat[:rationaleChars] + "…"
		}
		fmt.Fprintf(&b, "- iteration %d: %s vs %s (%s): %s [wins %d, losses %d, ties %d, invalid %d]\n  rationale: %s\n",
			c.Iteration, c.Candidate, c.Opponent, c.Against, c.Outcome, c.Wins, c.Losses, c.Ties, c.Invalid, rat)
	}
	return b.String()
}

// Scoreboard is the reference's one-line record against the baseline,
// "Record vs no_harness: v0 W★ · v1 L · v2 T", versions 0..current, the
// retained (proven) champion starred; ? marks a version without a verdict.
func Scoreboard(rows []Verdict, current int, retained *int) string {
	base, _, _ := verdictMaps(rows, nil)
	marks := map[string]string{WinB: "W", WinA: "L", WinTie: "T"}
	parts := make([]string, 0, current+1)
	for k := 0; k <= current; k++ {
		mark := "?"
		if w, ok := base[k]; ok && marks[w] != "" {
			mark = marks[w]
		}
		if retained != nil && *retained == k {
			mark += "★"
		}
		parts = append(parts, fmt.Sprintf("v%d %s", k, mark))
	}
	return "Record vs no_harness: " + strings.Join(parts, " · ")
}

// diffs renders unified diffs between consecutive stored versions (the
// last maxDiffs of them).
func (r *runner) diffs() string {
	ks, err := r.vers.List()
	if err != nil || len(ks) < 2 {
		return "(only one version so far)\n"
	}
	start := max(1, len(ks)-maxDiffs)
	var b strings.Builder
	for i := start; i < len(ks); i++ {
		x, errX := os.ReadFile(r.vers.Path(ks[i-1]))
		y, errY := os.ReadFile(r.vers.Path(ks[i]))
		if errX != nil || errY != nil {
			continue
		}
		d := Unified(fmt.Sprintf("v%d", ks[i-1]), fmt.Sprintf("v%d", ks[i]), string(x), string(y))
		if len(d) > diffChars {
			d = d[:diffChars] + "\n… (diff truncated)\n"
		}
		b.WriteString(d)
	}
	return b.String()
}
