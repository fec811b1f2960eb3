//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/trainer"
)

// pipeline is one replica: its layers split across stage devices in order. A window's
// stream (the pair the next layer adds: its input and the residual) moves forward stage
// to stage by peer copies, and the stream's gradient moves back the same way. Stages run
// one after another for a window (no micro-batching): the split exists to fit a window's
// memory, not to overlap work.
type pipeline struct {
	st []*Backend
}

// stageRun is one stage's part of a window in flight.
type stageRun struct {
	f      *fwd
	in     [2]uintptr // received stream (stages after the first)
	out    [2]uintptr // stream after the stage's last layer
	gIn    uintptr    // gradient at the stage's input stream, after its backward
	stream int64      // bytes of one stream tensor
}

// window runs w through every stage and, for training, back, adding the LoRA gradients
// on each stage's device.
func (p *pipeline) window(w trainer.Window, ro runOpts) (runResult, error) {
	var res runResult
	tg, sup, err := p.st[0].targets(w)
	if err != nil {
		return res, err
	}
	res.loss.Tokens = sup
	if sup == 0 && !ro.logits {
		return res, nil
	}
	runs := make([]*stageRun, len(p.st))
	defer func() {
		for s, r := range runs {
			if r != nil {
				p.st[s].dev.Do(func(*device.Exec) error { r.f.sc.release(); return nil })
			}
		}
	}()
	var dx uintptr
	for s := range p.st {
		if runs[s], err = p.forwardStage(s, runs, w, ro, tg); err != nil {
			return res, fmt.Errorf("stage %d forward: %w", s, err)
		}
	}
	last := len(p.st) - 1
	if err := p.st[last].dev.Do(func(*device.Exec) error {
		r := runs[last]
		if err := r.f.finalNorm(r.out[0], r.out[1]); err != nil {
			return err
		}
		var err error
		dx, err = r.f.head(&res, sup)
		return err
	}); err != nil || dx == 0 {
		return res, err
	}
	for s := last; s >= 0; s-- {
		if err := p.backwardStage(s, runs, dx); err != nil {
			return res, fmt.Errorf("stage %d backward: %w", s, err)
		}
	}
	return res, nil
}

// forwardStage receives the stream from stage s−1 (peer copies) and runs stage s's layers.
func (p *pipeline) forwardStage(s int, runs []*stageRun, w trainer.Window, ro runOpts, tg []int32) (*stageRun, error) {
	st := p.st[s]
	r := &stageRun{stream: int64(2 * len(w.InputIDs) * st.cfg.HiddenSize)}
	err := st.dev.Do(func(x *device.Exec) error {
		var err error
		if r.f, err = st.newFwd(x, w, ro, tg); err != nil || s == 0 {
			return err
		}
		for i := range r.in {
			if r.in[i], err = r.f.sc.alloc(int(r.stream)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if s > 0 {
		prev := runs[s-1]
		for i := range r.in {
			if err := device.CopyPeer(st.dev, r.in[i], p.st[s-1].dev, prev.out[i], r.stream); err != nil {
				return r, err
			}
		}
	}
	return r, st.dev.Do(func(*device.Exec) error {
		in := r.in
		if s == 0 {
			emb, err := r.f.embed()
			if err != nil {
				return err
			}
			in = [2]uintptr{emb, 0}
		}
		var err error
		r.out[0], r.out[1], err = r.f.layersFwd(in[0], in[1])
		return err
	})
}

// backwardStage receives the gradient at stage s's output stream (from the LM head on the
// last stage, by a peer copy from stage s+1 otherwise) and runs the stage's backward.
func (p *pipeline) backwardStage(s int, runs []*stageRun, dx uintptr) error {
	st, r := p.st[s], runs[s]
	var g uintptr
	if err := st.dev.Do(func(*device.Exec) error {
		var err error
		if s == len(p.st)-1 {
			g, err = r.f.finalNormBwd(dx)
		} else {
			g, err = r.f.sc.alloc(int(r.stream))
		}
		return err
	}); err != nil {
		return err
	}
	if s < len(p.st)-1 {
		if err := device.CopyPeer(st.dev, g, p.st[s+1].dev, runs[s+1].gIn, r.stream); err != nil {
			return err
		}
	}
	r.gIn = g
	return st.dev.Do(func(*device.Exec) error { return r.f.layersBwd(g) })
}
