package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/mass-dev/mass/trainer/safetensors"
)

// Tensor is a dense row-major float32 tensor, or, when BF16 is set (LoadOptions.KeepBF16),
// a bf16 one whose Data is nil.
type Tensor struct {
	Shape []int
	Data  []float32
	BF16  []uint16
}

// Model is a config plus its weights, widened to float32.
type Model struct {
	Config  *Config
	Tensors map[string]*Tensor
	// Carried names the tensors of Source (official names: a hybrid
	// checkpoint's model.visual.*, mtp.*) that the trainer does not use; Save
	// copies them byte for byte, one source shard at a time.
	Carried []string
	Source  string
}

// LayerName returns the full name of a per-layer weight, e.g.
// LayerName(3, "self_attn.q_proj.weight").
func LayerName(layer int, suffix string) string {
	return fmt.Sprintf("model.layers.%d.%s", layer, suffix)
}

// Expected lists every tensor the architecture needs with its shape.
func (c *Config) Expected() map[string][]int {
	if c.Hybrid != nil {
		return c.hybridExpected()
	}
	d, q, kv, f := c.HiddenSize, c.QDim(), c.KVDim(), c.IntermediateSize
	m := map[string][]int{
		"model.embed_tokens.weight": {c.VocabSize, d},
		"model.norm.weight":         {d},
	}
	if !c.TieWordEmbeddings {
		m["lm_head.weight"] = []int{c.VocabSize, d}
	}
	for i := 0; i < c.NumLayers; i++ {
		l := func(s string, shape ...int) { m[LayerName(i, s)] = shape }
		l("input_layernorm.weight", d)
		l("post_attention_layernorm.weight", d)
		l("self_attn.q_proj.weight", q, d)
		l("self_attn.k_proj.weight", kv, d)
		l("self_attn.v_proj.weight", kv, d)
		l("self_attn.o_proj.weight", d, q)
		l("mlp.gate_proj.weight", f, d)
		l("mlp.up_proj.weight", f, d)
		l("mlp.down_proj.weight", d, f)
		if c.AttentionBias {
			l("self_attn.q_proj.bias", q)
			l("self_attn.k_proj.bias", kv)
			l("self_attn.v_proj.bias", kv)
		}
		if c.Arch == Qwen3 {
			l("self_attn.q_norm.weight", c.HeadDim)
			l("self_attn.k_norm.weight", c.HeadDim)
		}
	}
	return m
}

// Load reads a model folder: config.json and its safetensors (single file or
// sharded). Every expected tensor must be present with the expected shape and
// a float dtype (F32, BF16, F16, F64). It is LoadWith without options.
func Load(dir string) (*Model, error) { return LoadWith(dir, LoadOptions{}) }

// LoadWith is Load with options.
func LoadWith(dir string, o LoadOptions) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	if err := cfg.MemoryPlan().fits(o.KeepBF16); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	st, err := safetensors.OpenModel(dir)
	if err != nil {
		return nil, fmt.Errorf("open model weights: %w", err)
	}
	defer st.Close()
	m := &Model{Config: cfg, Tensors: map[string]*Tensor{}}
	exp := cfg.Expected()
	for name, want := range exp {
		file := cfg.OfficialName(name)
		ti, ok := st.Info(file)
		if !ok {
			return nil, fmt.Errorf("%w: %s: weight %s missing", ErrUnsupported, dir, file)
		}
		if err := checkWeight(dir, file, ti, want); err != nil {
			return nil, err
		}
		v, shape, err := st.Float32s(file)
		if err != nil {
			return nil, err
		}
		if o.KeepBF16 && ti.DType == safetensors.BF16 && len(shape) == 2 {
			m.Tensors[name] = &Tensor{Shape: shape, BF16: narrowExact(v)}
			// The copy is made: without this the mapped file pages stay resident
			// beside it until Close, as large as the bf16 copies themselves.
			if err := st.Evict(file); err != nil {
				return nil, fmt.Errorf("%s: release mapped %s: %w", dir, file, err)
			}
			continue
		}
		m.Tensors[name] = &Tensor{Shape: shape, Data: v}
	}
	if cfg.Hybrid != nil {
		m.Source = dir
		used := map[string]bool{}
		for n := range exp {
			used[cfg.OfficialName(n)] = true
		}
		for _, n := range st.Names() {
			if !used[n] {
				m.Carried = append(m.Carried, n)
			}
		}
	}
	return m, nil
}

