//go:build masscuda || masscudaemu

package kernels

import (
	"testing"

	"github.com/mass-dev/mass/cuda"
)

// TestCopyColsAdd checks copy_cols_f32 both ways (columns out of a wider matrix and back
// into one whose other columns must survive) and add_f32, against the Go reference.
func TestCopyColsAdd(t *testing.T) {
	r := rng(t)
	const rows, wide, off, n = 37, 24, 16, 8
	src := randF32(rows*wide, r.NormFloat64)
	back := randF32(rows*wide, r.NormFloat64)
	b := randF32(rows*n, r.NormFloat64)
	narrow := make([]float32, rows*n)
	cuda.CopyCols(narrow, n, 0, src, wide, off, rows, n)
	wantBack := append([]float32(nil), back...)
	cuda.CopyCols(wantBack, wide, off, narrow, n, 0, rows, n)
	sum := make([]float32, rows*n)
	for i := range sum {
		sum[i] = narrow[i] + b[i]
	}
	run(t, func(e *env) {
		sm, dst, bm := e.f32(src), e.out(rows*n, 4), e.f32(back)
		e.must(ops.CopyColsF32(dst, n, sm+4*off, wide, rows, n))
		e.check("copy_cols_f32 out", e.getF32(dst, rows*n), narrow, 0)
		e.must(ops.CopyColsF32(bm+4*off, wide, dst, n, rows, n))
		e.check("copy_cols_f32 in", e.getF32(bm, rows*wide), wantBack, 0)
		e.must(ops.AddF32(dst, e.f32(b), rows*n))
		e.check("add_f32", e.getF32(dst, rows*n), sum, 0)
	})
}
