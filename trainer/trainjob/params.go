// Package trainjob is massd's "train" job kind: it runs the mass-train
// binary as a subprocess (so a CUDA build never loads into massd), streams its
// JSON progress records into job progress and events, and resumes from the
// run's checkpoints when massd restarts.
package trainjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
)

// Params are the "train" job parameters (massctl train builds them).
type Params struct {
	Name      string   `json:"name,omitempty"` // run name: <data-dir>/runs/<name>; default the job id
	Model     string   `json:"model"`          // base model folder (absolute, or relative to the data dir)
	Data      string   `json:"data"`           // rows.jsonl (absolute, or relative to the data dir)
	Val       string   `json:"val,omitempty"`  // validation rows.jsonl
	Backend   string   `json:"backend,omitempty"`
	Steps     int      `json:"steps,omitempty"`
	Batch     int      `json:"batch,omitempty"`
	Accum     int      `json:"accum,omitempty"`
	LR        float64  `json:"lr,omitempty"`
	Warmup    *int     `json:"warmup,omitempty"`
	Floor     *float64 `json:"floor,omitempty"`
	Rank      int      `json:"rank,omitempty"`
	Alpha     float64  `json:"alpha,omitempty"`
	Dropout   *float64 `json:"dropout,omitempty"`
	Targets   []string `json:"targets,omitempty"`
	ValEvery  int      `json:"val_every,omitempty"`
	CkptEvery int      `json:"ckpt_every,omitempty"`
	Seed      uint64   `json:"seed,omitempty"`
	MaxVal    int      `json:"max_val,omitempty"`
	Keep      *int     `json:"keep_checkpoints,omitempty"`
}

// ParseParams decodes and checks job parameters.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return Params{}, fmt.Errorf("train params: %w", err)
	}
	if p.Model == "" || p.Data == "" {
		return Params{}, errors.New(`train params need "model" (base model folder) and "data" (rows.jsonl)`)
	}
	if p.Name != "" && !datadir.ValidID(p.Name) {
		return Params{}, fmt.Errorf("run name %q: use letters, digits, '.', '_' or '-' (at most 64)", p.Name)
	}
	for _, v := range []int{p.Steps, p.Batch, p.Accum, p.Rank, p.ValEvery, p.CkptEvery, p.MaxVal} {
		if v < 0 {
			return Params{}, fmt.Errorf("train params: negative count %d", v)
		}
	}
	if p.Keep != nil && *p.Keep < 0 {
		return Params{}, fmt.Errorf("train params: keep_checkpoints %d must be >= 0", *p.Keep)
	}
	for _, t := range p.Targets {
		if strings.ContainsAny(t, ", ") {
			return Params{}, fmt.Errorf("train params: bad target %q", t)
		}
	}
	return p, nil
}

// Args builds the mass-train command line for a run folder; relative model
// and data paths are taken against the data directory.
func (p Params) Args(l datadir.Layout, out string) []string {
	a := []string{"train", "--json-progress", "--model", l.Resolve(p.Model), "--data", l.Resolve(p.Data), "--out", out}
	add := func(flag, v string) { a = append(a, "--"+flag, v) }
	if p.Val != "" {
		add("val", l.Resolve(p.Val))
	}
	if p.Backend != "" {
		add("backend", p.Backend)
	}
	for _, kv := range []struct {
		flag string
		v    int
	}{{"steps", p.Steps}, {"batch", p.Batch}, {"accum", p.Accum}, {"rank", p.Rank}, {"val-every", p.ValEvery}, {"ckpt-every", p.CkptEvery}, {"max-val", p.MaxVal}} {
		if kv.v > 0 {
			add(kv.flag, strconv.Itoa(kv.v))
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if p.LR > 0 {
		add("lr", f(p.LR))
	}
	if p.Alpha > 0 {
		add("alpha", f(p.Alpha))
	}
	if p.Warmup != nil {
		add("warmup", strconv.Itoa(*p.Warmup))
	}
	if p.Floor != nil {
		add("floor", f(*p.Floor))
	}
	if p.Dropout != nil {
		add("dropout", f(*p.Dropout))
	}
	if len(p.Targets) > 0 {
		add("targets", strings.Join(p.Targets, ","))
	}
	if p.Keep != nil {
		add("keep-checkpoints", strconv.Itoa(*p.Keep))
	}
	if p.Seed > 0 {
		add("seed", strconv.FormatUint(p.Seed, 10))
	}
	return a
}
