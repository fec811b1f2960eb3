package reference

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
)

// Python is the interpreter the reference runs with (Debian's python3-torch).
const Python = "/usr/bin/python3"

// Debug is debug.json written by qwen3_ref.py.
type Debug struct {
	Torch  string `json:"torch"`
	Dtype  string `json:"dtype"`
	Config map[string]any
	LoRA   struct {
		R       int      `json:"r"`
		Alpha   float64  `json:"lora_alpha"`
		Dropout float64  `json:"lora_dropout"`
		RSLoRA  bool     `json:"use_rslora"`
		Targets []string `json:"target_modules"`
	} `json:"lora"`
	Opt struct {
		LR          float64   `json:"lr"`
		Warmup      int       `json:"warmup"`
		Steps       int       `json:"steps"`
		Floor       float64   `json:"floor"`
		WeightDecay float64   `json:"weight_decay"`
		Betas       []float64 `json:"betas"`
		Eps         float64   `json:"eps"`
		Clip        float64   `json:"clip"`
	} `json:"opt"`
	Windows []struct {
		InputIDs []int32 `json:"input_ids"`
		Labels   []int32 `json:"labels"`
	} `json:"windows"`
	WindowLosses []float64 `json:"window_losses"`
	Loss         float64   `json:"loss"`
	StepLosses   []float64 `json:"step_losses"`
}

// ReadDebug reads dir/debug.json.
func ReadDebug(dir string) (*Debug, error) {
	b, err := os.ReadFile(filepath.Join(dir, "debug.json"))
	if err != nil {
		return nil, fmt.Errorf("read debug state: %w", err)
	}
	var d Debug
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("parse debug.json: %w", err)
	}
	return &d, nil
}

// TrainerWindows converts the reference windows.
func (d *Debug) TrainerWindows() []trainer.Window {
	out := make([]trainer.Window, len(d.Windows))
	for i, w := range d.Windows {
		out[i] = trainer.Window{InputIDs: w.InputIDs, Labels: w.Labels}
	}
	return out
}

// LoRAConfig is the adapter configuration of the reference.
func (d *Debug) LoRAConfig() lora.Config {
	return lora.Config{Rank: d.LoRA.R, Alpha: d.LoRA.Alpha, Dropout: d.LoRA.Dropout, RSLoRA: d.LoRA.RSLoRA, Targets: d.LoRA.Targets}
}

// OptimConfig is the optimizer configuration of the reference.
func (d *Debug) OptimConfig() optim.Config {
	o := d.Opt
	return optim.Config{LR: o.LR, Warmup: o.Warmup, TotalSteps: o.Steps, Floor: o.Floor, WeightDecay: o.WeightDecay,
		Beta1: o.Betas[0], Beta2: o.Betas[1], Eps: o.Eps, Clip: o.Clip}
}

// TorchAvailable reports whether Python can import torch, with its version.
func TorchAvailable() (string, bool) {
	if _, err := os.Stat(Python); err != nil {
		return "", false
	}
	out, err := exec.Command(Python, "-c", "import torch; print(torch.__version__)").Output()
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(out)), true
}

// Archs are the variants the reference builds: qwen3 (q/k norm, untied head,
// LoRA on all modules), qwen2 (qkv bias, tied embeddings, no head_dim in
// config.json, rsLoRA on q,v,o,up) and hybrid (hybrid_ref.py: the Qwen3.5/3.6
// Gated DeltaNet + gated attention decoder in the official nested layout, LoRA
// on all ten reference targets).
var Archs = []string{"qwen3", "qwen2", "hybrid"}

// Script is the reference script of an arch.
func Script(arch string) string {
	if arch == "hybrid" {
		return "hybrid_ref.py"
	}
	return "qwen3_ref.py"
}

// Generate runs the reference script (found at script) for arch, writing into out.
func Generate(script, arch, out string) error {
	cmd := exec.Command(Python, script, "--arch", arch, "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("run %s: %w: %s", script, err, b)
	}
	return nil
}

// AdapterLogits has the reference compute logits of windows (JSON list of
// {"input_ids"}) for model+PEFT adapter folders, written to out as
// logits_<i> tensors.
func AdapterLogits(script, modelDir, adapterDir, windowsJSON, out string) error {
	cmd := exec.Command(Python, script, "--check-adapter", adapterDir, "--model", modelDir, "--windows", windowsJSON, "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("run %s --check-adapter: %w: %s", script, err, b)
	}
	return nil
}

// MergedLogits has hybrid_ref.py compute logits of windows for a merged model
// folder read as the official layout (and check its carried tensors).
func MergedLogits(script, modelDir, windowsJSON, out string) error {
	cmd := exec.Command(Python, script, "--check-merged", "--model", modelDir, "--windows", windowsJSON, "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("run %s --check-merged: %w: %s", script, err, b)
	}
	return nil
}
