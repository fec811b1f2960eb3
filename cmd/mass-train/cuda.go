//go:build masscuda

package main

import (
	"github.com/mass-dev/mass/trainer/app"
	"github.com/mass-dev/mass/trainer/cudabackend"
)

// A CUDA build registers its backend beside the CPU reference; --backend cuda selects it.
func init() { app.Backends[cudabackend.Name] = cudabackend.New }
