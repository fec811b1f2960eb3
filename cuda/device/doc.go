//go:build masscuda || masscudaemu

// Package device is the CUDA backend's device layer on gorgonia.org/cu: one context owned
// by one locked OS thread, a stream, the embedded kernel modules, checked launches and a
// caching allocator. Build with -tags cuda; importing it needs a GPU driver at start-up.
package device
