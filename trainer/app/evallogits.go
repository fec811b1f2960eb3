package app

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/train"
)

// LogitsTensor names window i's logits in eval --logits' file.
func LogitsTensor(i int) string { return "logits." + strconv.Itoa(i) }

// writeLogits writes every row's [len(input_ids), vocab] float32 logits to path as
// safetensors (tensor LogitsTensor(i) for row i, metadata: backend, vocab, windows), so
// two backends can be compared on logits and not only on losses.
func writeLogits(ctx context.Context, path string, be trainer.Backend, rows []sft.Row, vocab int) error {
	ts := make([]safetensors.Tensor, 0, len(rows))
	for i, r := range rows {
		w := train.Window(r)
		if len(w.InputIDs) == 0 {
			return fmt.Errorf("logits: row %d has no input_ids", i)
		}
		lg, err := be.Logits(ctx, w)
		if err != nil {
			return fmt.Errorf("logits of window %d: %w", i, err)
		}
		if len(lg) != len(w.InputIDs)*vocab {
			return fmt.Errorf("logits of window %d: backend %s returned %d values for %d×%d", i, be.Name(), len(lg), len(w.InputIDs), vocab)
		}
		t, err := safetensors.F32Tensor(LogitsTensor(i), safetensors.F32, []int{len(w.InputIDs), vocab}, lg)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	meta := map[string]string{"backend": be.Name(), "vocab": strconv.Itoa(vocab), "windows": strconv.Itoa(len(rows))}
	if err := safetensors.Write(path, ts, meta); err != nil {
		return fmt.Errorf("write logits: %w", err)
	}
	return nil
}
