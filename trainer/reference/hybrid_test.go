package reference

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// TestHybridMergedInTorch merges the reference adapter into the hybrid base
// (F32, small shards) and has the PyTorch reference read the folder as the
// official layout: nested config, model.language_model.* names, the vision
// and mtp tensors carried. Its logits must equal the reference backend's with
// the adapter unmerged.
func TestHybridMergedInTorch(t *testing.T) {
	if _, ok := TorchAvailable(); !ok {
		t.Skip("reference: no torch; the merged-folder cross-check needs /usr/bin/python3 with torch")
	}
	f := load(t, "hybrid")
	base, err := model.Load(f.modelDir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(base.Carried, "mtp.fc.weight") || !slices.Contains(base.Carried, "model.visual.blocks.0.attn.qkv.weight") {
		t.Fatalf("carried %v", base.Carried)
	}
	dir := t.TempDir()
	merged := filepath.Join(dir, "merged")
	if err := export.WriteMerged(merged, base, f.adapter, export.MergedOptions{DType: safetensors.F32, MaxShardBytes: 256 << 10}); err != nil {
		t.Fatal(err)
	}
	wj, _ := json.Marshal(f.dbg.Windows)
	if err := os.WriteFile(filepath.Join(dir, "windows.json"), wj, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "logits.safetensors")
	if err := MergedLogits(Script("hybrid"), merged, filepath.Join(dir, "windows.json"), out); err != nil {
		t.Fatal(err)
	}
	tl, err := safetensors.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	for i, w := range f.dbg.TrainerWindows() {
		got, err := f.backend.Logits(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := tl.Float32s(fmt.Sprintf("logits_%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(f64s(got), f64s(want)); e > 1e-5 {
			t.Errorf("window %d: torch logits of the merged folder differ by %.3g", i, e)
		} else {
			t.Logf("window %d: merged folder in torch vs adapter in the reference backend: relative error %.3g", i, e)
		}
	}
}
