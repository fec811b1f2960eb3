// Package trainflags declares mass-train train's knobs once: their flag names, kinds,
// defaults and help. mass-train's flags, massctl train's flags, the train job's
// parameters and every mass-train command line massd builds are generated from it.
package trainflags

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/train"
)

// Kind is a flag's value type.
type Kind int

// Kinds of knobs; List is a comma-separated string on the command line.
const (
	Int Kind = iota
	Float
	Uint
	String
	Bool
	List
)

// Flag is one knob of mass-train train.
type Flag struct {
	Name    string
	Kind    Kind
	Default any // nil: none shown
	Usage   string
	Job     bool // also a massctl train flag and a train job parameter
}

// All are mass-train train's knobs, in help order (the fixed inputs --model, --data,
// --val, --out, --backend and --json-progress are declared by their commands).
var All = []Flag{
	{"steps", Int, train.DefaultSteps, "optimizer steps", true},
	{"batch", Int, train.DefaultBatch, "windows per micro-batch", true},
	{"accum", Int, train.DefaultAccum, "micro-batches per optimizer step: gradients of --batch × --accum windows are summed, each window's loss the mean over its supervised tokens, the step's loss their mean", true},
	{"lr", Float, optim.DefaultLR, "peak learning rate", true},
	{"warmup", Int, optim.DefaultWarmup, "linear warmup steps", true},
	{"floor", Float, optim.DefaultFloor, "final lr as a fraction of the peak (cosine)", true},
	{"weight-decay", Float, optim.DefaultWeightDecay, "AdamW weight decay", false},
	{"clip", Float, optim.DefaultClip, "max global gradient norm (0: off)", false},
	{"beta1", Float, optim.DefaultBeta1, "AdamW β1", false},
	{"beta2", Float, optim.DefaultBeta2, "AdamW β2", false},
	{"rank", Int, lora.DefaultRank, "LoRA rank", true},
	{"alpha", Float, lora.DefaultAlpha, "LoRA alpha", true},
	{"dropout", Float, lora.DefaultDropout, "LoRA dropout", true},
	{"rslora", Bool, nil, "scale by alpha/sqrt(rank)", false},
	{"targets", List, nil, "comma-separated LoRA target modules (default: " + strings.Join(lora.Modules, ",") +
		", and on a Qwen3.5/3.6 hybrid also " + strings.Join(lora.LinearModules, ",") + ")", true},
	{"val-every", Int, train.DefaultValEvery, "validate every `N` steps (and at the last)", true},
	{"ckpt-every", Int, train.DefaultCkptEvery, "checkpoint every `N` steps (and at the last)", true},
	{"keep-checkpoints", Int, train.DefaultKeep, "keep the newest `N` checkpoints (0: all); best/ is kept apart", true},
	{"max-val", Int, nil, "use at most `N` validation windows", true},
	{"seed", Uint, train.DefaultSeed, "seed of LoRA init, dropout and window order", true},
	{"devices", List, nil, "CUDA devices `0,1,…`: --replicas pipelines over them in order (layers split evenly; CUDA build only)", true},
	{"replicas", Int, nil, "data-parallel replicas over --devices (gradients summed by peer copies; CUDA build only)", true},
}

// Lookup returns the flag called name.
func Lookup(name string) (Flag, bool) {
	for _, f := range All {
		if f.Name == name {
			return f, true
		}
	}
	return Flag{}, false
}

// Job returns the knobs a train job carries.
func Job() []Flag {
	var out []Flag
	for _, f := range All {
		if f.Job {
			out = append(out, f)
		}
	}
	return out
}

// Arg renders one flag and its value for a mass-train command line; it panics on a name
// that is not declared, so that a caller cannot invent a flag mass-train lacks.
func Arg(name string, v any) []string {
	f, ok := Lookup(name)
	if !ok {
		panic("trainflags: undeclared mass-train flag --" + name)
	}
	switch x := v.(type) {
	case []string:
		return []string{"--" + f.Name, strings.Join(x, ",")}
	case []int:
		s := make([]string, len(x))
		for i, d := range x {
			s[i] = fmt.Sprint(d)
		}
		return []string{"--" + f.Name, strings.Join(s, ",")}
	case bool:
		return []string{fmt.Sprintf("--%s=%t", f.Name, x)}
	}
	return []string{"--" + f.Name, fmt.Sprint(v)}
}
