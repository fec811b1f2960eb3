//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// loraMod is one adapted projection: bf16 device copies of A [r, in] and B [out, r] for the
// products, and fp32 device gradients.
type loraMod struct {
	a, b          *lora.Param
	in, out, rank int
	abf, bbf      devmem.Block
	ga, gb        devmem.Block
}

type layerW struct {
	inNorm, postNorm, qNorm, kNorm devmem.Block    // q/k norms only with qkNorm
	proj                           [7]devmem.Block // W [out, in] bf16, in lora.Modules order
	bias                           [7]devmem.Block // b [out] bf16 of q/k/v with attention_bias; zero Ptr without
	lo                             [7]*loraMod
}

type weights struct {
	embed, head, finalNorm devmem.Block
	layers                 []layerW
	all                    []devmem.Block
	scaling                float32
	dropout                float32
	qkNorm                 bool // Qwen3's q/k RMSNorm before RoPE; Qwen2 rotates the projections as they are
}

// Module indexes in lora.Modules order.
const (
	mQ = iota
	mK
	mV
	mO
	mGate
	mUp
	mDown
)

func uploadWeights(o *kernels.Ops, c *model.Config, m *model.Model, a *lora.Adapter, seed uint32) (*weights, error) {
	x := o.X
	w := &weights{scaling: float32(a.Config.Scaling()), dropout: float32(a.Config.Dropout), qkNorm: c.Arch == model.Qwen3}
	n := uint32(0)
	get := func(name string, shape ...int) (devmem.Block, error) {
		size := 1
		for _, s := range shape {
			size *= s
		}
		var blk devmem.Block
		var err error
		if m != nil {
			t := m.Get(name)
			if len(t.Data) != size {
				return blk, fmt.Errorf("weight %s has %d values, want %v", name, len(t.Data), shape)
			}
			blk, err = kernels.UploadBF16(x, t.Data)
		} else {
			blk, err = x.Alloc(int64(size * 2))
			if err == nil {
				n++
				switch {
				case strings.HasSuffix(name, ".bias"): // as model.NewRandom
					err = o.FillNormal(blk.Ptr, size, seed*131+n, 0.02)
				case len(shape) == 1:
					ones := make([]float32, size)
					for i := range ones {
						ones[i] = 1
					}
					x.Free(blk)
					blk, err = kernels.UploadBF16(x, ones)
				default:
					err = o.FillNormal(blk.Ptr, size, seed*131+n, float32(1/math.Sqrt(float64(shape[len(shape)-1]))))
				}
			}
		}
		if err != nil {
			return blk, fmt.Errorf("upload %s: %w", name, err)
		}
		w.all = append(w.all, blk)
		return blk, nil
	}
	var err error
	d := c.HiddenSize
	if w.embed, err = get("model.embed_tokens.weight", c.VocabSize, d); err != nil {
		return nil, err
	}
	w.head = w.embed
	if !c.TieWordEmbeddings {
		if w.head, err = get("lm_head.weight", c.VocabSize, d); err != nil {
			return nil, err
		}
	}
	if w.finalNorm, err = get("model.norm.weight", d); err != nil {
		return nil, err
	}
	type normW struct {
		dst  *devmem.Block
		name string
		dim  int
	}
	for l := 0; l < c.NumLayers; l++ {
		var lw layerW
		ln := func(s string) string { return model.LayerName(l, s) }
		norms := []normW{{&lw.inNorm, "input_layernorm.weight", d}, {&lw.postNorm, "post_attention_layernorm.weight", d}}
		if w.qkNorm {
			norms = append(norms, normW{&lw.qNorm, "self_attn.q_norm.weight", c.HeadDim},
				normW{&lw.kNorm, "self_attn.k_norm.weight", c.HeadDim})
		}
		for _, nw := range norms {
			if *nw.dst, err = get(ln(nw.name), nw.dim); err != nil {
				return nil, err
			}
		}
		for mi, mod := range lora.Modules {
			in, out := lora.Dims(c, mod)
			if lw.proj[mi], err = get(ln(lora.ModulePath(mod)+".weight"), out, in); err != nil {
				return nil, err
			}
			if c.AttentionBias && mi <= mV {
				if lw.bias[mi], err = get(ln(lora.ModulePath(mod)+".bias"), out); err != nil {
					return nil, err
				}
			}
			if !a.Config.Has(mod) {
				continue
			}
			lm := &loraMod{a: a.Param(lora.AName(l, mod)), b: a.Param(lora.BName(l, mod)), in: in, out: out, rank: a.Config.Rank}
			if lm.a == nil || lm.b == nil {
				return nil, fmt.Errorf("adapter lacks %s", lora.AName(l, mod))
			}
			for _, blk := range []*devmem.Block{&lm.abf, &lm.bbf, &lm.ga, &lm.gb} {
				size := lm.rank * in * 2
				switch blk {
				case &lm.bbf:
					size = out * lm.rank * 2
				case &lm.ga:
					size = lm.rank * in * 4
				case &lm.gb:
					size = out * lm.rank * 4
				}
				if *blk, err = x.Alloc(int64(size)); err != nil {
					return nil, fmt.Errorf("lora buffers of %s: %w", lm.a.Name, err)
				}
				w.all = append(w.all, *blk)
			}
			lw.lo[mi] = lm
		}
		w.layers = append(w.layers, lw)
	}
	return w, x.Sync()
}

// loraParams lists every adapted tensor with its bf16 copy and fp32 gradient on the device.
func (w *weights) loraParams() (ps []*lora.Param, copies, grads []devmem.Block) {
	for _, lw := range w.layers {
		for _, lm := range lw.lo {
			if lm != nil {
				ps = append(ps, lm.a, lm.b)
				copies = append(copies, lm.abf, lm.bbf)
				grads = append(grads, lm.ga, lm.gb)
			}
		}
	}
	return ps, copies, grads
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
// call, zeroes the device gradients.
func (w *weights) syncLoRA(o *kernels.Ops, zeroGrads bool) error {
	ps, copies, grads := w.loraParams()
	enc := make([][]cuda.BF16, len(ps))
	parallel(len(ps), func(i int) { enc[i] = cuda.EncodeBF16(ps[i].Data) })
	for i, p := range ps {
		if err := o.X.CopyIn(copies[i].Ptr, ptrOf(enc[i]), int64(len(p.Data)*2)); err != nil {
			return fmt.Errorf("upload %s: %w", p.Name, err)
		}
		if zeroGrads {
			if err := o.Fill(grads[i].Ptr, 0, len(p.Data)); err != nil {
				return err
			}
		}
	}
	return nil
}

// addGrads downloads the device gradients and adds them into Param.Grad.
func (w *weights) addGrads(o *kernels.Ops) error {
	ps, _, grads := w.loraParams()
	got := make([][]float32, len(ps))
	for i, p := range ps {
		g, err := kernels.Download[float32](o.X, grads[i], len(p.Grad))
		if err != nil {
			return fmt.Errorf("download gradient of %s: %w", p.Name, err)
		}
		got[i] = g
	}
	parallel(len(ps), func(i int) {
		for j, v := range got[i] {
			ps[i].Grad[j] += v
		}
	})
	return nil
}

func (w *weights) free(x *device.Exec) {
	for _, b := range w.all {
		x.Free(b)
	}
	w.all = nil
}
