//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"
	"unsafe"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer"
)

type runOpts struct {
	train     bool
	logits    bool
	seed      uint64
	gradScale float64
}

type runResult struct {
	loss   trainer.WindowLoss
	logits []float32
}

// targets shifts the labels (position t predicts Labels[t+1]) and checks every id.
func (b *Backend) targets(w trainer.Window) ([]int32, int, error) {
	t, v := len(w.InputIDs), int32(b.cfg.VocabSize)
	if t == 0 {
		return nil, 0, fmt.Errorf("empty window")
	}
	if len(w.Labels) != t {
		return nil, 0, fmt.Errorf("window has %d input ids but %d labels", t, len(w.Labels))
	}
	for i, id := range w.InputIDs {
		if id < 0 || id >= v {
			return nil, 0, fmt.Errorf("input id %d at position %d outside the vocabulary of %d", id, i, v)
		}
	}
	tg := make([]int32, t)
	sup := 0
	for i := range tg {
		tg[i] = cuda.IgnoreTarget
		if i+1 < t && w.Labels[i+1] != trainer.IgnoreIndex {
			l := w.Labels[i+1]
			if l < 0 || l >= v {
				return nil, 0, fmt.Errorf("label %d at position %d outside the vocabulary of %d", l, i+1, v)
			}
			tg[i] = l
			sup++
		}
	}
	return tg, sup, nil
}

func upload[T any](sc *scope, v []T) (uintptr, error) {
	b, err := kernels.Upload(sc.x, v)
	if err != nil {
		return 0, err
	}
	sc.blocks = append(sc.blocks, b)
	return b.Ptr, nil
}

func (b *Backend) runWindow(x *device.Exec, w trainer.Window, ro runOpts) (runResult, error) {
	var res runResult
	tg, sup, err := b.targets(w)
	if err != nil {
		return res, err
	}
	res.loss.Tokens = sup
	if sup == 0 && !ro.logits {
		return res, nil
	}
	f, err := b.newFwd(x, w, ro, tg)
	if err != nil {
		return res, err
	}
	defer f.sc.release()
	if err := f.forward(); err != nil {
		return res, fmt.Errorf("forward: %w", err)
	}
	dx, err := f.head(&res, sup)
	if err != nil || dx == 0 {
		return res, err
	}
	if err := f.backward(dx); err != nil {
		return res, fmt.Errorf("backward: %w", err)
	}
	return res, nil
}

// newFwd uploads a window's ids, positions and shifted targets into a new scope.
func (b *Backend) newFwd(x *device.Exec, w trainer.Window, ro runOpts, tg []int32) (*fwd, error) {
	sc := &scope{x: x}
	t := len(w.InputIDs)
	pos := make([]int32, t)
	for i := range pos {
		pos[i] = int32(i)
	}
	f := &fwd{b: b, sc: sc, T: t, ro: ro}
	var err error
	if f.ids, err = upload(sc, w.InputIDs); err == nil {
		if f.pos, err = upload(sc, pos); err == nil {
			f.tg, err = upload(sc, tg)
		}
	}
	if err != nil {
		sc.release()
		return nil, err
	}
	return f, nil
}

// head runs the LM head on f.final (last stage): the logits when asked, the loss over the
// sup supervised tokens into res, and for training the gradient at f.final, which it
// returns (0 otherwise).
func (f *fwd) head(res *runResult, sup int) (uintptr, error) {
	b, x, sc, ro, t := f.b, f.sc.x, f.sc, f.ro, f.T
	c, d := b.cfg, b.cfg.HiddenSize
	if ro.logits {
		lg, err := sc.f32(t * c.VocabSize)
		if err != nil {
			return 0, err
		}
		if err := b.ops.Gemm(gemmLogits(t, c.VocabSize, d, f.final, b.w.head.Ptr, lg)); err != nil {
			return 0, err
		}
		if res.logits, err = kernels.Download[float32](x, devmem.Block{Ptr: lg}, t*c.VocabSize); err != nil {
			return 0, err
		}
	}
	if sup == 0 {
		return 0, nil
	}
	loss, err := sc.f32(3*t + 1)
	if err != nil {
		return 0, err
	}
	out := kernels.CEOut{Loss: loss, LSE: loss + uintptr(4), PerToken: loss + uintptr(4+4*t)}
	scale := 1 / float32(sup)
	if ro.train {
		if out.DX, err = sc.bf16(t * d); err != nil {
			return 0, err
		}
	}
	if err := b.ops.LMHeadCE(kernels.CEArgs{X: f.final, W: b.w.head.Ptr, Targets: f.tg, T: t, D: d, V: c.VocabSize,
		Chunk: b.opt.CEChunk, Scale: scale, GradScale: scale * float32(ro.gradScale)}, out); err != nil {
		return 0, fmt.Errorf("lm head: %w", err)
	}
	var l float32
	if err := x.CopyOut(unsafe.Pointer(&l), loss, 4); err != nil {
		return 0, err
	}
	res.loss.Loss = float64(l)
	return out.DX, nil
}
