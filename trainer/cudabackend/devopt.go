//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/optim"
)

var _ trainer.DeviceOptimizer = (*Backend)(nil)

// devOpt is the device optimizer's host-side state: the schedule-independent settings and
// the step count (for bias correction). Masters and moments live in weights.flat.
type devOpt struct {
	cfg   optim.Config
	steps int64
}

// StartOptimizer implements trainer.DeviceOptimizer: it uploads the fp32 masters and o's
// moments into the flat buffers, makes the bf16 copies from the masters and zeroes the
// gradients.
func (b *Backend) StartOptimizer(o *optim.AdamW) error {
	if b.dopt != nil {
		return errors.New("device optimizer already started")
	}
	return b.dev.Do(func(x *device.Exec) error {
		f := &b.w.flat
		var err error
		if f.master, err = b.w.flatBuf(b.ops, 4); err != nil {
			return err
		}
		if f.m, err = b.w.flatBuf(b.ops, 4); err != nil {
			return err
		}
		if f.v, err = b.w.flatBuf(b.ops, 4); err != nil {
			return err
		}
		if f.acc, err = x.Alloc(4); err != nil {
			return err
		}
		b.w.all = append(b.w.all, f.acc)
		if err := f.putFlat(b.ops, f.master, func(i int) []float32 { return f.params[i].Data }); err != nil {
			return err
		}
		if err := f.putFlat(b.ops, f.m, func(i int) []float32 { return o.M[f.params[i].Name] }); err != nil {
			return fmt.Errorf("first moments: %w", err)
		}
		if err := f.putFlat(b.ops, f.v, func(i int) []float32 { return o.V[f.params[i].Name] }); err != nil {
			return fmt.Errorf("second moments: %w", err)
		}
		if err := b.ops.CastF32BF16(f.bf.Ptr, f.master.Ptr, f.n); err != nil {
			return err
		}
		if err := b.ops.Fill(f.grad.Ptr, 0, f.n); err != nil {
			return err
		}
		b.dopt = &devOpt{cfg: o.Cfg, steps: o.Steps}
		return x.Sync()
	})
}

// OptimizerStep implements trainer.DeviceOptimizer: Σg² in one launch, then the fused
// clip + AdamW + bf16 copy + gradient reset in another; only the norm comes back.
func (b *Backend) OptimizerStep(ctx context.Context, lr float64) (float64, error) {
	if b.dopt == nil {
		return 0, errors.New("device optimizer not started")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d := b.dopt
	var ss float32
	err := b.dev.Do(func(x *device.Exec) error {
		f := &b.w.flat
		if err := b.ops.Fill(f.acc.Ptr, 0, 1); err != nil {
			return err
		}
		if err := b.ops.SumSq(f.acc.Ptr, f.grad.Ptr, f.n); err != nil {
			return err
		}
		step := d.steps + 1
		c := d.cfg
		s := kernels.FlatStep{LR: float32(lr), Beta1: float32(c.Beta1), Beta2: float32(c.Beta2), Eps: float32(c.Eps),
			WeightDecay: float32(c.WeightDecay), MaxNorm: float32(c.Clip),
			BC1: float32(1 - math.Pow(c.Beta1, float64(step))), BC2: float32(1 - math.Pow(c.Beta2, float64(step)))}
		if err := b.ops.AdamWFlat(f.master.Ptr, f.m.Ptr, f.v.Ptr, f.grad.Ptr, f.bf.Ptr, f.acc.Ptr, f.n, s); err != nil {
			return err
		}
		got, err := kernels.Download[float32](x, f.acc, 1)
		if err != nil {
			return err
		}
		ss = got[0]
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("device optimizer step: %w", err)
	}
	d.steps++
	return math.Sqrt(float64(ss)), nil
}

// PullOptimizer implements trainer.DeviceOptimizer.
func (b *Backend) PullOptimizer(o *optim.AdamW) error {
	if b.dopt == nil {
		return errors.New("device optimizer not started")
	}
	return b.dev.Do(func(*device.Exec) error {
		f := &b.w.flat
		if err := f.getFlat(b.ops, f.master, func(i int) []float32 { return f.params[i].Data }); err != nil {
			return fmt.Errorf("download lora masters: %w", err)
		}
		if err := f.getFlat(b.ops, f.m, func(i int) []float32 { return momentOf(o.M, f.params[i].Name, len(f.params[i].Data)) }); err != nil {
			return fmt.Errorf("download first moments: %w", err)
		}
		if err := f.getFlat(b.ops, f.v, func(i int) []float32 { return momentOf(o.V, f.params[i].Name, len(f.params[i].Data)) }); err != nil {
			return fmt.Errorf("download second moments: %w", err)
		}
		o.Steps = b.dopt.steps
		return nil
	})
}

// momentOf returns the moment slice of name in ms, made when absent.
func momentOf(ms map[string][]float32, name string, n int) []float32 {
	if len(ms[name]) != n {
		ms[name] = make([]float32, n)
	}
	return ms[name]
}
