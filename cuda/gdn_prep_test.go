package cuda

import (
	"math/rand/v2"
	"testing"
)

// TestGDNPrepReferences: the backward references of the L2 norm (strided rows), the gates
// and the attention output gate against central differences of their forwards.
func TestGDNPrepReferences(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const tt, heads, n, stride = 3, 2, 5, 17 // rows start at column 2 of a 17-wide buffer
	x := randVec(r, tt*stride, 1)
	g := randVec(r, tt*heads*n, 1)
	fwd := func(v []float32) []float32 { out, _ := GDNL2Norm(v[2:], tt*heads, n, heads, stride); return out }
	want := dirGrad(x, g, fwd)
	got := make([]float32, len(x))
	GDNL2NormBackward(got[2:], g, x[2:], tt*heads, n, heads, stride)
	if err := CheckClose("l2norm dx", got, want, 1e-3); err != nil {
		t.Error(err)
	}

	const nv = 3
	a, b := randVec(r, 4*nv, 1), randVec(r, 4*nv, 1)
	aLog, dtb := randVec(r, nv, 0.5), randVec(r, nv, 1)
	dg, dbeta := randVec(r, 4*nv, 1), randVec(r, 4*nv, 1)
	da, db := GDNGatesBackward(dg, dbeta, a, b, aLog, dtb)
	wantA := dirGrad(a, dg, func(v []float32) []float32 { gg, _ := GDNGates(v, b, aLog, dtb); return gg })
	wantB := dirGrad(b, dbeta, func(v []float32) []float32 { _, be := GDNGates(a, v, aLog, dtb); return be })
	if err := CheckClose("gates da", da, wantA, 1e-3); err != nil {
		t.Error(err)
	}
	if err := CheckClose("gates db", db, wantB, 1e-3); err != nil {
		t.Error(err)
	}

	const hd = 4
	o, qg, dy := randVec(r, 2*3*hd, 1), randVec(r, 2*3*2*hd, 1), randVec(r, 2*3*hd, 1)
	dqg := make([]float32, len(qg))
	do := AttnGateBackward(dy, o, qg, dqg, hd)
	if err := CheckClose("gate do", do, dirGrad(o, dy, func(v []float32) []float32 { return AttnGate(v, qg, hd) }), 1e-3); err != nil {
		t.Error(err)
	}
	if err := CheckClose("gate dqg", dqg, dirGrad(qg, dy, func(v []float32) []float32 { return AttnGate(o, v, hd) }), 1e-3); err != nil {
		t.Error(err)
	}
}
