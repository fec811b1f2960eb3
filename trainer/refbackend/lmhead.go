package refbackend

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// headChunk is how many supervised rows lmHeadCE turns into logits at once.
const headChunk = 16

// lmHeadCE fuses the LM head with the masked cross-entropy: input x [T, D]
// (final-norm output), loss = mean over supervised positions t of
// logsumexp(x_t·Wᵀ) − x_t·W[labels[t+1]]. Logits exist only for headChunk
// rows at a time, so memory does not grow with T×V; the backward pass
// recomputes them. Numerically it equals MaskedCE(x·Wᵀ).
type lmHeadCE struct {
	t, d, v int
	headT   *tensor.Dense // [D, V]
	head    *tensor.Dense // [V, D]
	labels  []int32
}

func (k *lmHeadCE) name() string { return "LMHeadCE" }
func (k *lmHeadCE) outShape(in []tensor.Shape) (tensor.Shape, error) {
	if in[0].TotalSize() != k.t*k.d {
		return nil, fmt.Errorf("lm head CE: input %v, want [%d %d]", in[0], k.t, k.d)
	}
	return tensor.ScalarShape(), nil
}
func (k *lmHeadCE) diffWRT(n int) []bool { return firstOnly(n) }

func (k *lmHeadCE) rows() []int {
	var r []int
	for t := 0; t+1 < k.t; t++ {
		if k.labels[t+1] >= 0 {
			r = append(r, t)
		}
	}
	return r
}

// probs computes softmax rows for the given positions: [len(rows), V], and
// the per-row loss.
func (k *lmHeadCE) probs(x []float64, rows []int) ([]float64, []float64, error) {
	xs := make([]float64, len(rows)*k.d)
	for i, t := range rows {
		copy(xs[i*k.d:(i+1)*k.d], x[t*k.d:(t+1)*k.d])
	}
	xt := tensor.New(tensor.WithShape(len(rows), k.d), tensor.WithBacking(xs))
	z, err := tensor.MatMul(xt, k.headT)
	if err != nil {
		return nil, nil, fmt.Errorf("lm head: %w", err)
	}
	p := z.Data().([]float64)
	loss := make([]float64, len(rows))
	for i, t := range rows {
		row := p[i*k.v : (i+1)*k.v]
		zy := row[k.labels[t+1]]
		mx := math.Inf(-1)
		for _, s := range row {
			mx = math.Max(mx, s)
		}
		var sum float64
		for j, s := range row {
			row[j] = math.Exp(s - mx)
			sum += row[j]
		}
		loss[i] = mx + math.Log(sum) - zy
		for j := range row {
			row[j] /= sum
		}
	}
	return p, loss, nil
}

func (k *lmHeadCE) forward(in [][]float64, out []float64) {
	rows := k.rows()
	if len(rows) == 0 {
		return
	}
	var total float64
	for s := 0; s < len(rows); s += headChunk {
		_, loss, err := k.probs(in[0], rows[s:min(s+headChunk, len(rows))])
		if err != nil {
			panic(err) // shapes were checked when the op was built
		}
		for _, l := range loss {
			total += l
		}
	}
	out[0] = total / float64(len(rows))
}

func (k *lmHeadCE) backward(_ int, in [][]float64, _, gout, gin []float64) {
	rows := k.rows()
	if len(rows) == 0 {
		return
	}
	c := gout[0] / float64(len(rows))
	for s := 0; s < len(rows); s += headChunk {
		chunk := rows[s:min(s+headChunk, len(rows))]
		p, _, err := k.probs(in[0], chunk)
		if err != nil {
			panic(err)
		}
		for i, t := range chunk {
			p[i*k.v+int(k.labels[t+1])] -= 1
		}
		dz := tensor.New(tensor.WithShape(len(chunk), k.v), tensor.WithBacking(p))
		dx, err := tensor.MatMul(dz, k.head)
		if err != nil {
			panic(err)
		}
		g := dx.Data().([]float64)
		for i, t := range chunk {
			for j := 0; j < k.d; j++ {
				gin[t*k.d+j] = c * g[i*k.d+j]
			}
		}
	}
}
