//go:build masscuda

package main

import (
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/app"
	"github.com/mass-dev/mass/trainer/cudabackend"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/refbackend"
)

// backends of a CUDA build: the CUDA backend, the default, beside the
// gorgonia reference (--backend reference). The fast CPU backend is left out
// so that this binary needs no OpenBLAS on a GPU host.
func backends() app.Options {
	return app.Options{
		Backends: map[string]trainer.Factory{cudabackend.Name: cudabackend.New, refbackend.Name: refbackend.New},
		Default:  cudabackend.Name,
		Place: func(devices []int, replicas int) (string, trainer.Factory, error) {
			return cudabackend.Name, func(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
				opt := cudabackend.DefaultOptions()
				opt.Devices, opt.Replicas = devices, replicas
				return cudabackend.OpenAny(m.Config, m, a, 0, opt)
			}, nil
		},
	}
}
