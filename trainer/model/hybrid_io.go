package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/trainer/safetensors"
)

// hybridInit fills a random hybrid weight: RMSNorm weights in Qwen3.5's
// (1 + w) form near zero, the gated norm near one, A_log = log U(1, 16),
// dt_bias near one, the depthwise conv normal(0, 1/√width), projections
// normal(0, 1/√in), embedding and head normal(0, 2/√hidden).
func hybridInit(name string, shape []int, v []float32, rng *rand.Rand) {
	fill := func(f func() float64) {
		for i := range v {
			v[i] = float32(f())
		}
	}
	switch {
	case strings.HasSuffix(name, "linear_attn.norm.weight"), strings.HasSuffix(name, ".dt_bias"):
		fill(func() float64 { return 1 + 0.1*rng.NormFloat64() })
	case strings.HasSuffix(name, ".A_log"):
		fill(func() float64 { return math.Log(1 + 15*rng.Float64()) })
	case len(shape) == 1:
		fill(func() float64 { return 0.1 * rng.NormFloat64() })
	case len(shape) == 3:
		s := 1 / math.Sqrt(float64(shape[2]))
		fill(func() float64 { return s * rng.NormFloat64() })
	default:
		s := 1 / math.Sqrt(float64(shape[1]))
		if name == "model.embed_tokens.weight" || name == "lm_head.weight" {
			s = 2 / math.Sqrt(float64(shape[1]))
		}
		fill(func() float64 { return s * rng.NormFloat64() })
	}
}

// saveHybrid writes the official layout: nested config.json, tensors under
// their checkpoint names, and the carried tensors copied from Source.
func (m *Model) saveHybrid(dir string, cfg *Config, dtype safetensors.DType, maxShardBytes int64) error {
	if len(m.Carried) > 0 && abs(dir) == abs(m.Source) {
		return fmt.Errorf("write model: output folder %s is the source folder of its carried tensors", dir)
	}
	js, err := cfg.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	var ts []safetensors.Tensor
	for n, t := range m.Tensors {
		st, err := safetensors.F32Tensor(cfg.OfficialName(n), dtype, t.Shape, t.Data)
		if err != nil {
			return err
		}
		ts = append(ts, st)
	}
	if maxShardBytes <= 0 {
		maxShardBytes = math.MaxInt64
	}
	return m.WriteWithCarried(dir, ts, maxShardBytes)
}

// WriteWithCarried writes ts sharded into dir and then m's carried tensors,
// one source shard at a time as model-carried-NNNNN.safetensors (the bytes
// come straight from the mapped source file, never widened), with an index
// naming every shard.
func (m *Model) WriteWithCarried(dir string, ts []safetensors.Tensor, maxShardBytes int64) error {
	if err := safetensors.WriteSharded(dir, ts, maxShardBytes); err != nil {
		return err
	}
	if len(m.Carried) == 0 {
		return nil
	}
	if abs(dir) == abs(m.Source) {
		return fmt.Errorf("write model: output folder %s is the source folder", dir)
	}
	ix := safetensors.Index{Metadata: map[string]any{}, WeightMap: map[string]string{}}
	var total int64
	if b, err := os.ReadFile(filepath.Join(dir, safetensors.IndexFile)); err == nil {
		if err := json.Unmarshal(b, &ix); err != nil {
			return fmt.Errorf("read back index: %w", err)
		}
	} else {
		for _, t := range ts {
			ix.WeightMap[t.Name] = "model.safetensors"
		}
	}
	for _, t := range ts {
		total += int64(len(t.Data))
	}
	shards, err := sourceShards(m.Source)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range m.Carried {
		want[n] = true
	}
	for i, s := range shards {
		name := fmt.Sprintf("model-carried-%05d.safetensors", i+1)
		n, err := copyCarried(filepath.Join(m.Source, s), filepath.Join(dir, name), want)
		if err != nil {
			return err
		}
		for _, t := range n {
			ix.WeightMap[t.Name] = name
			total += int64(len(t.Data))
		}
	}
	ix.Metadata["total_size"] = total
	js, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, safetensors.IndexFile), append(js, '\n'), 0o644)
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// copyCarried writes the wanted tensors of one source shard to dst (nothing
// when the shard holds none) and returns them.
func copyCarried(src, dst string, want map[string]bool) ([]safetensors.Tensor, error) {
	f, err := safetensors.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ts []safetensors.Tensor
	for _, n := range f.Header.Names() {
		if !want[n] {
			continue
		}
		ti, _ := f.Info(n)
		b, err := f.Bytes(n)
		if err != nil {
			return nil, err
		}
		ts = append(ts, safetensors.Tensor{Name: n, DType: ti.DType, Shape: ti.Shape, Data: b})
	}
	if len(ts) == 0 {
		return nil, nil
	}
	return ts, safetensors.Write(dst, ts, map[string]string{"format": "pt"})
}

// sourceShards lists a model folder's safetensors files as OpenModel finds them.
func sourceShards(dir string) ([]string, error) {
	idx, err := os.ReadFile(filepath.Join(dir, safetensors.IndexFile))
	if err == nil {
		return safetensors.ParseIndex(idx)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", safetensors.IndexFile, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
		return []string{"model.safetensors"}, nil
	}
	ms, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	var out []string
	for _, p := range ms {
		out = append(out, filepath.Base(p))
	}
	return out, nil
}
