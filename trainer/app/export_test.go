package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/train"
)

// microRank4Params is the LoRA size of the toy runs: rank 4 on all seven modules of
// micro's 2 layers, 4·(in+out) each: q 32→32, k and v 32→16, o 32→32, gate and up
// 32→64, down 64→32.
const microRank4Params = 2 * 4 * (64 + 48 + 48 + 64 + 96 + 96 + 96)

// readTensors reads every tensor of a safetensors file as float32, by name.
func readTensors(t *testing.T, path string) (map[string][]float32, *safetensors.Header) {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]float32{}
	for name := range f.Header.Tensors {
		v, _, err := f.Float32s(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = v
	}
	return out, f.Header
}

// TestExportAdapter exports the latest checkpoint of a toy run as a PEFT folder and
// parses it back: the config records the run's LoRA settings, the weights are the
// checkpoint's under PEFT names and shapes.
func TestExportAdapter(t *testing.T) {
	f := newToy(t)
	run, _ := f.trainToy(t)
	out := filepath.Join(f.dir, "adapter")
	_, stderr := mustRun(t, "export", "--run", run, "--checkpoint", "latest", "--out", out, "--base-model", "Qwen/Qwen3-0.6B")
	if got, want := stderr, fmt.Sprintf("wrote PEFT adapter (%d parameters) to %s\n", microRank4Params, out); got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}

	var ac export.AdapterConfig
	readJSON(t, filepath.Join(out, export.AdapterConfigFile), &ac)
	if ac.PEFTType != "LORA" || ac.TaskType != "CAUSAL_LM" || ac.R != 4 || ac.LoRAAlpha != 8 || ac.LoRADropout != 0 ||
		!slices.Equal(ac.TargetModules, lora.Modules) || ac.Bias != "none" || ac.UseRSLoRA || !ac.InferenceMode ||
		ac.BaseModel != "Qwen/Qwen3-0.6B" {
		t.Errorf("adapter_config.json %+v does not describe the run's rank-4 adapter on Qwen/Qwen3-0.6B", ac)
	}

	got, h := readTensors(t, filepath.Join(out, export.AdapterWeightsFile))
	ckpt, _ := readTensors(t, filepath.Join(train.CheckpointDir(run, 4), "adapter.safetensors"))
	if h.Metadata["format"] != "pt" {
		t.Errorf("metadata %v, want format pt", h.Metadata)
	}
	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	nonzeroB := 0
	for l := range 2 {
		for _, mod := range lora.Modules {
			in, outDim := lora.Dims(mc, mod)
			for _, p := range []struct {
				name  string
				shape []int
			}{{lora.AName(l, mod), []int{4, in}}, {lora.BName(l, mod), []int{outDim, 4}}} {
				key := lora.PEFTPrefix + p.name
				ti, ok := h.Tensors[key]
				if !ok {
					t.Errorf("%s missing", key)
					continue
				}
				if ti.DType != safetensors.F32 || !slices.Equal(ti.Shape, p.shape) {
					t.Errorf("%s: %s %v, want F32 %v", key, ti.DType, ti.Shape, p.shape)
				}
				if !slices.Equal(got[key], ckpt[p.name]) {
					t.Errorf("%s differs from the step-4 checkpoint's %s", key, p.name)
				}
				if strings.Contains(p.name, "lora_B") && slices.ContainsFunc(got[key], func(v float32) bool { return v != 0 }) {
					nonzeroB++
				}
			}
		}
	}
	if got, want := len(h.Tensors), 2*len(lora.Modules)*2; got != want {
		t.Errorf("%d tensors, want %d", got, want)
	}
	if nonzeroB == 0 {
		t.Error("every lora_B is still zero after 4 steps: nothing was trained")
	}

	a, err := export.ReadAdapter(out, mc)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if got, want := a.NumParams(), microRank4Params; got != want {
		t.Errorf("read back %d parameters, want %d", got, want)
	}
}

