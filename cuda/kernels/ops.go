//go:build masscuda || masscudaemu

package kernels

import (
	"fmt"
	"unsafe"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/cublaslt"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
)

// WorkspaceBytes is the cuBLASLt workspace Ops keeps (32 MiB covers Hopper's kernels).
const WorkspaceBytes = 32 << 20

// Ops launches kernels and products on one device's stream.
type Ops struct {
	X  *device.Exec
	Lt *cublaslt.Handle
	ws devmem.Block
}

// New opens cuBLASLt from ltDir (see cublaslt.Open) and allocates its workspace; call it
// inside Do.
func New(x *device.Exec, ltDir string) (*Ops, error) {
	lt, err := cublaslt.Open(ltDir)
	if err != nil {
		return nil, err
	}
	ws, err := x.Alloc(WorkspaceBytes)
	if err != nil {
		return nil, fmt.Errorf("cublasLt workspace: %w", err)
	}
	if err := x.SetMaxDynamicSmem("flash_attn_bwd", flashBwdSmem(128)); err != nil {
		return nil, err
	}
	if err := setTCSmem(x); err != nil {
		return nil, err
	}
	return &Ops{X: x, Lt: lt, ws: ws}, nil
}

// Close releases the workspace and the cuBLASLt handle.
func (o *Ops) Close() error {
	o.X.Free(o.ws)
	return o.Lt.Close()
}

// Gemm runs a row-major product (see cublaslt.Gemm) on the stream.
func (o *Ops) Gemm(g cublaslt.Gemm) error {
	if err := o.X.Library(g.A, g.B, g.C); err != nil {
		return fmt.Errorf("gemm %dx%dx%d: %w", g.M, g.N, g.K, err)
	}
	return o.Lt.Matmul(g, o.ws.Ptr, WorkspaceBytes, o.X.Stream())
}

func (o *Ops) elems(n int) (device.Dim, device.Dim) {
	b := (n + 255) / 256
	b = max(1, min(b, o.X.Info.SMs*16))
	return device.D1(b), device.D1(256)
}

func (o *Ops) launchN(name string, n int, args ...device.Arg) error {
	g, b := o.elems(n)
	return o.X.Launch(name, g, b, 0, args...)
}

func rows(n int) device.Dim { return device.D1(max(n, 1)) }

// Upload copies host data into a new device block.
func Upload[T any](x *device.Exec, src []T) (devmem.Block, error) {
	var z T
	n := int64(len(src)) * int64(unsafe.Sizeof(z))
	b, err := x.Alloc(n)
	if err != nil {
		return b, err
	}
	if n > 0 {
		err = x.CopyIn(b.Ptr, unsafe.Pointer(&src[0]), n)
	}
	return b, err
}

// Download copies a device block into a new host slice of n elements.
func Download[T any](x *device.Exec, b devmem.Block, n int) ([]T, error) {
	out := make([]T, n)
	var z T
	if n == 0 {
		return out, nil
	}
	err := x.CopyOut(unsafe.Pointer(&out[0]), b.Ptr, int64(n)*int64(unsafe.Sizeof(z)))
	return out, err
}

// UploadBF16 rounds f to bf16 and uploads it.
func UploadBF16(x *device.Exec, f []float32) (devmem.Block, error) {
	return Upload(x, cuda.EncodeBF16(f))
}

// DownloadBF16 downloads n bf16 values widened to float32.
func DownloadBF16(x *device.Exec, b devmem.Block, n int) ([]float32, error) {
	h, err := Download[cuda.BF16](x, b, n)
	return cuda.DecodeBF16(h), err
}
