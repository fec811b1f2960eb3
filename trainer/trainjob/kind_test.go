package trainjob

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/mass-dev/mass/trainer/trainflags"
)

// recorder is a jobkind.Reporter that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	events   []string
	progress []jobkind.Progress
	result   any
}

func (r *recorder) Event(typ, msg string, _ map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+": "+msg)
}
func (r *recorder) Progress(p jobkind.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, p)
}
func (r *recorder) SetResult(v any)               { r.result = v }
func (r *recorder) Episode(jobkind.EpisodeRecord) {}
func (r *recorder) Logger() *slog.Logger          { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

var _ jobkind.Reporter = (*recorder)(nil)

func buildMassTrain(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mass-train")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mass-dev/mass/cmd/mass-train")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	return bin
}

func TestTrainJobRunsMassTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mass-train")
	}
	bin := buildMassTrain(t)
	data := t.TempDir()
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	if err := model.NewRandom(mc, 1).Save(filepath.Join(data, "models", "micro"), "BF16", 0); err != nil {
		t.Fatal(err)
	}
	rows, err := train.ToyRows(16, 12, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(data, "datasets", "toy"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(data, "datasets", "toy", "rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sft.WriteRows(f, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	params, _ := json.Marshal(map[string]any{"name": "t1", "model": "models/micro", "data": "datasets/toy/rows.jsonl",
		"val": "datasets/toy/rows.jsonl", "steps": 6, "batch": 2, "lr": 0.01, "rank": 4, "alpha": 8, "val_every": 3, "ckpt_every": 3})
	k := Kind(Binary(bin))
	if err := k.Validate(params); err != nil {
		t.Fatal(err)
	}
	rep := &recorder{}
	job := jobkind.Job{ID: "job-1", Kind: KindName, Params: params, Attempt: 1, Layout: datadir.New(data), WorkDir: t.TempDir()}
	if err := k.Run(context.Background(), job, rep); err != nil {
		t.Fatalf("run: %v\nevents: %v", err, rep.events)
	}
	last := rep.progress[len(rep.progress)-1]
	if got, want := last.Counters["step"], int64(6); got != want {
		t.Errorf("last progress step = %d, want %d (%v)", got, want, last)
	}
	if got, want := last.Counters["processed_supervised_tokens"], int64(6*2*train.DefaultAccum*9); got != want { // mass-train's default: 3 micro-batches per step
		t.Errorf("processed tokens = %d, want %d", got, want)
	}
	vals := 0
	for _, e := range rep.events {
		if len(e) > 10 && e[:10] == "validation" {
			vals++
		}
	}
	if got, want := vals, 2; got != want {
		t.Errorf("validation events = %d, want %d: %v", got, want, rep.events)
	}
	if rep.result == nil {
		t.Error("no result recorded")
	}
	if _, err := os.Stat(filepath.Join(data, "runs", "t1", "checkpoints", "step-000006", "adapter.safetensors")); err != nil {
		t.Errorf("final checkpoint missing: %v", err)
	}
}

func TestParseParamsRejects(t *testing.T) {
	tests := []struct{ params, field string }{
		{`{}`, "model"},
		{`{"model":"m"}`, "data"},
		{`{"model":"m","data":"d","name":"../x"}`, "name"},
		{`{"model":"m","data":"d","steps":-1}`, "steps"},
		{`{"model":"m","data":"d","devices":[0,-1]}`, "devices[1]"},
		{`{"model":"m","data":"d","keep_checkpoints":-1}`, "keep_checkpoints"},
		{`{"model":"m","data":"d","bogus":1}`, "bogus"},
		{`{"model":"m","data":"d","targets":["q_proj","q_proj,k_proj"]}`, "targets[1]"},
	}
	for _, tc := range tests {
		_, err := ParseParams(json.RawMessage(tc.params))
		var fe *errclass.FieldError
		if !errors.Is(err, errclass.ErrInvalid) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("ParseParams(%s) = %v, want an ErrInvalid field error naming %q", tc.params, err, tc.field)
		}
	}
}

func FuzzParseParams(f *testing.F) {
	f.Add([]byte(`{"model":"m","data":"d","steps":5,"targets":["q_proj"]}`))
	f.Add([]byte(`{"model":"/abs","data":"d","name":"run-1","dropout":0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseParams(b)
		if err != nil {
			return
		}
		args := p.Args(datadir.New("/data"), "/data/runs/x")
		if args[0] != "train" {
			t.Fatalf("args %v", args)
		}
	})
}

// TestParamsFollowTrainflags: the job's knobs are exactly trainflags' Job flags, and Args
// renders a set knob as mass-train's flag.
func TestParamsFollowTrainflags(t *testing.T) {
	var want []string
	for _, f := range trainflags.Job() {
		want = append(want, f.Name)
	}
	if got := trainflags.Tags(Params{}); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("Params tags %v, trainflags job flags %v", got, want)
	}
	w, d := 0, 0.0
	p := Params{Model: "m", Data: "d", Steps: 7, Warmup: &w, Dropout: &d, Targets: []string{"q_proj", "v_proj"}, Devices: []int{0, 1}, Replicas: 2, Seed: 9}
	got := strings.Join(p.Args(datadir.New("/data"), "/o"), " ")
	if want := "train --json-progress --model /data/m --data /data/d --out /o --steps 7 --warmup 0 --dropout 0 --targets q_proj,v_proj --seed 9 --devices 0,1 --replicas 2"; got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
}
