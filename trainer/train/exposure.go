package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mass-dev/mass/trainer/sft"
)

// ExposureFile is the run's record of what each step trained on.
const ExposureFile = "exposure.jsonl"

// Exposure is one line of exposure.jsonl: the windows an optimizer step
// drew, in order (the reference's exposure_log.jsonl, which the paper's
// exposure audit reads).
type Exposure struct {
	Step int     `json:"step"`
	Rows []Drawn `json:"rows"`
}

// Drawn is one window a step drew: its index in the training rows, where
// it comes from, and its supervised tokens.
type Drawn struct {
	Index   int    `json:"index"`
	Task    string `json:"task"`
	Role    string `json:"role"`
	Episode string `json:"episode"`
	Thread  string `json:"thread"`
	Segment int    `json:"segment"`
	Window  int    `json:"window"`
	Tokens  int    `json:"tokens"` // supervised
}

func drawn(i int, r sft.Row) Drawn {
	return Drawn{Index: i, Task: r.Task, Role: r.Role, Episode: r.Episode, Thread: r.Thread, Segment: r.Segment,
		Window: r.Window, Tokens: r.NLossTokens}
}

// ReadExposure reads a run's exposure.jsonl.
func ReadExposure(out string) ([]Exposure, error) {
	b, err := os.ReadFile(filepath.Join(out, ExposureFile))
	if err != nil {
		return nil, fmt.Errorf("read exposure: %w", err)
	}
	var es []Exposure
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e Exposure
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("exposure line %d: %w", i+1, err)
		}
		es = append(es, e)
	}
	return es, nil
}

// ExposureCount is what training drew of one task and role.
type ExposureCount struct {
	Task    string `json:"task"`
	Role    string `json:"role"`
	Draws   int    `json:"draws"`
	Tokens  int64  `json:"tokens"`  // supervised tokens drawn
	Windows int    `json:"windows"` // distinct windows drawn
}

// SummarizeExposure counts the draws of steps 1..upTo (all with upTo ≤ 0)
// by task and role, sorted by task then role.
func SummarizeExposure(es []Exposure, upTo int) []ExposureCount {
	type key struct{ task, role string }
	at := map[key]*ExposureCount{}
	uniq := map[key]map[int]bool{}
	for _, e := range es {
		if upTo > 0 && e.Step > upTo {
			continue
		}
		for _, d := range e.Rows {
			k := key{d.Task, d.Role}
			c := at[k]
			if c == nil {
				c = &ExposureCount{Task: d.Task, Role: d.Role}
				at[k], uniq[k] = c, map[int]bool{}
			}
			c.Draws++
			c.Tokens += int64(d.Tokens)
			uniq[k][d.Index] = true
		}
	}
	out := make([]ExposureCount, 0, len(at))
	for k, c := range at {
		c.Windows = len(uniq[k])
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].Role < out[j].Role
	})
	return out
}
