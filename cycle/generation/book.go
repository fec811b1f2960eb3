package generation

import "context"

// Book is the exported face of the slot file (slots.go), for the other
// job kinds that run durable slots (rollout, judge-pairs): a file of slots
// with numbered attempts, rewritten atomically on every change, safe for
// concurrent slots.
type Book[R any] struct{ b *book[R] }

// Work is how a slot runs: NewID names attempt n, Do runs it, Close
// releases an attempt a crash left running (nil: nothing to release), and
// Fail, when Attempts tries returned errors, turns the last error into a
// result (nil: the error is returned).
type Work[R any] struct {
	Attempts int
	NewID    func(n int) string
	Do       func(ctx context.Context, a Attempt) (R, error)
	Close    func(ctx context.Context, id string) error
	Fail     func(err error) *R
}

// OpenBook reads the slot file at path (missing: empty).
func OpenBook[R any](path string) (*Book[R], error) {
	b, err := openBook[R](path)
	if err != nil {
		return nil, err
	}
	return &Book[R]{b}, nil
}

// Slots returns copies of the slots in name order.
func (b *Book[R]) Slots() []Slot[R] { return b.b.slots() }

// Run returns the slot's result, running attempts until one finishes; a
// finished slot is never rerun (see book.run).
func (b *Book[R]) Run(ctx context.Context, name string, seed int64, w Work[R]) (R, error) {
	return b.b.run(ctx, name, seed, work[R]{attempts: w.Attempts, newID: w.NewID, do: w.Do, closeID: w.Close, fail: w.Fail})
}

// Parallel runs f(0..n-1), at most conc at once; the first error cancels
// the rest and is returned.
func Parallel(ctx context.Context, n, conc int, f func(ctx context.Context, i int) error) error {
	return parallel(ctx, n, conc, f)
}

// SeedOf derives a seed from a base seed and names (stable across runs).
func SeedOf(seed int64, names ...string) int64 { return seedOf(seed, names...) }

// WriteJSON writes v to path atomically; ReadJSON reads it back (ok is
// false when the file does not exist).
func WriteJSON(path string, v any) error { return writeJSON(path, v) }

// ReadJSON reads path into v; ok is false when the file does not exist.
func ReadJSON(path string, v any) (ok bool, err error) { return readJSON(path, v) }
