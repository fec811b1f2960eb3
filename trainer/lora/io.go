package lora

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mass-dev/mass/trainer/safetensors"
)

// PEFTPrefix is the name prefix PEFT writes before model parameter names.
const PEFTPrefix = "base_model.model."

// Tensors returns the parameters as fp32 safetensors tensors named prefix+name.
func (a *Adapter) Tensors(prefix string) ([]safetensors.Tensor, error) {
	out := make([]safetensors.Tensor, 0, len(a.Params))
	for _, p := range a.Params {
		t, err := safetensors.F32Tensor(prefix+p.Name, safetensors.F32, p.Shape, p.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Save writes the parameter values to a safetensors file.
func (a *Adapter) Save(path, prefix string, meta map[string]string) error {
	ts, err := a.Tensors(prefix)
	if err != nil {
		return err
	}
	return safetensors.Write(path, ts, meta)
}

// Load replaces every parameter's values from a safetensors file whose names
// are the parameter names, with or without the PEFT prefix. Every parameter
// must be present with its shape; extra tensors are an error too, so that an
// adapter for another configuration is not silently half-loaded.
func (a *Adapter) Load(path string) error {
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	seen := 0
	for name := range f.Header.Tensors {
		p := a.Param(strings.TrimPrefix(name, PEFTPrefix))
		if p == nil {
			return fmt.Errorf("%s: tensor %s is not a parameter of this adapter (targets %v, rank %d)", path, name, a.Config.Targets, a.Config.Rank)
		}
		v, shape, err := f.Float32s(name)
		if err != nil {
			return err
		}
		if !slices.Equal(shape, p.Shape) {
			return fmt.Errorf("%s: tensor %s has shape %v, want %v", path, name, shape, p.Shape)
		}
		copy(p.Data, v)
		seen++
	}
	if seen != len(a.Params) {
		return fmt.Errorf("%s holds %d of the adapter's %d tensors", path, seen, len(a.Params))
	}
	return nil
}
