//go:build masscuda || masscudaemu

package cudabackend

import "fmt"

// DefaultCheckpointFrom is the window length from which Checkpoint "auto" checkpoints.
const DefaultCheckpointFrom = 8192

// checkpointing reports whether a training window of t tokens keeps only each layer's
// input stream and runs the layer's forward again in the backward (Options.Checkpoint:
// "on", "off", or "auto" = from DefaultCheckpointFrom tokens).
func (b *Backend) checkpointing(t int) bool {
	switch b.opt.Checkpoint {
	case "on":
		return true
	case "off":
		return false
	}
	return t >= DefaultCheckpointFrom
}

// layersFwdCkpt is layersFwd with activation checkpointing: layer l's activations live in
// a scope of their own, released once layer l+1 has read its outputs; what stays is the
// layer's input stream r_l (bf16 [T, D], the sum its first norm reads), kept in the window's
// scope. The recompute runs the layer on (r_l, 0), which rounds nothing differently, so the
// backward sees the same activations bit for bit.
func (f *fwd) layersFwdCkpt(xAdd, resid uintptr) (uintptr, uintptr, error) {
	n := f.b.cfg.NumLayers
	f.ckpt, f.lsc = make([]uintptr, n), make([]*scope, n)
	bytes := 2 * f.T * f.b.cfg.HiddenSize
	for l := f.b.lo; l < f.b.hi; l++ {
		ck, err := f.sc.alloc(bytes)
		if err != nil {
			return 0, 0, err
		}
		f.ckpt[l] = ck
		if xAdd, resid, err = f.inLayerScope(l, xAdd, resid); err != nil {
			return 0, 0, fmt.Errorf("layer %d: %w", l, err)
		}
		if err := f.sc.x.Copy(ck, f.layers[l].r, int64(bytes)); err != nil {
			return 0, 0, err
		}
		if l > f.b.lo {
			f.releaseLayer(l - 1)
		}
	}
	// The stage's output pair outlives the last layer's scope: copy it into the window's.
	var out [2]uintptr
	for i, p := range []uintptr{xAdd, resid} {
		var err error
		if out[i], err = f.sc.alloc(bytes); err != nil {
			return 0, 0, err
		}
		if err := f.sc.x.Copy(out[i], p, int64(bytes)); err != nil {
			return 0, 0, err
		}
	}
	f.releaseLayer(f.b.hi - 1)
	return out[0], out[1], nil
}

// inLayerScope runs layerFwd with layer l's activations in a new scope (f.lsc[l]).
func (f *fwd) inLayerScope(l int, xAdd, resid uintptr) (uintptr, uintptr, error) {
	win := f.sc
	f.lsc[l] = &scope{x: win.x}
	f.sc = f.lsc[l]
	defer func() { f.sc = win }()
	return f.layerFwd(l, xAdd, resid)
}

// recompute runs layer l's forward again from its checkpoint.
func (f *fwd) recompute(l int) error {
	f.layers[l] = acts{}
	_, _, err := f.inLayerScope(l, f.ckpt[l], 0)
	return err
}

// releaseLayer frees layer l's activations.
func (f *fwd) releaseLayer(l int) {
	if s := f.lsc[l]; s != nil {
		s.release()
		f.lsc[l] = nil
	}
	f.layers[l] = acts{}
}
