//go:build masscuda || masscudaemu

// Package kernels wraps each CUDA kernel of package cuda, and the cuBLASLt products that
// surround them, in a typed Go call on the device layer. Every call must run inside
// device.Device.Do.
package kernels
