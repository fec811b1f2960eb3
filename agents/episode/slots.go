package episode

import "context"

// DefaultParallelAgents bounds the sub-agents of one episode that run at
// the same time when Deps.ParallelAgents is 0.
const DefaultParallelAgents = 4

// slots is a counting semaphore: the per-episode bound on sub-agents
// running at once. Waiters are served in the order they came (a channel
// queues blocked senders first in, first out).
type slots chan struct{}

func newSlots(n int) slots {
	if n <= 0 {
		n = DefaultParallelAgents
	}
	return make(slots, n)
}

// acquire takes a slot, or returns ctx's error; release gives it back.
func (s slots) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
