// Package cuda holds the CUDA backend's kernels: their sources (*.cu), the PTX compiled
// from them and embedded here, and a plain Go reference implementation of each kernel that
// the GPU check compares against. Nothing in this package imports gorgonia.org/cu; the
// device layer lives in the build-tagged subpackages.
package cuda
