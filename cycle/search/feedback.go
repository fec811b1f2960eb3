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
	r.mu.Lock()
	champ, hist := r.champion, append([]Comparison(nil), r.history...)
	r.mu.Unlock()
	read := func(k int) (string, error) {
		b, err := os.ReadFile(r.vers.Path(k))
		if err != nil {
			return "", fmt.Errorf("read design v%d: %w", k, err)
		}
		return string(b), nil
	}
	in := OptimizerInput{Task: strings.TrimSpace(r.cfg.Task.Prompt), ChampionVersion: champ, CurrentVersion: current,
		Status: RedactedStatus(latest), History: historyText(hist), Scoreboard: scoreboard(hist, champ)}
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

func scoreboard(hist []Comparison, champ int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "champion: v%d\n", champ)
	for _, c := range hist {
		fmt.Fprintf(&b, "%s vs %s: %s\n", c.Candidate, c.Opponent, c.Outcome)
	}
	return b.String()
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
