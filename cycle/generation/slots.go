package generation

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Statuses of an attempt.
const (
	AttemptRunning     = "running"     // started; a crash leaves it so
	AttemptFinished    = "finished"    // its result is the slot's
	AttemptInterrupted = "interrupted" // cut off by a crash or cancel, closed on resume
	AttemptError       = "error"       // the run returned an error
)

// Attempt is one try of a slot.
type Attempt struct {
	N      int    `json:"attempt"`
	ID     string `json:"id"` // the episode id, or the judgment key and attempt
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Slot is one unit of work (an episode or a judgment) with its attempts;
// Result is set once, when an attempt finished.
type Slot[R any] struct {
	Name     string    `json:"slot"`
	Seed     int64     `json:"seed"`
	Attempts []Attempt `json:"attempts"`
	Result   *R        `json:"result,omitempty"`
}

// book is a file of slots, rewritten atomically on every change and safe
// for concurrent slots.
type book[R any] struct {
	path string
	mu   sync.Mutex
	m    map[string]*Slot[R]
}

func openBook[R any](path string) (*book[R], error) {
	b := &book[R]{path: path, m: map[string]*Slot[R]{}}
	var list []*Slot[R]
	if _, err := readJSON(path, &list); err != nil {
		return nil, err
	}
	for _, s := range list {
		b.m[s.Name] = s
	}
	return b, nil
}

// slots returns copies of the slots in name order.
func (b *book[R]) slots() []Slot[R] {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Slot[R], 0, len(b.m))
	for _, s := range b.m {
		c := *s
		c.Attempts = append([]Attempt(nil), s.Attempts...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (b *book[R]) update(name string, seed int64, f func(*Slot[R])) (Slot[R], error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[name]
	if !ok {
		s = &Slot[R]{Name: name, Seed: seed}
		b.m[name] = s
	}
	f(s)
	list := make([]*Slot[R], 0, len(b.m))
	for _, v := range b.m {
		list = append(list, v)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	c := *s
	c.Attempts = append([]Attempt(nil), s.Attempts...)
	return c, writeJSON(b.path, list)
}

// work is how a slot runs: newID names attempt n, do runs it, closeID
// releases an interrupted attempt (nil: nothing to release), and fail,
// when the attempts are spent, turns the last error into a result (nil:
// the error is returned).
type work[R any] struct {
	attempts int
	newID    func(n int) string
	do       func(ctx context.Context, a Attempt) (R, error)
	closeID  func(ctx context.Context, id string) error
	fail     func(err error) *R
}

// run returns the slot's result, running attempts until one finishes. A
// finished slot is never rerun. An attempt a crash left running is closed
// and marked interrupted; the next attempt gets the next number.
func (b *book[R]) run(ctx context.Context, name string, seed int64, w work[R]) (R, error) {
	var zero R
	s, err := b.update(name, seed, func(*Slot[R]) {})
	if err != nil {
		return zero, err
	}
	if s.Result != nil {
		return *s.Result, nil
	}
	if err := b.closeInterrupted(ctx, s, w); err != nil {
		return zero, err
	}
	for {
		s, err := b.update(name, seed, func(s *Slot[R]) {
			s.Attempts = append(s.Attempts, Attempt{N: len(s.Attempts) + 1, Status: AttemptRunning})
			s.Attempts[len(s.Attempts)-1].ID = w.newID(len(s.Attempts))
		})
		if err != nil {
			return zero, err
		}
		i := len(s.Attempts) - 1
		res, err := w.do(ctx, s.Attempts[i])
		if ctx.Err() != nil {
			return zero, ctx.Err() // left running: the resumed run closes it
		}
		if err == nil {
			_, err = b.update(name, seed, func(s *Slot[R]) { s.Attempts[i].Status = AttemptFinished; s.Result = &res })
			return res, err
		}
		s, uerr := b.update(name, seed, func(s *Slot[R]) { s.Attempts[i].Status, s.Attempts[i].Error = AttemptError, err.Error() })
		if uerr != nil {
			return zero, uerr
		}
		if errorsIn(s) < w.attempts {
			continue
		}
		if w.fail == nil {
			return zero, fmt.Errorf("%s: %d attempts failed, last: %w", name, errorsIn(s), err)
		}
		r := w.fail(err)
		_, uerr = b.update(name, seed, func(s *Slot[R]) { s.Result = r })
		return *r, uerr
	}
}

func (b *book[R]) closeInterrupted(ctx context.Context, s Slot[R], w work[R]) error {
	for i, a := range s.Attempts {
		if a.Status != AttemptRunning {
			continue
		}
		if w.closeID != nil {
			if err := w.closeID(ctx, a.ID); err != nil {
				return fmt.Errorf("close interrupted attempt %d of %s: %w", a.N, s.Name, err)
			}
		}
		if _, err := b.update(s.Name, s.Seed, func(s *Slot[R]) { s.Attempts[i].Status = AttemptInterrupted }); err != nil {
			return err
		}
	}
	return nil
}

func errorsIn[R any](s Slot[R]) int {
	n := 0
	for _, a := range s.Attempts {
		if a.Status == AttemptError {
			n++
		}
	}
	return n
}
