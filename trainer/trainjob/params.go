// Package trainjob is massd's "train" job kind: it runs the mass-train
// binary as a subprocess (so a CUDA build never loads into massd), streams its
// JSON progress records into job progress and events, and resumes from the
// run's checkpoints when massd restarts.
package trainjob

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/trainer/trainflags"
)

// Params are the "train" job parameters (massctl train builds them). Each knob's `flag`
// tag names its mass-train flag in trainflags.All, the one declaration of the knobs:
// massctl's flags, these fields and Args all follow it (TestParamsFollowTrainflags).
type Params struct {
	Name      string   `json:"name,omitempty"` // run name: <data-dir>/runs/<name>; default the job id
	Model     string   `json:"model"`          // base model folder (absolute, or relative to the data dir)
	Data      string   `json:"data"`           // rows.jsonl (absolute, or relative to the data dir)
	Val       string   `json:"val,omitempty"`  // validation rows.jsonl
	Backend   string   `json:"backend,omitempty"`
	Steps     int      `json:"steps,omitempty" flag:"steps"`
	Batch     int      `json:"batch,omitempty" flag:"batch"`
	Accum     int      `json:"accum,omitempty" flag:"accum"`
	LR        float64  `json:"lr,omitempty" flag:"lr"`
	Warmup    *int     `json:"warmup,omitempty" flag:"warmup"`
	Floor     *float64 `json:"floor,omitempty" flag:"floor"`
	Rank      int      `json:"rank,omitempty" flag:"rank"`
	Alpha     float64  `json:"alpha,omitempty" flag:"alpha"`
	Dropout   *float64 `json:"dropout,omitempty" flag:"dropout"`
	Targets   []string `json:"targets,omitempty" flag:"targets"`
	ValEvery  int      `json:"val_every,omitempty" flag:"val-every"`
	CkptEvery int      `json:"ckpt_every,omitempty" flag:"ckpt-every"`
	Keep      *int     `json:"keep_checkpoints,omitempty" flag:"keep-checkpoints"`
	MaxVal    int      `json:"max_val,omitempty" flag:"max-val"`
	Seed      uint64   `json:"seed,omitempty" flag:"seed"`
	Devices   []int    `json:"devices,omitempty" flag:"devices"`
	Replicas  int      `json:"replicas,omitempty" flag:"replicas"`
}

// ParseParams decodes and checks job parameters. A bad value is an
// errclass.FieldError (class ErrInvalid) naming its field.
func ParseParams(raw json.RawMessage) (Params, error) {
	var p Params
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return Params{}, fmt.Errorf("train params: %w", err)
	}
	if err := p.check(); err != nil {
		return Params{}, fmt.Errorf("train params: %w", err)
	}
	return p, nil
}

func (p Params) check() error {
	bad := func(field, format string, args ...any) error {
		return &errclass.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Model == "":
		return bad("model", "is required: the base model folder")
	case p.Data == "":
		return bad("data", "is required: the rows.jsonl to train on")
	case p.Name != "" && !datadir.ValidID(p.Name):
		return bad("name", "run name %q: use letters, digits, '.', '_' or '-' (at most 64)", p.Name)
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"steps", p.Steps}, {"batch", p.Batch}, {"accum", p.Accum}, {"rank", p.Rank}, {"val_every", p.ValEvery},
		{"ckpt_every", p.CkptEvery}, {"max_val", p.MaxVal}, {"replicas", p.Replicas}} {
		if c.v < 0 {
			return bad(c.field, "negative count %d", c.v)
		}
	}
	for i, d := range p.Devices {
		if d < 0 {
			return bad(fmt.Sprintf("devices[%d]", i), "negative device %d", d)
		}
	}
	if p.Keep != nil && *p.Keep < 0 {
		return bad("keep_checkpoints", "%d must be >= 0", *p.Keep)
	}
	for i, t := range p.Targets {
		if strings.ContainsAny(t, ", ") {
			return bad(fmt.Sprintf("targets[%d]", i), "bad target %q: one module name per entry", t)
		}
	}
	return nil
}

// Args builds the mass-train command line for a run folder; relative model
// and data paths are taken against the data directory.
func (p Params) Args(l datadir.Layout, out string) []string {
	a := []string{"train", "--json-progress", "--model", l.Resolve(p.Model), "--data", l.Resolve(p.Data), "--out", out}
	if p.Val != "" {
		a = append(a, "--val", l.Resolve(p.Val))
	}
	if p.Backend != "" {
		a = append(a, "--backend", p.Backend)
	}
	return append(a, trainflags.Args(p)...)
}
