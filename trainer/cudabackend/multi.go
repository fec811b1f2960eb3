//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// Multi runs several devices on one host as the paper did: Replicas data-parallel
// replicas, each a pipeline over len(Devices)/Replicas devices (layers split evenly, the
// embedding on a replica's first device and the LM head on its last). A batch's windows
// are dealt to the replicas in turn (window i to replica i mod R, with window i's dropout
// stream, so the split changes no mask); after the windows, every replica's LoRA gradients
// are summed into replica 0's by peer copies and handed to the host optimizer, and the
// next call's adapter reaches replica 0 from the host and the others by peer copies. The
// batch's loss scale already divides by the whole batch, so the sum is the average the
// replicas' windows contribute. There is no device optimizer here (trainer/train uses the
// host one). Not safe for concurrent use; Close releases every device.
type Multi struct {
	cfg  *model.Config
	reps []*pipeline
}

var _ trainer.Backend = (*Multi)(nil)

// OpenAny opens one device, or a Multi when opt names more than one device or replica.
func OpenAny(cfg *model.Config, m *model.Model, a *lora.Adapter, seed uint32, opt Options) (trainer.Backend, error) {
	if len(opt.Devices) <= 1 && opt.Replicas <= 1 {
		if len(opt.Devices) == 1 {
			opt.Device = opt.Devices[0]
		}
		return Open(cfg, m, a, seed, opt)
	}
	return OpenMulti(cfg, m, a, seed, opt)
}

// OpenMulti opens opt.Devices as opt.Replicas pipelines.
func OpenMulti(cfg *model.Config, m *model.Model, a *lora.Adapter, seed uint32, opt Options) (*Multi, error) {
	devs, r := opt.Devices, max(opt.Replicas, 1)
	if len(devs) == 0 {
		devs = []int{opt.Device}
	}
	seen := map[int]bool{}
	for _, d := range devs {
		if seen[d] {
			return nil, fmt.Errorf("%w: device %d listed twice in --devices", model.ErrUnsupported, d)
		}
		seen[d] = true
	}
	if len(devs)%r != 0 {
		return nil, fmt.Errorf("%w: %d devices do not split into %d replicas; give a multiple of --replicas", model.ErrUnsupported, len(devs), r)
	}
	per := len(devs) / r
	if per > cfg.NumLayers {
		return nil, fmt.Errorf("%w: %d devices per replica for %d layers; use at most one device per layer", model.ErrUnsupported, per, cfg.NumLayers)
	}
	mb := &Multi{cfg: cfg}
	for i := 0; i < r; i++ {
		p := &pipeline{}
		mb.reps = append(mb.reps, p)
		for s, lr := range StageLayers(cfg.NumLayers, per) {
			st, err := openStage(cfg, m, a, seed, opt, devs[i*per+s], lr[0], lr[1])
			if err != nil {
				mb.Close()
				return nil, fmt.Errorf("replica %d stage %d (device %d): %w", i, s, devs[i*per+s], err)
			}
			p.st = append(p.st, st)
		}
	}
	return mb, nil
}

// Name implements trainer.Backend.
func (mb *Multi) Name() string { return Name }

// Close implements trainer.Backend.
func (mb *Multi) Close() error {
	var errs []error
	for _, p := range mb.reps {
		for _, st := range p.st {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// ForwardBackward implements trainer.Backend.
func (mb *Multi) ForwardBackward(ctx context.Context, batch trainer.Batch, scale float64) ([]trainer.WindowLoss, error) {
	if err := mb.syncLoRA(true); err != nil {
		return nil, err
	}
	out, err := mb.run(ctx, batch.Windows, func(i int) runOpts {
		return runOpts{train: true, seed: mix(batch.Seed, uint64(i)), gradScale: scale}
	})
	if err != nil {
		return nil, err
	}
	return out, mb.reduceGrads()
}

// Loss implements trainer.Backend.
func (mb *Multi) Loss(ctx context.Context, windows []trainer.Window) ([]trainer.WindowLoss, error) {
	if err := mb.syncLoRA(false); err != nil {
		return nil, err
	}
	return mb.run(ctx, windows, func(int) runOpts { return runOpts{} })
}

// Logits implements trainer.Backend (on replica 0).
func (mb *Multi) Logits(ctx context.Context, w trainer.Window) ([]float32, error) {
	if err := mb.syncLoRA(false); err != nil {
		return nil, err
	}
	r, err := mb.reps[0].window(w, runOpts{logits: true})
	return r.logits, err
}

// run deals windows to the replicas and runs the replicas at once.
func (mb *Multi) run(ctx context.Context, windows []trainer.Window, ro func(i int) runOpts) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(windows))
	errs := make([]error, len(mb.reps))
	var wg sync.WaitGroup
	for ri, p := range mb.reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := ri; i < len(windows); i += len(mb.reps) {
				if err := ctx.Err(); err != nil {
					errs[ri] = err
					return
				}
				r, err := p.window(windows[i], ro(i))
				if err != nil {
					errs[ri] = fmt.Errorf("window %d (replica %d): %w", i, ri, err)
					return
				}
				out[i] = r.loss
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// syncLoRA uploads the host adapter to replica 0's stages and peer-copies the bf16 copies
// to the other replicas; for training it zeroes every replica's device gradients.
func (mb *Multi) syncLoRA(zeroGrads bool) error {
	for s, st0 := range mb.reps[0].st {
		if err := st0.dev.Do(func(*device.Exec) error { return st0.w.syncLoRA(st0.ops, zeroGrads) }); err != nil {
			return err
		}
		for _, p := range mb.reps[1:] {
			st := p.st[s]
			if err := device.CopyPeer(st.dev, st.w.flat.bf.Ptr, st0.dev, st0.w.flat.bf.Ptr, int64(2*max(st.w.flat.n, 1))); err != nil {
				return err
			}
			if !zeroGrads {
				continue
			}
			if err := st.dev.Do(func(*device.Exec) error { return st.ops.Fill(st.w.flat.grad.Ptr, 0, st.w.flat.n) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// reduceGrads sums every replica's stage gradients into replica 0's (peer copy into a
// scratch block, then add_f32) and adds the sums into the host adapter's gradients.
func (mb *Multi) reduceGrads() error {
	for s, st0 := range mb.reps[0].st {
		n := st0.w.flat.n
		var scratch devmem.Block
		if len(mb.reps) > 1 {
			if err := st0.dev.Do(func(x *device.Exec) error {
				var err error
				scratch, err = x.Alloc(int64(4 * max(n, 1)))
				return err
			}); err != nil {
				return err
			}
		}
		for _, p := range mb.reps[1:] {
			st := p.st[s]
			if err := device.CopyPeer(st0.dev, scratch.Ptr, st.dev, st.w.flat.grad.Ptr, int64(4*n)); err != nil {
				return err
			}
			if err := st0.dev.Do(func(*device.Exec) error { return st0.ops.AddF32(st0.w.flat.grad.Ptr, scratch.Ptr, n) }); err != nil {
				return err
			}
		}
		err := st0.dev.Do(func(x *device.Exec) error {
			if scratch.Ptr != 0 {
				defer x.Free(scratch)
			}
			return st0.w.addGrads(st0.ops)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
