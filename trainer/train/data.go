package train

import (
	"context"
	"fmt"
	"os"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/sft"
)

// ReadRows reads SFT windows from a rows.jsonl file (docs/formats.md) or a
// dataset folder built by massctl data build (windows.bin or rows.jsonl).
func ReadRows(path string) ([]sft.Row, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		rows, _, err := sft.ReadDataset(path)
		if err != nil {
			return nil, err
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("dataset %s holds no windows", path)
		}
		return rows, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open rows: %w", err)
	}
	defer f.Close()
	rows, err := sft.ReadRows(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s holds no windows", path)
	}
	return rows, nil
}

// Window converts a row.
func Window(r sft.Row) trainer.Window {
	return trainer.Window{InputIDs: r.InputIDs, Labels: r.Labels}
}

// EvalResult is what `mass-train eval --json` prints.
type EvalResult struct {
	Loss             float64 `json:"loss"`
	SupervisedTokens int     `json:"supervised_tokens"`
	Windows          int     `json:"windows"`
	// Skipped counts windows without a supervised position (no loss defined).
	Skipped int `json:"skipped,omitempty"`
	// The token-weighted loss of each role, task and episode's supervised
	// tokens (the reference's val_by_role, val_by_task, val_per_episode).
	ByRole     map[string]float64 `json:"by_role,omitempty"`
	ByTask     map[string]float64 `json:"by_task,omitempty"`
	PerEpisode map[string]float64 `json:"per_episode,omitempty"`
}

// Evaluate returns the mean over windows of each window's mean
// supervised-token loss; windows with nothing supervised are skipped.
func Evaluate(ctx context.Context, be trainer.Backend, rows []sft.Row) (EvalResult, error) {
	var res EvalResult
	var sum float64
	groups := newValGroups()
	for i, r := range rows {
		w := Window(r)
		if w.Supervised() == 0 {
			res.Skipped++
			continue
		}
		l, err := be.Loss(ctx, []trainer.Window{w})
		if err != nil {
			return EvalResult{}, fmt.Errorf("window %d: %w", i, err)
		}
		sum += l[0].Loss
		res.SupervisedTokens += l[0].Tokens
		res.Windows++
		groups.add(r, l[0].Loss, l[0].Tokens)
	}
	if res.Windows == 0 {
		return res, fmt.Errorf("no window has a supervised token")
	}
	res.Loss = sum / float64(res.Windows)
	res.ByRole, res.ByTask, res.PerEpisode = groups.means()
	return res, nil
}

// valGroups sums loss × tokens and tokens by role, task and episode.
type valGroups struct{ sums, toks [3]map[string]float64 }

func newValGroups() *valGroups {
	g := &valGroups{}
	for i := range g.sums {
		g.sums[i], g.toks[i] = map[string]float64{}, map[string]float64{}
	}
	return g
}

func (g *valGroups) add(r sft.Row, loss float64, tokens int) {
	for i, k := range [3]string{r.Role, r.Task, r.Episode} {
		g.sums[i][k] += loss * float64(tokens)
		g.toks[i][k] += float64(tokens)
	}
}

func (g *valGroups) means() (byRole, byTask, perEpisode map[string]float64) {
	var out [3]map[string]float64
	for i := range out {
		out[i] = map[string]float64{}
		for k, s := range g.sums[i] {
			out[i][k] = s / g.toks[i][k]
		}
	}
	return out[0], out[1], out[2]
}
