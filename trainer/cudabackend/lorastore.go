//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/lora"
)

// flatAlign is the element alignment of each tensor in the flat buffers (256 bytes fp32).
const flatAlign = 64

// loraFlat lays every adapted tensor out in flat device buffers, each at an offset that is
// a multiple of flatAlign, so that one launch covers the whole adapter: the bf16 copies and
// fp32 gradients always, the fp32 masters and AdamW moments once the device optimizer runs.
// The padding is zero in every buffer and stays zero.
type loraFlat struct {
	params       []*lora.Param
	off          []int // element offset of params[i]
	n            int   // elements including padding
	bf, grad     devmem.Block
	master, m, v devmem.Block // device optimizer only
	acc          devmem.Block // Σg² of the gradient-norm kernel
}

// placeLoRA lays out the adapter layer by layer, every module's A first and then every B,
// so that the A matrices of modules reading one input lie back to back (see loraGroup);
// it allocates the bf16 and gradient buffers and points every loraMod at its views.
func (w *weights) placeLoRA(o *kernels.Ops) error {
	f := &w.flat
	type placed struct {
		lm     *loraMod
		oa, ob int
	}
	var mods []placed
	put := func(p *lora.Param) int {
		off := f.n
		f.params = append(f.params, p)
		f.off = append(f.off, off)
		f.n += (len(p.Data) + flatAlign - 1) / flatAlign * flatAlign
		return off
	}
	for _, lw := range w.layers {
		first := len(mods)
		for _, lm := range lw.lo {
			if lm != nil {
				mods = append(mods, placed{lm: lm, oa: put(lm.a)})
			}
		}
		for i := first; i < len(mods); i++ {
			mods[i].ob = put(mods[i].lm.b)
		}
	}
	var err error
	if f.bf, err = w.flatBuf(o, 2); err != nil {
		return err
	}
	if f.grad, err = w.flatBuf(o, 4); err != nil {
		return err
	}
	for _, m := range mods {
		lm := m.lm
		lm.abf, lm.bbf = view(f.bf, m.oa, len(lm.a.Data), 2), view(f.bf, m.ob, len(lm.b.Data), 2)
		lm.ga, lm.gb = view(f.grad, m.oa, len(lm.a.Data), 4), view(f.grad, m.ob, len(lm.b.Data), 4)
	}
	for l := range w.layers {
		lw := &w.layers[l]
		lw.qkv, lw.gateUp = newLoRAGroup(lw.lo, mQ, mK, mV), newLoRAGroup(lw.lo, mGate, mUp)
	}
	return nil
}

// flatBuf allocates one zeroed flat buffer of elemBytes-sized elements.
func (w *weights) flatBuf(o *kernels.Ops, elemBytes int) (devmem.Block, error) {
	n := max(w.flat.n, 1)
	b, err := o.X.Alloc(int64(n * elemBytes))
	if err != nil {
		return b, fmt.Errorf("lora buffers (%d values): %w", n, err)
	}
	w.all = append(w.all, b)
	return b, o.X.Memset8(b.Ptr, 0, int64(n*elemBytes))
}

func view(b devmem.Block, off, n, elemBytes int) devmem.Block {
	return devmem.Block{Ptr: b.Ptr + uintptr(off*elemBytes), Size: int64(n * elemBytes)}
}

// parallel runs fn(i) for i in [0, n) on GOMAXPROCS goroutines (host-side conversions of
// the adapter, which the Backend contract makes per call).
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// syncLoRA uploads the adapter's current fp32 values as bf16 copies and, for a training
// call, zeroes the device gradients (host optimizer only).
func (w *weights) syncLoRA(o *kernels.Ops, zeroGrads bool) error {
	f := &w.flat
	enc := make([][]cuda.BF16, len(f.params))
	parallel(len(f.params), func(i int) { enc[i] = cuda.EncodeBF16(f.params[i].Data) })
	for i, p := range f.params {
		if err := o.X.CopyIn(f.bf.Ptr+uintptr(2*f.off[i]), ptrOf(enc[i]), int64(len(p.Data)*2)); err != nil {
			return fmt.Errorf("upload %s: %w", p.Name, err)
		}
	}
	if zeroGrads {
		return o.Fill(f.grad.Ptr, 0, f.n)
	}
	return nil
}

// addGrads downloads the device gradients and adds them into Param.Grad (host optimizer).
func (w *weights) addGrads(o *kernels.Ops) error {
	f := &w.flat
	all, err := kernels.Download[float32](o.X, f.grad, f.n)
	if err != nil {
		return fmt.Errorf("download lora gradients: %w", err)
	}
	parallel(len(f.params), func(i int) {
		g := all[f.off[i] : f.off[i]+len(f.params[i].Grad)]
		for j, v := range g {
			f.params[i].Grad[j] += v
		}
	})
	return nil
}

// putFlat uploads one host slice per parameter into the flat fp32 buffer b.
func (f *loraFlat) putFlat(o *kernels.Ops, b devmem.Block, vals func(i int) []float32) error {
	for i, p := range f.params {
		v := vals(i)
		if len(v) != len(p.Data) {
			return fmt.Errorf("%s: %d values, want %d", p.Name, len(v), len(p.Data))
		}
		if len(v) == 0 {
			continue
		}
		if err := o.X.CopyIn(b.Ptr+uintptr(4*f.off[i]), unsafe.Pointer(&v[0]), int64(4*len(v))); err != nil {
			return fmt.Errorf("upload %s: %w", p.Name, err)
		}
	}
	return nil
}

// getFlat downloads the flat fp32 buffer b and copies each parameter's part into dst(i).
func (f *loraFlat) getFlat(o *kernels.Ops, b devmem.Block, dst func(i int) []float32) error {
	all, err := kernels.Download[float32](o.X, b, f.n)
	if err != nil {
		return err
	}
	for i, p := range f.params {
		copy(dst(i), all[f.off[i]:f.off[i]+len(p.Data)])
	}
	return nil
}
