package fast

import (
	"math"

	"github.com/mass-dev/mass/trainer"
)

// headChunkFloats bounds one chunk's logits (64 MiB of float32).
const headChunkFloats = 1 << 24

// lmHead returns the mean cross-entropy over the supervised positions
// (position i predicts labels[i+1]), their count and, with grad, the gradient
// of that mean with respect to the final hidden states hf [t, D]. Only the
// supervised rows are projected, a chunk at a time; each chunk's logits turn
// into their gradient in place right after their loss is read.
func (r *run) lmHead(hf []float32, grad bool) (float64, int, []float32) {
	d, v := r.b.cfg.HiddenSize, r.b.cfg.VocabSize
	var rows []int
	for i := 0; i+1 < r.t; i++ {
		if r.labels[i+1] != trainer.IgnoreIndex {
			rows = append(rows, i)
		}
	}
	n := len(rows)
	if n == 0 {
		return 0, 0, nil
	}
	var dhf []float32
	if grad {
		dhf = make([]float32, len(hf))
	}
	chunk := max(1, min(n, headChunkFloats/v))
	x := make([]float32, chunk*d)
	dx := make([]float32, chunk*d)
	z := make([]float32, chunk*v)
	inv := float32(1 / float64(n))
	var total float64
	for c0 := 0; c0 < n; c0 += chunk {
		c1 := min(c0+chunk, n)
		m := c1 - c0
		for i := 0; i < m; i++ {
			copy(x[i*d:(i+1)*d], hf[rows[c0+i]*d:])
		}
		r.b.headLogits(m, x, z)
		losses := make([]float64, m)
		parallelRows(m, func(i0, i1 int) {
			for i := i0; i < i1; i++ {
				row := z[i*v : (i+1)*v]
				y := r.labels[rows[c0+i]+1]
				zy := row[y]
				mx := maxOf(row)
				sum := expShift(row, mx)
				losses[i] = float64(mx) + math.Log(float64(sum)) - float64(zy)
				if grad {
					s := inv / sum
					for j := range row {
						row[j] *= s
					}
					row[y] -= inv
				}
			}
		})
		for _, l := range losses {
			total += l
		}
		if !grad {
			continue
		}
		r.b.headBack(m, z, dx)
		for i := 0; i < m; i++ {
			copy(dhf[rows[c0+i]*d:(rows[c0+i]+1)*d], dx[i*d:(i+1)*d])
		}
	}
	return total / float64(n), n, dhf
}

// allLogits projects every position: [t, V] row-major, and the loss.
func (r *run) allLogits(hf []float32) (runResult, error) {
	z := make([]float32, r.t*r.b.cfg.VocabSize)
	r.b.headLogits(r.t, hf, z)
	loss, n, _ := r.lmHead(hf, false)
	return runResult{loss: trainer.WindowLoss{Loss: loss, Tokens: n}, logits: z}, nil
}
