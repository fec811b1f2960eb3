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
		name := prefix + p.Name
		if a.nested && prefix == PEFTPrefix {
			name = prefix + nestedName(p.Name)
		}
		t, err := safetensors.F32Tensor(name, safetensors.F32, p.Shape, p.Data)
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
		p := a.Param(internalName(strings.TrimPrefix(name, PEFTPrefix)))
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

// languagePrefix is where a Qwen3.5/3.6 checkpoint keeps the text decoder.
const languagePrefix = "model.language_model."

// nestedName maps model.layers.N… to model.language_model.layers.N….
func nestedName(name string) string {
	if strings.HasPrefix(name, "model.") {
		return languagePrefix + strings.TrimPrefix(name, "model.")
	}
	return name
}

// internalName undoes nestedName.
func internalName(name string) string {
	if strings.HasPrefix(name, languagePrefix) {
		return "model." + strings.TrimPrefix(name, languagePrefix)
	}
	return name
}
