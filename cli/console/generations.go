package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/generationfmt"
)

// MaxMetricsBytes caps the training metrics a generation page reads.
const MaxMetricsBytes = 64 << 20

// metric is the part of a metrics.jsonl line (trainer/train.Record) a
// loss curve needs.
type metric struct {
	Step    int      `json:"step"`
	Loss    *float64 `json:"loss"`
	ValLoss *float64 `json:"val_loss"`
	LR      float64  `json:"lr"`
}

func (c *Console) generations(ctx context.Context, r *http.Request) (view, error) {
	raws, err := c.cl.Generations(ctx)
	if err != nil {
		return view{}, err
	}
	var gs []generationfmt.Summary
	for _, raw := range raws {
		var s generationfmt.Summary
		if json.Unmarshal(raw, &s) == nil {
			gs = append(gs, s)
		}
	}
	return view{name: "generations", title: "generations", data: gs}, nil
}

// generationPage shows one generation: stages, per-task ranking as bars,
// the selection, the loss curves and the three token counts.
func (c *Console) generationPage(ctx context.Context, r *http.Request) (view, error) {
	g, err := strconv.Atoi(r.PathValue("g"))
	if err != nil || g < 1 {
		return view{}, fmt.Errorf("generation %q: a generation is a number from 1: %w", r.PathValue("g"), api.ErrInvalid)
	}
	raw, err := c.cl.Generation(ctx, g)
	if err != nil {
		return view{}, err
	}
	var s generationfmt.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return view{}, fmt.Errorf("generation %d: generation.json: %w", g, err)
	}
	type taskView struct {
		generationfmt.TaskSummary
		Bars     Bars
		Selected map[string]string
	}
	var tasks []taskView
	for _, t := range s.Tasks {
		labels, values := make([]string, len(t.Ranking)), make([]float64, len(t.Ranking))
		for i, e := range t.Ranking {
			labels[i], values[i] = fmt.Sprintf("%d. %s", e.Rank, e.ID), e.Score
		}
		sel := map[string]string{}
		for _, id := range t.Train {
			sel[id] = "train"
		}
		for _, id := range t.Val {
			sel[id] = "val"
		}
		tasks = append(tasks, taskView{TaskSummary: t, Bars: NewBars(labels, values), Selected: sel})
	}
	ms, merr := c.readMetrics(ctx, g)
	var train, val []Point
	for _, m := range ms {
		if m.Loss != nil {
			train = append(train, Point{float64(m.Step), *m.Loss})
		}
		if m.ValLoss != nil {
			val = append(val, Point{float64(m.Step), *m.ValLoss})
		}
	}
	data := map[string]any{"S": s, "Tasks": tasks, "Steps": len(ms),
		"Loss": NewChart("step", Series{Name: "train loss", Color: "#0969da", Points: train}, Series{Name: "validation loss", Color: "#cf222e", Points: val})}
	if merr != nil {
		data["MetricsError"] = merr.Error()
	}
	return view{name: "generation", title: fmt.Sprintf("generation %d", g), refresh: s.Status == generationfmt.StatusRunning, data: data}, nil
}

// readMetrics reads train/metrics.jsonl of generation g through massd.
func (c *Console) readMetrics(ctx context.Context, g int) ([]metric, error) {
	rc, err := c.cl.GenerationFile(ctx, g, "train/metrics.jsonl")
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var out []metric
	sc := bufio.NewScanner(io.LimitReader(rc, MaxMetricsBytes))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m metric
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}
