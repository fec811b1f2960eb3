package fast

import (
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// headBlock is the number of LM-head rows widened from bf16 at a time.
const headBlock = 4096

// matOf returns a frozen matrix for the backend to hold: bf16 when the model holds it so
// (model.LoadOptions.KeepBF16) or when every float32 value is exactly a bf16 (a BF16
// checkpoint widened by model.Load; the backend then keeps half the bytes and the caller's
// float32 copy can be collected), else the model's float32 tensor itself. bf16 matrices
// are widened exactly, a product at a time.
func matOf(t *model.Tensor) ([]float32, []uint16) {
	if t.BF16 != nil {
		return nil, t.BF16
	}
	if h := model.ExactBF16(t.Data); h != nil {
		return nil, h
	}
	return t.Data, nil
}

// widen returns h as float32, widened over the cores (exact).
func widen(h []uint16, dst []float32) []float32 {
	if cap(dst) < len(h) {
		dst = make([]float32, len(h))
	}
	dst = dst[:len(h)]
	const step = 1 << 14
	parallelRows((len(h)+step-1)/step, func(b0, b1 int) {
		for i := b0 * step; i < min(b1*step, len(h)); i++ {
			dst[i] = safetensors.BF16ToF32(h[i])
		}
	})
	return dst
}

// weight returns the projection's [out, in] float32 weights: its own, or a widened copy.
func (p *proj) weight() []float32 {
	if p.wh == nil {
		return p.w
	}
	return widen(p.wh, nil)
}

// embedRow copies the embedding of id into dst.
func (b *Backend) embedRow(dst []float32, id int) {
	d := len(dst)
	if b.embedH == nil {
		copy(dst, b.embed[id*d:])
		return
	}
	for j, h := range b.embedH[id*d : (id+1)*d] {
		dst[j] = safetensors.BF16ToF32(h)
	}
}

// headLogits is z [m, V] = x [m, D]·headᵀ.
func (b *Backend) headLogits(m int, x, z []float32) {
	d, v := b.cfg.HiddenSize, b.cfg.VocabSize
	if b.headH == nil {
		gemm(false, true, m, v, d, 1, x, d, b.head, d, 0, z, v)
		return
	}
	var buf []float32
	for v0 := 0; v0 < v; v0 += headBlock {
		v1 := min(v0+headBlock, v)
		buf = widen(b.headH[v0*d:v1*d], buf)
		gemm(false, true, m, v1-v0, d, 1, x, d, buf, d, 0, z[v0:], v)
	}
}

// headBack is dx [m, D] = z [m, V]·head.
func (b *Backend) headBack(m int, z, dx []float32) {
	d, v := b.cfg.HiddenSize, b.cfg.VocabSize
	if b.headH == nil {
		gemm(false, false, m, d, v, 1, z, v, b.head, d, 0, dx, d)
		return
	}
	var buf []float32
	for v0 := 0; v0 < v; v0 += headBlock {
		v1 := min(v0+headBlock, v)
		buf = widen(b.headH[v0*d:v1*d], buf)
		beta := float32(1)
		if v0 == 0 {
			beta = 0
		}
		gemm(false, false, m, d, v1-v0, 1, z[v0:], v, buf, d, beta, dx, d)
	}
}
