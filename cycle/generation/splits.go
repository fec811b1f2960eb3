package generation

import (
	"context"
	"errors"
	"fmt"

	"github.com/mass-dev/mass/taskspec"
)

// Splits answers a task's split as its spec says ("" counts as train).
type Splits interface {
	Split(ctx context.Context, task string) (string, error)
}

// ErrSplit marks a task a generation must not train on.
var ErrSplit = errors.New("not a train task")

// CheckSplits is the split guard, the one place that decides which tasks a
// generation may train on: every task must be split: train. A held-out
// (test) or excluded task is refused naming the task and its split, like
// the reference's collect, which raises on a task outside its train list.
// Job submission (Validate) and stage eligible both call it.
func CheckSplits(ctx context.Context, s Splits, tasks []string) error {
	if s == nil {
		return nil
	}
	for _, t := range tasks {
		split, err := s.Split(ctx, t)
		if err != nil {
			return fmt.Errorf("split of task %s: %w", t, err)
		}
		if split == "" {
			split = taskspec.SplitTrain
		}
		if split != taskspec.SplitTrain {
			return fmt.Errorf("task %s has split %q: a generation trains only on split: train tasks (held-out and excluded tasks never train): %w", t, split, ErrSplit)
		}
	}
	return nil
}
