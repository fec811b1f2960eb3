//go:build !masscuda

package main

import (
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/app"
	"github.com/mass-dev/mass/trainer/fast"
	"github.com/mass-dev/mass/trainer/refbackend"
)

// backends of the plain build: the fast CPU backend (OpenBLAS), the default,
// and the gorgonia reference.
func backends() app.Options {
	return app.Options{
		Backends: map[string]trainer.Factory{fast.Name: fast.New, refbackend.Name: refbackend.New},
		Default:  fast.Name,
	}
}
