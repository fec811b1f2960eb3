package train

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/mass-dev/mass/trainer/sft"
)

// ToyRows makes a synthetic, learnable SFT dataset for tiny-model runs: each
// window is an arithmetic progression x_t = first + stride·t over the
// symbols [4, 4+symbols) (mod symbols); the first prompt tokens are masked,
// the rest supervised. The stride (1..3) must be read from the prompt, so
// the task needs attention, not only a bigram table.
func ToyRows(n, seqLen, symbols int, seed uint64) ([]sft.Row, error) {
	const prompt = 3
	if seqLen <= prompt+1 || symbols < 4 {
		return nil, fmt.Errorf("toy data needs seq > %d and symbols >= 4", prompt+1)
	}
	rng := rand.New(rand.NewPCG(seed, 0x746f79))
	rows := make([]sft.Row, n)
	for i := range rows {
		first, stride := rng.IntN(symbols), 1+rng.IntN(3)
		ids := make([]int32, seqLen)
		labels := make([]int32, seqLen)
		sup := 0
		for t := range ids {
			ids[t] = int32(4 + (first+stride*t)%symbols)
			labels[t] = sft.IgnoreIndex
			if t >= prompt {
				labels[t] = ids[t]
				sup++
			}
		}
		role := sft.RoleWorker
		if i%3 == 0 {
			role = sft.RoleOrchestrator
		}
		rows[i] = sft.Row{InputIDs: ids, Labels: labels, NTokens: seqLen, NLossTokens: sup,
			Task: fmt.Sprintf("toy-%d", i%4), Role: role, IsMain: role == sft.RoleOrchestrator, Window: i}
	}
	return rows, nil
}

// WriteToyRows writes ToyRows as rows.jsonl.
func WriteToyRows(w io.Writer, n, seqLen, symbols int, seed uint64) error {
	rows, err := ToyRows(n, seqLen, symbols, seed)
	if err != nil {
		return err
	}
	return sft.WriteRows(w, rows)
}
