package refbackend

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// kernel is the arithmetic of one custom op on flat float64 slices. Frozen
// operands (norm weights, positions, labels, dropout masks) live in the
// kernel; graph inputs are the activations the gradient flows through.
type kernel interface {
	name() string
	outShape(in []tensor.Shape) (tensor.Shape, error)
	forward(in [][]float64, out []float64)
	// backward writes dLoss/dInput[i] into gin given the inputs, the output
	// and dLoss/dOutput.
	backward(i int, in [][]float64, out, gout, gin []float64)
	diffWRT(n int) []bool
}

var opSeq atomic.Uint64

// fwdOp adapts a kernel to gorgonia's Op and SDOp interfaces. Each op gets a
// unique id in its hash so that gorgonia never merges two ops whose frozen
// operands differ.
type fwdOp struct {
	k       kernel
	id      uint64
	inDims  []int
	outDims int
}

func newOp(k kernel, outDims int, inDims ...int) *fwdOp {
	return &fwdOp{k: k, id: opSeq.Add(1), inDims: inDims, outDims: outDims}
}

func nodeType(dims int) hm.Type {
	if dims == 0 {
		return tensor.Float64
	}
	return G.TensorType{Dims: dims, Of: tensor.Float64}
}

func fnType(in []int, out int) hm.Type {
	ts := make([]hm.Type, 0, len(in)+1)
	for _, d := range in {
		ts = append(ts, nodeType(d))
	}
	return hm.NewFnType(append(ts, nodeType(out))...)
}

func (o *fwdOp) Arity() int           { return len(o.inDims) }
func (o *fwdOp) Type() hm.Type        { return fnType(o.inDims, o.outDims) }
func (o *fwdOp) ReturnsPtr() bool     { return false }
func (o *fwdOp) CallsExtern() bool    { return false }
func (o *fwdOp) OverwritesInput() int { return -1 }
func (o *fwdOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "%s#%d", o.k.name(), o.id)
}
func (o *fwdOp) Hashcode() uint32 { return hashOf(o) }
func (o *fwdOp) String() string   { return fmt.Sprintf("%s#%d", o.k.name(), o.id) }

func (o *fwdOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return o.k.outShape(shapesOf(in))
}

func (o *fwdOp) Do(vals ...G.Value) (G.Value, error) {
	in, shapes, err := flatten(vals)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.k.name(), err)
	}
	s, err := o.k.outShape(shapes)
	if err != nil {
		return nil, err
	}
	out := make([]float64, s.TotalSize())
	o.k.forward(in, out)
	return wrap(s, out), nil
}

func (o *fwdOp) DiffWRT(n int) []bool { return o.k.diffWRT(n) }

func (o *fwdOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	diff := o.k.diffWRT(len(inputs))
	ret := make(G.Nodes, len(inputs))
	for i := range inputs {
		if !diff[i] {
			continue
		}
		b := &bwdOp{f: o, i: i}
		args := append(append(G.Nodes{}, inputs...), output, grad)
		n, err := G.ApplyOp(b, args...)
		if err != nil {
			return nil, fmt.Errorf("%s backward %d: %w", o.k.name(), i, err)
		}
		ret[i] = n
	}
	return ret, nil
}

// bwdOp computes one input's gradient of a fwdOp.
type bwdOp struct {
	f *fwdOp
	i int
}

func (b *bwdOp) Arity() int { return len(b.f.inDims) + 2 }
func (b *bwdOp) Type() hm.Type {
	in := append(append([]int{}, b.f.inDims...), b.f.outDims, b.f.outDims)
	return fnType(in, b.f.inDims[b.i])
}
func (b *bwdOp) ReturnsPtr() bool     { return false }
func (b *bwdOp) CallsExtern() bool    { return false }
func (b *bwdOp) OverwritesInput() int { return -1 }
func (b *bwdOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "d%s#%d/%d", b.f.k.name(), b.f.id, b.i)
}
func (b *bwdOp) Hashcode() uint32 { return hashOf(b) }
func (b *bwdOp) String() string   { return fmt.Sprintf("d%s#%d/d%d", b.f.k.name(), b.f.id, b.i) }

func (b *bwdOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return shapesOf(in)[b.i], nil
}

func (b *bwdOp) Do(vals ...G.Value) (G.Value, error) {
	in, shapes, err := flatten(vals)
	if err != nil {
		return nil, fmt.Errorf("d%s: %w", b.f.k.name(), err)
	}
	n := len(b.f.inDims)
	gin := make([]float64, len(in[b.i]))
	b.f.k.backward(b.i, in[:n], in[n], in[n+1], gin)
	return wrap(shapes[b.i], gin), nil
}

func hashOf(w interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	w.WriteHash(h)
	return h.Sum32()
}

func shapesOf(in []G.DimSizer) []tensor.Shape {
	out := make([]tensor.Shape, len(in))
	for i, d := range in {
		if s, ok := d.(tensor.Shape); ok {
			out[i] = s
		}
	}
	return out
}

func flatten(vals []G.Value) ([][]float64, []tensor.Shape, error) {
	in := make([][]float64, len(vals))
	shapes := make([]tensor.Shape, len(vals))
	for i, v := range vals {
		switch t := v.(type) {
		case *tensor.Dense:
			d, ok := t.Data().([]float64)
			if !ok {
				return nil, nil, fmt.Errorf("input %d is %v, want float64", i, t.Dtype())
			}
			in[i], shapes[i] = d, t.Shape()
		case *G.F64:
			in[i], shapes[i] = []float64{float64(*t)}, tensor.ScalarShape()
		default:
			return nil, nil, fmt.Errorf("input %d has unsupported value type %T", i, v)
		}
	}
	return in, shapes, nil
}

func wrap(s tensor.Shape, d []float64) G.Value {
	if s.IsScalar() {
		return G.NewF64(d[0])
	}
	return tensor.New(tensor.WithShape(s.Clone()...), tensor.WithBacking(d))
}
