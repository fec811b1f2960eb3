package app

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/train"
)

// TestInitModel reads back what init-model wrote: config.json, the safetensors
// weights in the asked dtype, and the values of model.NewRandom for the seed.
func TestInitModel(t *testing.T) {
	tests := []struct {
		dtype     string
		seed      uint64
		wantDType safetensors.DType
		wantTorch string
	}{
		{"F32", 1, safetensors.F32, "float32"},
		{"bf16", 3, safetensors.BF16, "bfloat16"},
	}
	for _, tt := range tests {
		t.Run(tt.dtype, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "micro")
			_, stderr := mustRun(t, "init-model", "--config", "micro", "--out", dir, "--dtype", tt.dtype, "--seed", strconv.FormatUint(tt.seed, 10))
			if got, want := stderr, "wrote micro model to "+dir+"\n"; got != want {
				t.Errorf("stderr %q, want %q", got, want)
			}

			cfg, err := model.LoadConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			preset, _ := model.Preset("micro")
			if got, want := [...]int{cfg.VocabSize, cfg.HiddenSize, cfg.IntermediateSize, cfg.NumLayers, cfg.NumHeads, cfg.NumKVHeads, cfg.HeadDim},
				[...]int{256, 32, 64, 2, 4, 2, 8}; got != want {
				t.Errorf("config sizes %v, want %v", got, want)
			}
			if cfg.Arch != model.Qwen3 || cfg.TieWordEmbeddings || cfg.TorchDType != tt.wantTorch {
				t.Errorf("config arch %q tied %v torch_dtype %q, want qwen3, untied, %q", cfg.Arch, cfg.TieWordEmbeddings, cfg.TorchDType, tt.wantTorch)
			}

			st, err := safetensors.Open(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var names []string
			for n, ti := range st.Header.Tensors {
				names = append(names, n)
				if ti.DType != tt.wantDType {
					t.Errorf("%s: dtype %s, want %s", n, ti.DType, tt.wantDType)
				}
			}
			var want []string
			for n := range preset.Expected() {
				want = append(want, n)
			}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("tensors %v,\nwant %v", names, want)
			}

			m, err := model.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			ref := model.NewRandom(preset, tt.seed)
			for n, rt := range ref.Tensors {
				got := m.Tensors[n].Data
				for i, v := range rt.Data {
					if tt.wantDType == safetensors.BF16 {
						v = safetensors.BF16ToF32(safetensors.F32ToBF16(v))
					}
					if got[i] != v {
						t.Fatalf("%s[%d] = %v, want %v (NewRandom seed %d in %s)", n, i, got[i], v, tt.seed, tt.wantDType)
					}
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); !os.IsNotExist(err) {
				t.Errorf("micro model has a tokenizer.json (stat: %v); its 256-token vocabulary has none", err)
			}
		})
	}
}

// TestToyData reads back toy-data's rows.jsonl: the windows train.ToyRows makes,
// with the first three tokens masked.
func TestToyData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	mustRun(t, "toy-data", "--out", path, "--n", "5", "--seq", "10", "--symbols", "6", "--seed", "3")
	rows, err := train.ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := train.ToyRows(5, 10, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rows), 5; got != want {
		t.Fatalf("rows %d, want %d", got, want)
	}
	for i, r := range rows {
		if !slices.Equal(r.InputIDs, want[i].InputIDs) || !slices.Equal(r.Labels, want[i].Labels) {
			t.Errorf("row %d: ids %v labels %v, want %v %v", i, r.InputIDs, r.Labels, want[i].InputIDs, want[i].Labels)
		}
		for k, id := range r.InputIDs {
			if id < 4 || id >= 4+6 {
				t.Errorf("row %d token %d: id %d outside [4, 10)", i, k, id)
			}
			if masked := r.Labels[k] == sft.IgnoreIndex; masked != (k < 3) {
				t.Errorf("row %d token %d: masked %v, want %v", i, k, masked, k < 3)
			}
		}
		if got, want := r.NLossTokens, 7; got != want {
			t.Errorf("row %d: n_loss_tokens %d, want %d", i, got, want)
		}
	}
}