// TestExportCheckpoints picks best, latest or a step, records the run's model by
// default, and refuses checkpoints the run does not have.
func TestExportCheckpoints(t *testing.T) {
	f := newToy(t)
	run, _ := f.trainToy(t)
	var best struct {
		Step int `json:"step"`
	}
	readJSON(t, filepath.Join(train.BestDir(run), "best.json"), &best)
	tests := []struct {
		checkpoint string
		from       string
	}{
		{"best", filepath.Join(train.BestDir(run), "adapter.safetensors")},
		{"latest", filepath.Join(train.CheckpointDir(run, 4), "adapter.safetensors")},
		{"2", filepath.Join(train.CheckpointDir(run, 2), "adapter.safetensors")},
	}
	exported := map[string]map[string][]float32{}
	for _, tt := range tests {
		out := filepath.Join(f.dir, "adapter-"+tt.checkpoint)
		mustRun(t, "export", "--run", run, "--checkpoint", tt.checkpoint, "--out", out)
		var ac export.AdapterConfig
		readJSON(t, filepath.Join(out, export.AdapterConfigFile), &ac)
		if ac.BaseModel != f.model {
			t.Errorf("--checkpoint %s: base_model_name_or_path %q, want the run's --model %q", tt.checkpoint, ac.BaseModel, f.model)
		}
		got, _ := readTensors(t, filepath.Join(out, export.AdapterWeightsFile))
		want, _ := readTensors(t, tt.from)
		for name, v := range want {
			if !slices.Equal(got[lora.PEFTPrefix+name], v) {
				t.Errorf("--checkpoint %s: %s differs from %s", tt.checkpoint, name, tt.from)
				break
			}
		}
		exported[tt.checkpoint] = got
	}
	key := lora.PEFTPrefix + lora.BName(0, "q_proj")
	if slices.Equal(exported["2"][key], exported["latest"][key]) {
		t.Errorf("steps 2 and 4 exported the same %s", key)
	}

	noVal := filepath.Join(f.dir, "run-noval")
	mustRun(t, "train", "--model", f.model, "--data", f.train, "--out", noVal, "--steps", "1", "--rank", "4", "--alpha", "8")
	for _, tt := range []struct {
		run, checkpoint, want string
	}{
		{run, "bogus", `--checkpoint "bogus": want best, latest or a step number`},
		{run, "3", "open safetensors " + filepath.Join(train.CheckpointDir(run, 3), "adapter.safetensors")},
		{noVal, "best", "run " + noVal + " has no best checkpoint (no validation ran); use --checkpoint latest"},
	} {
		out := filepath.Join(f.dir, "refused")
		_, _, err := runApp("export", "--run", tt.run, "--checkpoint", tt.checkpoint, "--out", out)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("export --run %s --checkpoint %s: error %v, want %q", filepath.Base(tt.run), tt.checkpoint, err, tt.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("export --checkpoint %s wrote %s", tt.checkpoint, out)
		}
	}
}

// TestExportedAdapterEvaluates evaluates the exported best adapter on the
// validation rows: eval must reproduce the validation loss the run recorded, lower
// than the base model's; merging the adapter into the weights gives the same loss.
func TestExportedAdapterEvaluates(t *testing.T) {
	f := newToy(t)
	run, _ := f.trainToy(t)
	var res train.Result
	readJSON(t, filepath.Join(run, "result.json"), &res)
	out := filepath.Join(f.dir, "adapter")
	mustRun(t, "export", "--run", run, "--out", out)

	base := evalJSON(t, "--model", f.model, "--data", f.val)
	tuned := evalJSON(t, "--model", f.model, "--adapter", out, "--data", f.val)
	if !near(tuned.Loss, res.BestValLoss, 1e-6) {
		t.Errorf("eval with the exported best adapter: loss %v, want the run's best val_loss %v", tuned.Loss, res.BestValLoss)
	}
	if !(tuned.Loss < base.Loss) {
		t.Errorf("adapter loss %v, want below the base model's %v", tuned.Loss, base.Loss)
	}

	merged := filepath.Join(f.dir, "merged")
	mustRun(t, "merge", "--model", f.model, "--adapter", out, "--out", merged, "--dtype", "F32")
	if got := evalJSON(t, "--model", merged, "--data", f.val); !near(got.Loss, tuned.Loss, 1e-4) {
		t.Errorf("merged model: loss %v, want the adapter's %v", got.Loss, tuned.Loss)
	}
	if _, _, err := runApp("merge", "--model", f.model, "--adapter", out, "--out", filepath.Join(f.dir, "m8"), "--dtype", "F8"); err == nil ||
		!strings.Contains(err.Error(), "--dtype F8: want BF16, F16 or F32") {
		t.Errorf("merge --dtype F8: error %v", err)
	}
	b, err := os.ReadFile(filepath.Join(merged, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mcfg map[string]any
	if err := json.Unmarshal(b, &mcfg); err != nil || mcfg["torch_dtype"] != "float32" {
		t.Errorf("merged config.json torch_dtype %v (%v), want float32", mcfg["torch_dtype"], err)
	}
}
