//go:build ignore

// gen writes kernels_gen.h, the emulator's in-package copy of the kernel sources.
package main

import (
	"log"
	"os"

	"github.com/mass-dev/mass/cuda/internal/emusrc"
)

func main() {
	b, err := emusrc.Build("..")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(emusrc.File, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
