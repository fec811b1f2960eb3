package refbackend

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type runOpts struct {
	grad        bool
	logits      bool
	dropoutSeed uint64
	gradScale   float64
}

type runResult struct {
	loss   trainer.WindowLoss
	logits []float32
}

// graph builds one window's expression graph.
type graph struct {
	b      *Backend
	g      *G.ExprGraph
	t      int
	opts   runOpts
	names  int
	loraIn []*G.Node // At/Bt nodes in the order of loraOf
	loraOf []*lora.Param
	err    error
}

func (gr *graph) name(p string) string { gr.names++; return fmt.Sprintf("%s_%d", p, gr.names) }

func (gr *graph) apply(k kernel, outDims int, in ...*G.Node) *G.Node {
	if gr.err != nil {
		return nil
	}
	dims := make([]int, len(in))
	for i, n := range in {
		dims[i] = n.Dims()
	}
	n, err := G.ApplyOp(newOp(k, outDims, dims...), in...)
	if err != nil {
		gr.err = fmt.Errorf("apply %s: %w", k.name(), err)
	}
	return n
}

func (gr *graph) mul(a, b *G.Node) *G.Node {
	if gr.err != nil {
		return nil
	}
	n, err := G.Mul(a, b)
	if err != nil {
		gr.err = fmt.Errorf("matmul: %w", err)
	}
	return n
}

func (gr *graph) add(a, b *G.Node) *G.Node {
	if gr.err != nil {
		return nil
	}
	n, err := G.Add(a, b)
	if err != nil {
		gr.err = fmt.Errorf("add: %w", err)
	}
	return n
}

func (gr *graph) matrix(d *tensor.Dense, prefix string) *G.Node {
	s := d.Shape()
	return G.NewMatrix(gr.g, tensor.Float64, G.WithShape(s[0], s[1]), G.WithValue(d), G.WithName(gr.name(prefix)))
}

// loraParam adds a trainable input node holding pᵀ in float64.
func (gr *graph) loraParam(p *lora.Param) *G.Node {
	rows, cols := p.Shape[0], p.Shape[1]
	d := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			d[c*rows+r] = float64(p.Data[r*cols+c])
		}
	}
	n := gr.matrix(tensor.New(tensor.WithShape(cols, rows), tensor.WithBacking(d)), "lora")
	gr.loraIn = append(gr.loraIn, n)
	gr.loraOf = append(gr.loraOf, p)
	return n
}

// linear is x·Wᵀ (+ bias) (+ LoRA: scale · dropout(x)·Aᵀ·Bᵀ).
func (gr *graph) linear(x *G.Node, layer int, module string, bias []float64) *G.Node {
	lw := gr.b.layers[layer]
	y := gr.mul(x, gr.matrix(lw.w[module], module))
	if bias != nil {
		y = gr.apply(&addBias{b: bias}, 2, y)
	}
	cfg := gr.b.adapter.Config
	if !cfg.Has(module) {
		return y
	}
	a := gr.b.adapter.Param(lora.AName(layer, module))
	bb := gr.b.adapter.Param(lora.BName(layer, module))
	if a == nil || bb == nil {
		gr.err = fmt.Errorf("adapter lacks layer %d %s", layer, module)
		return nil
	}
	xd := x
	if gr.opts.grad && cfg.Dropout > 0 {
		xd = gr.apply(&scaleMul{c: 1, mask: gr.dropoutMask(x, layer, module, cfg.Dropout)}, 2, x)
	}
	l := gr.mul(gr.mul(xd, gr.loraParam(a)), gr.loraParam(bb))
	l = gr.apply(&scaleMul{c: cfg.ScalingOf(layer, module)}, 2, l)
	return gr.add(y, l)
}

func (gr *graph) dropoutMask(x *G.Node, layer int, module string, p float64) []float64 {
	mi := slices.Index(lora.AllModules(), module)
	rng := rand.New(rand.NewPCG(gr.opts.dropoutSeed, mix(uint64(layer), uint64(mi))))
	mask := make([]float64, x.Shape().TotalSize())
	keep := 1 / (1 - p)
	for i := range mask {
		if rng.Float64() >= p {
			mask[i] = keep
		}
	}
	return mask
}

