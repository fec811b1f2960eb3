package export

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// Merge returns a copy of m with W + scaling·B·A folded into every adapted
// projection. m is not modified.
func Merge(m *model.Model, a *lora.Adapter) (*model.Model, error) {
	out := &model.Model{Config: m.Config, Tensors: make(map[string]*model.Tensor, len(m.Tensors)), Carried: m.Carried, Source: m.Source}
	for n, t := range m.Tensors {
		out.Tensors[n] = t
	}
	for l := 0; l < m.Config.NumLayers; l++ {
		for _, mod := range a.Config.Targets {
			if !lora.Exists(m.Config, l, mod) {
				continue
			}
			pa, pb := a.Param(lora.AName(l, mod)), a.Param(lora.BName(l, mod))
			if pa == nil || pb == nil {
				return nil, fmt.Errorf("adapter lacks layer %d %s", l, mod)
			}
			s := a.Config.ScalingOf(l, mod)
			name := model.LayerName(l, lora.ModulePath(mod)+".weight")
			w := m.Get(name)
			rows, cols, r := w.Shape[0], w.Shape[1], pa.Shape[0]
			if pa.Shape[1] != cols || pb.Shape[0] != rows || pb.Shape[1] != r {
				return nil, fmt.Errorf("adapter %s shapes A%v B%v do not fit weight %v", mod, pa.Shape, pb.Shape, w.Shape)
			}
			d := make([]float32, len(w.Data))
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					var acc float64
					for k := 0; k < r; k++ {
						acc += float64(pb.Data[i*r+k]) * float64(pa.Data[k*cols+j])
					}
					d[i*cols+j] = float32(float64(w.Data[i*cols+j]) + s*acc)
				}
			}
			out.Tensors[name] = &model.Tensor{Shape: w.Shape, Data: d}
		}
	}
	return out, nil
}

// MergedOptions control WriteMerged.
type MergedOptions struct {
	DType         safetensors.DType // BF16 by default
	MaxShardBytes int64             // 0: 5 GB shards, as Hugging Face
	FP8           bool              // block-wise e4m3 for the projection weights
	TokenizerFrom string            // folder whose tokenizer files are copied
}

// WriteMerged merges the adapter and writes a model folder: config.json,
// sharded safetensors (with an index when sharded) and the tokenizer files.
func WriteMerged(dir string, base *model.Model, a *lora.Adapter, o MergedOptions) error {
	merged, err := Merge(base, a)
	if err != nil {
		return err
	}
	if o.DType == "" {
		o.DType = safetensors.BF16
	}
	if o.MaxShardBytes <= 0 {
		o.MaxShardBytes = 5 << 30
	}
	if !o.FP8 {
		if err := merged.Save(dir, o.DType, o.MaxShardBytes); err != nil {
			return err
		}
	} else if err := saveFP8(dir, merged, o); err != nil {
		return err
	}
	if o.TokenizerFrom != "" {
		return model.CopyTokenizer(o.TokenizerFrom, dir)
	}
	return nil
}

// isProjection reports whether a weight is a linear projection inside a layer.
func isProjection(name string) bool {
	return strings.HasPrefix(name, "model.layers.") && strings.HasSuffix(name, "_proj.weight")
}
