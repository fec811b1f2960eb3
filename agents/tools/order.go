package tools

import "context"

// The agent calls of one assistant message run at the same time (as in
// qwen-code); what a delegate does first — naming its sub-agent — must
// still happen in call order so that ids ("worker-N") and the ledger's
// agent_start records follow the message. An agent loop gives each call of
// a batch a place in line with WithTurnOrder; a Delegate names its
// sub-agent inside InOrder.

type orderKey struct{}

type orderSlot struct {
	wait <-chan struct{} // closed when the previous call has taken its turn; nil for the first
	done chan struct{}   // closed when this call has taken its turn
}

// WithTurnOrder returns ctx carrying one place in line: InOrder on it waits
// for wait (nil: nobody before) and then closes done. The caller must close
// done itself if the call never reaches InOrder (Env.Call does, see
// releaseOrder).
func WithTurnOrder(ctx context.Context, wait <-chan struct{}, done chan struct{}) context.Context {
	return context.WithValue(ctx, orderKey{}, &orderSlot{wait: wait, done: done})
}

// InOrder runs f after every earlier call of the batch ran its own, then
// lets the next one go. Without a place in line it just runs f. If ctx
// ends first f does not run and the error is returned.
func InOrder(ctx context.Context, f func()) error {
	s, _ := ctx.Value(orderKey{}).(*orderSlot)
	if s == nil {
		f()
		return nil
	}
	if s.wait != nil {
		select {
		case <-s.wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f()
	s.release()
	return nil
}

func (s *orderSlot) release() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// ReleaseOrder lets the next call of the batch go when this one ended
// without taking its turn (an argument error, a denied call). It waits for
// the earlier calls first, so the order still holds. Safe to call twice.
func ReleaseOrder(ctx context.Context) {
	s, _ := ctx.Value(orderKey{}).(*orderSlot)
	if s == nil {
		return
	}
	if s.wait != nil {
		select {
		case <-s.wait:
		case <-ctx.Done():
		}
	}
	s.release()
}
