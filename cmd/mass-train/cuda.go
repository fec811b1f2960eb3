//go:build masscuda

package main

import (
	"github.com/mass-dev/mass/trainer/app"
	"github.com/mass-dev/mass/trainer/cudabackend"
)

// A CUDA build registers its backend beside the CPU reference and makes it
// the default; --backend cpu still selects the reference.
func init() {
	app.Backends[cudabackend.Name] = cudabackend.New
	app.DefaultBackend = cudabackend.Name
}
