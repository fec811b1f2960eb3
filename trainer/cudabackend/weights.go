//go:build masscuda || masscudaemu

package cudabackend

import (
	"fmt"
	"math"
	"strings"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// loraMod is one adapted projection: bf16 device copies of A [r, in] and B [out, r] for the
// products, and fp32 device gradients; all four are views into the flat buffers of
// loraFlat.
type loraMod struct {
	a, b          *lora.Param
	in, out, rank int
	abf, bbf      devmem.Block
	ga, gb        devmem.Block
}

type layerW struct {
	inNorm, postNorm, qNorm, kNorm devmem.Block        // q/k norms only with qkNorm
	proj                           [nMods]devmem.Block // W [out, in] bf16, in allMods order
	bias                           [nMods]devmem.Block // b [out] bf16 of q/k/v with attention_bias; zero Ptr without
	lo                             [nMods]*loraMod
	hy                             *hybridW   // Qwen3.5/3.6 layers only
	qkv, gateUp                    *loraGroup // nil when the modules' A matrices cannot be one product
}

type weights struct {
	embed, head, finalNorm devmem.Block
	layers                 []layerW
	all                    []devmem.Block
	flat                   loraFlat
	scaling                float32
	dropout                float32
	qkNorm                 bool // Qwen3's q/k RMSNorm before RoPE; Qwen2 rotates the projections as they are
	hybrid                 bool // Qwen3.5/3.6: (1 + w) norms, Gated DeltaNet and gated attention layers
}

// Module indexes in allMods order: lora.Modules, then the Gated DeltaNet's lora.LinearModules.
const (
	mQ = iota
	mK
	mV
	mO
	mGate
	mUp
	mDown
	mQKV  // in_proj_qkv
	mZ    // in_proj_z
	mOutP // out_proj
	nMods
)

// allMods names the modules by index.
var allMods = lora.AllModules()

// uploader puts the frozen weights on the device: from m, or random from seed when m is nil.
type uploader struct {
	o    *kernels.Ops
	m    *model.Model
	w    *weights
	seed uint32
	n    uint32
}

func (u *uploader) get(name string, shape ...int) (devmem.Block, error) {
	return u.getAs(name, false, nil, shape...)
}

// getAs uploads weight name as bf16, or fp32 with f32, transformed by tf when not nil
// (random weights are made on the device without tf).
func (u *uploader) getAs(name string, f32 bool, tf func([]float32) []float32, shape ...int) (devmem.Block, error) {
	size := 1
	for _, s := range shape {
		size *= s
	}
	var blk devmem.Block
	var err error
	if u.m != nil {
		t := u.m.Get(name)
		if len(t.Data) != size {
			return blk, fmt.Errorf("weight %s has %d values, want %v", name, len(t.Data), shape)
		}
		data := t.Data
		if tf != nil {
			data = tf(data)
		}
		if f32 {
			blk, err = kernels.Upload(u.o.X, data)
		} else {
			blk, err = kernels.UploadBF16(u.o.X, data)
		}
	} else if f32 {
		blk, err = u.randomF32(name, shape, size)
	} else {
		blk, err = u.random(name, shape, size)
	}
	if err != nil {
		return blk, fmt.Errorf("upload %s: %w", name, err)
	}
	u.w.all = append(u.w.all, blk)
	return blk, nil
}

// random fills a benchmark weight: biases N(0, 0.02) as model.NewRandom, norms 1, matrices
// N(0, 1/in).
func (u *uploader) random(name string, shape []int, size int) (devmem.Block, error) {
	u.n++
	if len(shape) == 1 && !strings.HasSuffix(name, ".bias") {
		ones := make([]float32, size)
		for i := range ones {
			ones[i] = 1
		}
		return kernels.UploadBF16(u.o.X, ones)
	}
	blk, err := u.o.X.Alloc(int64(size * 2))
	if err != nil {
		return blk, err
	}
	std := float32(0.02)
	if len(shape) > 1 {
		std = float32(1 / math.Sqrt(float64(shape[len(shape)-1])))
	}
	return blk, u.o.FillNormal(blk.Ptr, size, u.seed*131+u.n, std)
}

// uploadWeights uploads layers [lo, hi) (the others stay empty), the embedding when lo is
// 0 and the final norm and LM head when hi is the last layer.
func uploadWeights(o *kernels.Ops, c *model.Config, m *model.Model, a *lora.Adapter, seed uint32, lo, hi int) (*weights, error) {
	w := &weights{scaling: float32(a.Config.Scaling()), dropout: float32(a.Config.Dropout), qkNorm: c.Arch == model.Qwen3,
		hybrid: c.Hybrid != nil}
	u := &uploader{o: o, m: m, w: w, seed: seed}
	var err error
	d, last := c.HiddenSize, hi == c.NumLayers
	if lo == 0 || (last && c.TieWordEmbeddings) {
		if w.embed, err = u.get("model.embed_tokens.weight", c.VocabSize, d); err != nil {
			return nil, err
		}
	}
	if last {
		w.head = w.embed
		if !c.TieWordEmbeddings {
			if w.head, err = u.get("lm_head.weight", c.VocabSize, d); err != nil {
				return nil, err
			}
		}
		if w.finalNorm, err = u.norm("model.norm.weight", d); err != nil {
			return nil, err
		}
	}
	for l := 0; l < c.NumLayers; l++ {
		if l < lo || l >= hi {
			w.layers = append(w.layers, layerW{})
			continue
		}
		layer := u.layer
		if w.hybrid {
			layer = u.hybridLayer
		}
		lw, err := layer(c, a, l)
		if err != nil {
			return nil, err
		}
		w.layers = append(w.layers, lw)
	}
	if err := w.placeLoRA(o); err != nil {
		return nil, err
	}
	return w, o.X.Sync()
}

type normW struct {
	dst  *devmem.Block
	name string
	dim  int
}

// layer uploads layer l's norms, projections and biases and lists its adapted modules
// (their device buffers are placed afterwards by placeLoRA).
func (u *uploader) layer(c *model.Config, a *lora.Adapter, l int) (layerW, error) {
	var lw layerW
	var err error
	ln := func(s string) string { return model.LayerName(l, s) }
	norms := []normW{{&lw.inNorm, "input_layernorm.weight", c.HiddenSize}, {&lw.postNorm, "post_attention_layernorm.weight", c.HiddenSize}}
	if u.w.qkNorm {
		norms = append(norms, normW{&lw.qNorm, "self_attn.q_norm.weight", c.HeadDim},
			normW{&lw.kNorm, "self_attn.k_norm.weight", c.HeadDim})
	}
	for _, nw := range norms {
		if *nw.dst, err = u.get(ln(nw.name), nw.dim); err != nil {
			return lw, err
		}
	}
	for mi, mod := range lora.Modules {
		in, out := lora.Dims(c, mod)
		if lw.proj[mi], err = u.get(ln(lora.ModulePath(mod)+".weight"), out, in); err != nil {
			return lw, err
		}
		if c.AttentionBias && mi <= mV {
			if lw.bias[mi], err = u.get(ln(lora.ModulePath(mod)+".bias"), out); err != nil {
				return lw, err
			}
		}
		if !a.Config.Has(mod) {
			continue
		}
		lm := &loraMod{a: a.Param(lora.AName(l, mod)), b: a.Param(lora.BName(l, mod)), in: in, out: out, rank: a.Config.Rank}
		if lm.a == nil || lm.b == nil {
			return lw, fmt.Errorf("adapter lacks %s", lora.AName(l, mod))
		}
		lw.lo[mi] = lm
	}
	return lw, nil
}

func (w *weights) free(x *device.Exec) {
	for _, b := range w.all {
		x.Free(b)
	}
	w.all = nil
}
