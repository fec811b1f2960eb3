package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExportsPassLoaderChecks exports an adapter, a merged folder and an FP8
// folder of a model whose k/v projections (64 wide) are not divisible by the
// FP8 block, and runs scripts/check_export.py, the loaders' rules, on them;
// then breaks the FP8 config and expects the checker to say so.
func TestExportsPassLoaderChecks(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for scripts/check_export.py")
	}
	f := newToy(t)
	f.model = filepath.Join(f.dir, "m128")
	mustRun(t, "init-model", "--config", "micro", "--out", f.model, "--hidden", "128", "--intermediate", "256",
		"--heads", "4", "--kv-heads", "2", "--head-dim", "32")
	run, _ := f.trainToy(t)
	adapter, merged, fp8 := filepath.Join(f.dir, "adapter"), filepath.Join(f.dir, "merged"), filepath.Join(f.dir, "fp8")
	mustRun(t, "export", "--run", run, "--out", adapter)
	mustRun(t, "merge", "--model", f.model, "--adapter", adapter, "--out", merged)
	mustRun(t, "merge", "--model", f.model, "--adapter", adapter, "--out", fp8, "--fp8", "--dtype", "F16")

	var cfg struct {
		TorchDType string `json:"torch_dtype"`
		Quant      struct {
			Skip []string `json:"modules_to_not_convert"`
		} `json:"quantization_config"`
	}
	readJSON(t, filepath.Join(fp8, "config.json"), &cfg)
	want := []string{}
	for _, l := range []string{"0", "1"} {
		for _, m := range []string{"k_proj", "q_proj", "v_proj"} {
			want = append(want, "model.layers."+l+".self_attn."+m)
		}
	}
	if cfg.TorchDType != "float16" || !slices.Equal(cfg.Quant.Skip, want) {
		t.Errorf("fp8 config torch_dtype %q modules_to_not_convert %v, want float16 and %v", cfg.TorchDType, cfg.Quant.Skip, want)
	}
	check := func(args ...string) (string, error) {
		cmd := exec.Command(py, append([]string{filepath.Join("..", "..", "scripts", "check_export.py"), "--base", f.model}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := check("--adapter", adapter, "--merged", merged, "--fp8", fp8); err != nil {
		t.Fatalf("check_export.py: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(fp8, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.NewReplacer(`"modules_to_not_convert"`, `"x1"`, `"ignored_layers"`, `"x2"`).Replace(string(b))
	if err := os.WriteFile(filepath.Join(fp8, "config.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := check("--fp8", fp8); err == nil || !strings.Contains(out, "not listed in modules_to_not_convert") {
		t.Errorf("checker passed an FP8 folder whose unquantized projections are not listed: %v\n%s", err, out)
	}
}
