//go:build masscudaemu && !masscuda

package cublaslt

import (
	"unsafe"

	"github.com/mass-dev/mass/cuda"
)

// Handle is the emulated cuBLASLt (build tag masscudaemu): products in Go over host memory,
// bf16 operands widened exactly, float64 accumulation.
type Handle struct {
	Path  string
	plans plans[planKey]
}

// Open returns the emulated handle.
func Open(string) (*Handle, error) { return &Handle{Path: "emulated (Go)"}, nil }

// Version returns 0 for the emulator.
func (h *Handle) Version() int { return 0 }

// Plans returns how many matmul plans were built so far.
func (h *Handle) Plans() int { return h.plans.Built }

// Close does nothing.
func (h *Handle) Close() error { return nil }

func mem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func loadBF16(p uintptr, i int64) float64 {
	return float64((*(*cuda.BF16)(unsafe.Add(mem(p), 2*i))).Float32())
}

// Matmul computes g on the host.
func (h *Handle) Matmul(g Gemm, _ uintptr, ws int64, _ uintptr) error {
	if err := g.check(); err != nil {
		return err
	}
	// The plan cache is kept as on the GPU, so that its keys are tested here.
	if _, err := h.plans.get(g.key(ws), func() (planKey, error) { return g.key(ws), nil }, func(planKey) {}); err != nil {
		return err
	}
	lda, ldb, ldc := g.leading()
	for bt := 0; bt < max(g.Batch, 1); bt++ {
		oa, ob, oc := int64(bt)*g.StrideA, int64(bt)*g.StrideB, int64(bt)*g.StrideC
		for i := 0; i < g.M; i++ {
			for j := 0; j < g.N; j++ {
				var s float64
				for p := 0; p < g.K; p++ {
					ai := oa + int64(i*lda+p)
					if g.TransA {
						ai = oa + int64(p*lda+i)
					}
					bi := ob + int64(p*ldb+j)
					if g.TransB {
						bi = ob + int64(j*ldb+p)
					}
					s += loadBF16(g.A, ai) * loadBF16(g.B, bi)
				}
				ci := oc + int64(i*ldc+j)
				if g.CType == F32 {
					c := (*float32)(unsafe.Add(mem(g.C), 4*ci))
					v := float64(g.Alpha) * s
					if g.Beta != 0 {
						v += float64(g.Beta) * float64(*c)
					}
					*c = float32(v)
				} else {
					c := (*cuda.BF16)(unsafe.Add(mem(g.C), 2*ci))
					v := float64(g.Alpha) * s
					if g.Beta != 0 {
						v += float64(g.Beta) * float64(c.Float32())
					}
					*c = cuda.ToBF16(float32(v))
				}
			}
		}
	}
	return nil
}