func (b *Backend) run(w trainer.Window, opts runOpts) (runResult, error) {
	c := b.cfg
	t := len(w.InputIDs)
	if t == 0 || len(w.Labels) != t {
		return runResult{}, fmt.Errorf("window has %d tokens and %d labels", t, len(w.Labels))
	}
	d := c.HiddenSize
	h0 := make([]float64, t*d)
	for i, id := range w.InputIDs {
		if id < 0 || int(id) >= c.VocabSize {
			return runResult{}, fmt.Errorf("token id %d at %d outside vocabulary of %d", id, i, c.VocabSize)
		}
		for j := 0; j < d; j++ {
			h0[i*d+j] = float64(b.embed.Data[int(id)*d+j])
		}
	}
	for i, l := range w.Labels {
		if l != trainer.IgnoreIndex && (l < 0 || int(l) >= c.VocabSize) {
			return runResult{}, fmt.Errorf("label %d at %d outside vocabulary of %d", l, i, c.VocabSize)
		}
	}
	gr := &graph{b: b, g: G.NewGraph(), t: t, opts: opts}
	h := gr.matrix(tensor.New(tensor.WithShape(t, d), tensor.WithBacking(h0)), "embed")
	rot := c.HeadDim
	if c.Hybrid != nil {
		rot = c.Hybrid.RotaryDim
	}
	rp := newPartialRope(t, c.NumHeads, c.HeadDim, rot, c.RopeTheta)
	rk := newPartialRope(t, c.NumKVHeads, c.HeadDim, rot, c.RopeTheta)
	for l := range b.layers {
		lw := b.layers[l]
		x := gr.apply(&rmsNorm{width: d, w: lw.inNorm, eps: c.RMSNormEps}, 2, h)
		if lw.hy != nil {
			h = gr.add(h, gr.hybridMixer(x, l, rp, rk))
			h = gr.mlp(h, l)
			continue
		}
		q := gr.linear(x, l, "q_proj", lw.bq)
		k := gr.linear(x, l, "k_proj", lw.bk)
		v := gr.linear(x, l, "v_proj", lw.bv)
		if lw.qNorm != nil {
			q = gr.apply(&rmsNorm{width: c.HeadDim, w: lw.qNorm, eps: c.RMSNormEps}, 2, q)
			k = gr.apply(&rmsNorm{width: c.HeadDim, w: lw.kNorm, eps: c.RMSNormEps}, 2, k)
		}
		q = gr.apply(rp, 2, q)
		k = gr.apply(rk, 2, k)
		a := gr.apply(&attention{t: t, nh: c.NumHeads, nkv: c.NumKVHeads, hd: c.HeadDim, scale: 1 / math.Sqrt(float64(c.HeadDim))}, 2, q, k, v)
		h = gr.add(h, gr.linear(a, l, "o_proj", nil))
		h = gr.mlp(h, l)
	}
	x := gr.apply(&rmsNorm{width: d, w: b.finalNorm, eps: c.RMSNormEps}, 2, h)
	ce := &maskedCE{t: t, v: c.VocabSize, labels: w.Labels}
	var logits, loss *G.Node
	if opts.logits {
		logits = gr.mul(x, gr.matrix(b.head, "lm_head"))
		loss = gr.apply(ce, 0, logits)
	} else {
		loss = gr.apply(&lmHeadCE{t: t, d: d, v: c.VocabSize, headT: b.head, head: b.headRows, labels: w.Labels}, 0, x)
	}
	if gr.err != nil {
		return runResult{}, gr.err
	}
	var grads G.Nodes
	if opts.grad && ce.count() > 0 {
		var err error
		if grads, err = G.Grad(loss, gr.loraIn...); err != nil {
			return runResult{}, fmt.Errorf("differentiate: %w", err)
		}
	}
	// Run only what the loss, the logits and the LoRA gradients need: gorgonia's
	// matmul differentiates both operands, and the gradients of the frozen
	// weights it would add are never used.
	roots := append(G.Nodes{loss}, grads...)
	if opts.logits {
		roots = append(roots, logits)
	}
	vm := G.NewTapeMachine(gr.g.ExactSubgraphRoots(roots...))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return runResult{}, fmt.Errorf("run graph: %w", err)
	}
	res := runResult{loss: trainer.WindowLoss{Loss: scalar(loss.Value()), Tokens: ce.count()}}
	for i, gn := range grads {
		gd, ok := gn.Value().(*tensor.Dense)
		if !ok {
			return runResult{}, fmt.Errorf("gradient of %s is %T", gr.loraOf[i].Name, gn.Value())
		}
		addTransposed(gr.loraOf[i], gd.Data().([]float64), opts.gradScale)
	}
	if opts.logits {
		lv := logits.Value().(*tensor.Dense).Data().([]float64)
		res.logits = make([]float32, len(lv))
		for i, v := range lv {
			res.logits[i] = float32(v)
		}
	}
	return res, nil
}

// mlp is the residual SwiGLU block of layer l.
func (gr *graph) mlp(h *G.Node, l int) *G.Node {
	c := gr.b.cfg
	x := gr.apply(&rmsNorm{width: c.HiddenSize, w: gr.b.layers[l].postNorm, eps: c.RMSNormEps}, 2, h)
	m := gr.apply(siluMul{}, 2, gr.linear(x, l, "gate_proj", nil), gr.linear(x, l, "up_proj", nil))
	return gr.add(h, gr.linear(m, l, "down_proj", nil))
}

func scalar(v G.Value) float64 {
	switch t := v.(type) {
	case *G.F64:
		return float64(*t)
	case *tensor.Dense:
		return t.Data().([]float64)[0]
	}
	return math.NaN()
}

// addTransposed adds scale·gᵀ (g is [cols,rows] of the node) into p.Grad [rows,cols].
func addTransposed(p *lora.Param, g []float64, scale float64) {
	rows, cols := p.Shape[0], p.Shape[1]
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			p.Grad[r*cols+c] += float32(scale * g[c*rows+r])
		}
	}
}
