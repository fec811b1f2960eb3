//go:build masscuda || masscudaemu

// Package device is the CUDA backend's device layer on gorgonia.org/cu: one context owned
// by one locked OS thread, a stream, the embedded kernel modules, checked launches and a
// caching allocator. Build with -tags masscuda (importing it then needs a GPU driver at
// start-up); with -tags masscudaemu the same API runs on the CPU emulator of package emu.
package device