func checkWeight(dir, name string, ti safetensors.TensorInfo, want []int) error {
	switch ti.DType {
	case safetensors.F32, safetensors.BF16, safetensors.F16, safetensors.F64:
	default:
		return fmt.Errorf("%w: %s: weight %s has dtype %s (want BF16, F16 or F32)", ErrUnsupported, dir, name, ti.DType)
	}
	if !slices.Equal(ti.Shape, want) {
		return fmt.Errorf("%w: %s: weight %s has shape %v, config implies %v", ErrUnsupported, dir, name, ti.Shape, want)
	}
	return nil
}

// Get returns a tensor or panics; names come from Expected, which Load checked.
func (m *Model) Get(name string) *Tensor {
	t, ok := m.Tensors[name]
	if !ok {
		panic("model: missing tensor " + name)
	}
	return t
}

// LMHead returns the output projection, the embedding when tied.
func (m *Model) LMHead() *Tensor {
	if m.Config.TieWordEmbeddings {
		return m.Get("model.embed_tokens.weight")
	}
	return m.Get("lm_head.weight")
}

// NewRandom builds a model with deterministic random weights: projections
// normal(0, 1/√in), embedding and LM head normal(0, 2/√hidden) (so that a
// frozen random head can still express confident predictions), norms near one.
func NewRandom(cfg *Config, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 0x71776e))
	m := &Model{Config: cfg, Tensors: map[string]*Tensor{}}
	names := make([]string, 0)
	exp := cfg.Expected()
	for n := range exp {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		shape := exp[n]
		size := 1
		for _, d := range shape {
			size *= d
		}
		v := make([]float32, size)
		if cfg.Hybrid != nil {
			hybridInit(n, shape, v, rng)
			m.Tensors[n] = &Tensor{Shape: shape, Data: v}
			continue
		}
		std := 0.0
		if len(shape) == 2 {
			std = 1 / math.Sqrt(float64(shape[1]))
			if n == "model.embed_tokens.weight" || n == "lm_head.weight" {
				std = 2 / math.Sqrt(float64(cfg.HiddenSize))
			}
		}
		for i := range v {
			if len(shape) == 1 {
				if filepath.Ext(n) == ".bias" {
					v[i] = float32(rng.NormFloat64() * 0.02)
				} else {
					v[i] = float32(1 + 0.1*rng.NormFloat64())
				}
			} else {
				v[i] = float32(rng.NormFloat64() * std)
			}
		}
		m.Tensors[n] = &Tensor{Shape: shape, Data: v}
	}
	return m
}

// Save writes config.json and the weights in dtype, sharded at maxShardBytes
// (0 means one file).
func (m *Model) Save(dir string, dtype safetensors.DType, maxShardBytes int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create model dir: %w", err)
	}
	cfg := *m.Config
	cfg.TorchDType = map[safetensors.DType]string{safetensors.BF16: "bfloat16", safetensors.F16: "float16", safetensors.F32: "float32"}[dtype]
	if cfg.Hybrid != nil {
		return m.saveHybrid(dir, &cfg, dtype, maxShardBytes)
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
		st, err := safetensors.F32Tensor(n, dtype, t.Shape, t.Float32())
		if err != nil {
			return err
		}
		ts = append(ts, st)
	}
	if maxShardBytes <= 0 {
		maxShardBytes = math.MaxInt64
	}
	return safetensors.WriteSharded(dir, ts, maxShardBytes)
}
