package train

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
)

// updater applies the optimizer step: on the host (optim.ClipGradNorm and optim.AdamW over
// Param.Grad) or, when the backend implements trainer.DeviceOptimizer, on the device, where
// the masters, gradients and moments then live (pull copies them back before a save).
type updater struct {
	dev     trainer.DeviceOptimizer
	adapter *lora.Adapter
	opt     *optim.AdamW
}

// newUpdater starts the device optimizer when be has one (after a resume has loaded the
// adapter and the moments on the host).
func newUpdater(be trainer.Backend, adapter *lora.Adapter, opt *optim.AdamW) (*updater, error) {
	u := &updater{adapter: adapter, opt: opt}
	if d, ok := be.(trainer.DeviceOptimizer); ok {
		if err := d.StartOptimizer(opt); err != nil {
			return nil, fmt.Errorf("start device optimizer: %w", err)
		}
		u.dev = d
	}
	return u, nil
}

// step clips the gradients, applies AdamW with lr and returns the norm before clipping.
func (u *updater) step(ctx context.Context, lr float64) (float64, error) {
	if u.dev != nil {
		return u.dev.OptimizerStep(ctx, lr)
	}
	norm := optim.ClipGradNorm(u.adapter.Params, u.opt.Cfg.Clip)
	return norm, u.opt.Step(u.adapter.Params, lr)
}

// save runs fn (a checkpoint or best-adapter write) after pull, and not at all when pull
// fails, so that nothing stale is saved.
func (u *updater) save(fn func() error) error {
	if err := u.pull(); err != nil {
		return err
	}
	return fn()
}

// pull brings the device optimizer's masters and moments into the adapter and opt (a
// no-op on the host), so that a checkpoint or the best adapter saves current values.
func (u *updater) pull() error {
	if u.dev == nil {
		return nil
	}
	if err := u.dev.PullOptimizer(u.opt); err != nil {
		return fmt.Errorf("copy optimizer state from the device: %w", err)
	}
	return nil
}
