package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/refbackend"
	"github.com/mass-dev/mass/trainer/train"
)

// testOptions are the backends the app tests build in.
var testOptions = Options{
	Backends: map[string]trainer.Factory{refbackend.Name: refbackend.New},
	Default:  refbackend.Name,
}

// runApp runs mass-train with args and returns what it wrote to stdout and stderr.
func runApp(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	a := New("test", testOptions)
	a.Writer, a.ErrWriter = &out, &errb
	err = a.Run(append([]string{"mass-train"}, args...))
	return out.String(), errb.String(), err
}

// mustRun is runApp that fails the test on an error.
func mustRun(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runApp(args...)
	if err != nil {
		t.Fatalf("mass-train %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr)
	}
	return stdout, stderr
}

// toy is a micro model and toy train/val rows written by init-model and toy-data.
type toy struct {
	dir, model, train, val string
}

// Toy rows: 12 tokens, the first 3 masked, so 9 supervised tokens per window.
const (
	toySeq       = 12
	toySup       = toySeq - 3
	toyTrainRows = 32
	toyValRows   = 8
)

func newToy(t *testing.T) toy {
	t.Helper()
	dir := t.TempDir()
	f := toy{dir: dir, model: filepath.Join(dir, "micro"), train: filepath.Join(dir, "train.jsonl"), val: filepath.Join(dir, "val.jsonl")}
	mustRun(t, "init-model", "--config", "micro", "--out", f.model)
	seq := strconv.Itoa(toySeq)
	mustRun(t, "toy-data", "--out", f.train, "--n", strconv.Itoa(toyTrainRows), "--seq", seq, "--symbols", "8", "--seed", "1")
	mustRun(t, "toy-data", "--out", f.val, "--n", strconv.Itoa(toyValRows), "--seq", seq, "--symbols", "8", "--seed", "2")
	return f
}

// trainArgs are a 4-step run with validation and a checkpoint every 2 steps.
func (f toy) trainArgs(run string) []string {
	return []string{"train", "--model", f.model, "--data", f.train, "--val", f.val, "--out", run,
		"--steps", "4", "--batch", "2", "--accum", "1", "--lr", "1e-2", "--warmup", "0", "--rank", "4", "--alpha", "8", "--dropout", "0",
		"--val-every", "2", "--ckpt-every", "2", "--keep-checkpoints", "0", "--seed", "7", "--json-progress"}
}

// trainToy runs trainArgs and returns the run folder and the progress records printed on stdout.
func (f toy) trainToy(t *testing.T) (string, []train.Record) {
	t.Helper()
	run := filepath.Join(f.dir, "run")
	stdout, _ := mustRun(t, f.trainArgs(run)...)
	return run, parseRecords(t, stdout)
}

func parseRecords(t *testing.T, s string) []train.Record {
	t.Helper()
	var recs []train.Record
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var r train.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("progress line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func evalJSON(t *testing.T, args ...string) train.EvalResult {
	t.Helper()
	stdout, _ := mustRun(t, append([]string{"eval", "--json"}, args...)...)
	var res train.EvalResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("eval --json printed %q: %v", stdout, err)
	}
	if math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) || res.Loss <= 0 {
		t.Fatalf("eval loss %v, want finite and positive", res.Loss)
	}
	return res
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// TestUsageErrors checks that bad flags and missing or malformed files are refused
// with a message that names the problem.
func TestUsageErrors(t *testing.T) {
	f := newToy(t)
	missing := filepath.Join(f.dir, "missing")
	empty := filepath.Join(f.dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(f.dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"input_ids":[5,6],"labels":[5]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(f.dir, "out")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"train without model", []string{"train", "--data", f.train, "--out", out}, `Required flag "model" not set`},
		{"export without out", []string{"export", "--run", f.dir}, `Required flag "out" not set`},
		{"unknown flag", []string{"eval", "--model", f.model, "--data", f.val, "--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown preset", []string{"init-model", "--config", "huge", "--out", out}, `unknown model preset "huge" (have [hybrid-micro hybrid-tiny micro tiny])`},
		{"init-model bad dtype", []string{"init-model", "--config", "micro", "--out", out, "--dtype", "F8"}, "--dtype F8: want BF16, F16 or F32"},
		{"model folder missing", []string{"eval", "--model", missing, "--data", f.val}, "read model config: open " + filepath.Join(missing, "config.json")},
		{"rows file missing", []string{"eval", "--model", f.model, "--data", missing}, "open rows: open " + missing},
		{"rows file empty", []string{"eval", "--model", f.model, "--data", empty}, empty + " holds no windows"},
		{"rows malformed", []string{"eval", "--model", f.model, "--data", bad}, bad + ": rows line 1: row has 1 labels for 2 tokens"},
		{"adapter missing", []string{"eval", "--model", f.model, "--data", f.val, "--adapter", missing}, "read adapter config: open " + filepath.Join(missing, "adapter_config.json")},
		{"unknown backend", []string{"eval", "--model", f.model, "--data", f.val, "--backend", "nope"}, `backend "nope" is not built into this binary (a CUDA build needs -tags masscuda; this one has reference)`},
		{"train unknown backend", []string{"train", "--model", f.model, "--data", f.train, "--out", out, "--backend", "nope"}, `backend "nope" is not built into this binary`},
		{"train data missing", []string{"train", "--model", f.model, "--data", missing, "--out", out}, "open rows: open " + missing},
		{"train zero steps", []string{"train", "--model", f.model, "--data", f.train, "--out", out, "--steps", "0"}, "steps 0 must be positive"},
		{"train bad target", []string{"train", "--model", f.model, "--data", f.train, "--out", out, "--targets", "q_proj,bogus"}, `unknown lora target "bogus"`},
		{"train bad dropout", []string{"train", "--model", f.model, "--data", f.train, "--out", out, "--dropout", "1"}, "lora dropout 1 must be in [0, 1)"},
		{"export without run", []string{"export", "--run", missing, "--out", out}, "read run config: open " + filepath.Join(missing, "run.json")},
		{"bench short window", []string{"bench", "--config", "micro", "--seq", "1"}, `--seq "1": want lengths >= 2`},
		{"bench unknown preset", []string{"bench", "--config", "huge"}, `unknown model preset "huge"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runApp(tt.args...)
			if err == nil {
				t.Fatalf("mass-train %s: no error, want %q", strings.Join(tt.args, " "), tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("mass-train %s:\n got error %q\nwant it to contain %q", strings.Join(tt.args, " "), err, tt.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused command created %s", out)
	}
}

func TestSetMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	got := setMemoryLimit()
	if total := memTotal(); total > 0 && (got <= 0 || got > total) {
		t.Fatalf("memory limit %d for %d bytes of memory", got, total)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := setMemoryLimit(); got != 0 {
		t.Fatalf("GOMEMLIMIT set, but the limit was replaced by %d", got)
	}
}

// A backend this binary lacks is ErrNotFound.
func TestBackendErrorClasses(t *testing.T) {
	r := &runner{opt: Options{Backends: map[string]trainer.Factory{"reference": nil}}}
	if _, err := r.pickBackend("nope"); !errors.Is(err, errclass.ErrNotFound) {
		t.Errorf("pickBackend(nope) = %v, want ErrNotFound", err)
	}
}
