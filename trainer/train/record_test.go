package train

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// TestValidationSplitAndExposure: every validation record carries the loss
// by role, task and episode (token-weighted, so the episodes' losses
// weighted by their tokens give back each split's total), and
// exposure.jsonl has one row per step listing the windows it drew.
func TestValidationSplitAndExposure(t *testing.T) {
	cfg := toySetup(t, 20)
	cfg.ValEvery = 10
	va, err := ToyRows(32, 24, 16, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range va {
		va[i].Episode = fmt.Sprintf("ep-%d", i%3)
	}
	writeRows(t, cfg.Val, va)
	res, err := Run(context.Background(), cfg, Options{Backends: backends})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetrics(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	vals := 0
	for _, r := range recs {
		if r.ValLoss == nil {
			continue
		}
		vals++
		if len(r.ValByRole) != 2 || len(r.ValByTask) != 4 || len(r.ValPerEpisode) != 3 || r.ValTokens != 32*21 {
			t.Fatalf("step %d validation: by role %v, by task %v, per episode %v, tokens %d", r.Step, r.ValByRole, r.ValByTask, r.ValPerEpisode, r.ValTokens)
		}
		// Each episode holds windows i ≡ e (mod 3) of 21 supervised tokens.
		var perEp, perRole float64
		for e, l := range r.ValPerEpisode {
			n := 0
			for i := range va {
				if va[i].Episode == e {
					n++
				}
			}
			perEp += l * float64(n*21)
		}
		for role, l := range r.ValByRole {
			n := 0
			for i := range va {
				if va[i].Role == role {
					n++
				}
			}
			perRole += l * float64(n*21)
		}
		if math.Abs(perEp-perRole) > 1e-9*math.Abs(perRole) {
			t.Errorf("step %d: episode split sums to %.12g, role split to %.12g", r.Step, perEp, perRole)
		}
	}
	if vals != 2 {
		t.Errorf("%d validation records, want 2", vals)
	}
	es, err := ReadExposure(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	var tokens int64
	for i, e := range es {
		if e.Step != i+1 || len(e.Rows) != cfg.Batch*cfg.Accum {
			t.Fatalf("exposure row %d: step %d with %d windows", i, e.Step, len(e.Rows))
		}
		for _, d := range e.Rows {
			tokens += int64(d.Tokens)
			if d.Task == "" || d.Role == "" {
				t.Fatalf("step %d drew %+v", e.Step, d)
			}
		}
	}
	if len(es) != 20 || tokens != res.ProcessedTokens {
		t.Errorf("exposure: %d steps, %d tokens; run: 20 steps, %d processed", len(es), tokens, res.ProcessedTokens)
	}
	sum := SummarizeExposure(es, 0)
	draws := 0
	for _, c := range sum {
		draws += c.Draws
	}
	if len(sum) != 8 || draws != 80 {
		t.Errorf("exposure by task and role: %+v", sum)
	}
	t.Logf("exposure by task and role over 20 steps: %+v", sum)
}
