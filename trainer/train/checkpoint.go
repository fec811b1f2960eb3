package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// State is the loop's position, saved with each checkpoint.
type State struct {
	Step            int     `json:"step"` // optimizer steps done
	Drawn           int64   `json:"drawn"`
	ProcessedTokens int64   `json:"processed_supervised_tokens"`
	SeenTokens      int64   `json:"seen_tokens"`
	BestVal         float64 `json:"best_val_loss"`
	BestStep        int     `json:"best_step"` // 0: no validation yet
	ElapsedSec      float64 `json:"elapsed_s"`
}

const (
	checkpointsDir = "checkpoints"
	latestFile     = "latest"
)

// CheckpointDir names the checkpoint of a step.
func CheckpointDir(out string, step int) string {
	return filepath.Join(out, checkpointsDir, fmt.Sprintf("step-%06d", step))
}

// saveCheckpoint writes adapter, optimizer moments and state into a fresh
// folder, renames it into place, then points "latest" at it. A crash at
// any moment leaves the previous latest checkpoint intact.
func saveCheckpoint(out string, st State, a *lora.Adapter, opt *optim.AdamW) error {
	final := CheckpointDir(out, st.Step)
	tmp := final + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create checkpoint: %w", err)
	}
	if err := a.Save(filepath.Join(tmp, "adapter.safetensors"), "", nil); err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for _, p := range a.Params {
		for _, kv := range []struct {
			k string
			v []float32
		}{{"m:", opt.M[p.Name]}, {"v:", opt.V[p.Name]}} {
			t, err := safetensors.F32Tensor(kv.k+p.Name, safetensors.F32, p.Shape, kv.v)
			if err != nil {
				return err
			}
			ts = append(ts, t)
		}
	}
	if err := safetensors.Write(filepath.Join(tmp, "optimizer.safetensors"), ts, map[string]string{"steps": fmt.Sprint(opt.Steps)}); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode checkpoint state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "state.json"), b, 0o644); err != nil {
		return fmt.Errorf("write checkpoint state: %w", err)
	}
	os.RemoveAll(final)
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("rename checkpoint: %w", err)
	}
	return writeAtomic(filepath.Join(out, checkpointsDir, latestFile), []byte(filepath.Base(final)+"\n"))
}

// loadLatest restores the latest checkpoint into a and opt; ok is false when
// the run has none.
func loadLatest(out string, a *lora.Adapter, opt *optim.AdamW) (st State, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(out, checkpointsDir, latestFile))
	if errors.Is(err, os.ErrNotExist) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("read latest checkpoint: %w", err)
	}
	name := strings.TrimSpace(string(b))
	if name != filepath.Base(name) || !strings.HasPrefix(name, "step-") {
		return State{}, false, fmt.Errorf("latest checkpoint name %q is malformed", name)
	}
	dir := filepath.Join(out, checkpointsDir, name)
	sb, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return State{}, false, fmt.Errorf("read checkpoint state: %w", err)
	}
	if err := json.Unmarshal(sb, &st); err != nil {
		return State{}, false, fmt.Errorf("parse %s/state.json: %w", dir, err)
	}
	if err := a.Load(filepath.Join(dir, "adapter.safetensors")); err != nil {
		return State{}, false, err
	}
	f, err := safetensors.Open(filepath.Join(dir, "optimizer.safetensors"))
	if err != nil {
		return State{}, false, err
	}
	defer f.Close()
	for _, p := range a.Params {
		for k, dst := range map[string][]float32{"m:": opt.M[p.Name], "v:": opt.V[p.Name]} {
			v, _, err := f.Float32s(k + p.Name)
			if err != nil {
				return State{}, false, err
			}
			if len(v) != len(dst) {
				return State{}, false, fmt.Errorf("optimizer state %s%s has %d values, want %d", k, p.Name, len(v), len(dst))
			}
			copy(dst, v)
		}
	}
	if _, err := fmt.Sscan(f.Header.Metadata["steps"], &opt.Steps); err != nil {
		return State{}, false, fmt.Errorf("checkpoint optimizer step count: %w", err)
	}
	return st, true, nil
}

// pruneCheckpoints removes all but the newest keep checkpoints (the best
// adapter lives apart, in best/).
func pruneCheckpoints(out string, keep int) error {
	if keep <= 0 {
		return nil
	}
	m, err := filepath.Glob(filepath.Join(out, checkpointsDir, "step-*"))
	if err != nil {
		return err
	}
	var done []string
	for _, p := range m {
		if !strings.HasSuffix(p, ".tmp") {
			done = append(done, p)
		}
	}
	sort.Strings(done) // step-%06d sorts by step
	for i := 0; i+keep < len(done); i++ {
		if err := os.RemoveAll(done[i]); err != nil {
			return fmt.Errorf("prune checkpoint: %w", err)
		}
	}
	return nil
}
