package cuda

import "math"

// GDNL2Norm is the reference for gdn_l2norm_fwd: rows (t, h) of x read at t·stride + h·n,
// out [T·heads, n] = x/√(Σx² + 1e-6), and each row's 1/√(Σx² + 1e-6).
func GDNL2Norm(x []float32, rows, n, heads, stride int) (out, rinv []float32) {
	out, rinv = make([]float32, rows*n), make([]float32, rows)
	for r := 0; r < rows; r++ {
		o := (r/heads)*stride + (r%heads)*n
		var ss float64
		for _, v := range x[o : o+n] {
			ss += float64(v) * float64(v)
		}
		ri := 1 / math.Sqrt(ss+1e-6)
		rinv[r] = float32(ri)
		for i := 0; i < n; i++ {
			out[r*n+i] = float32(float64(x[o+i]) * ri)
		}
	}
	return out, rinv
}

// GDNL2NormBackward is the reference for gdn_l2norm_bwd: dx in x's strided layout (other
// columns left as they are in dx) for g [T·heads, n].
func GDNL2NormBackward(dx, g, x []float32, rows, n, heads, stride int) {
	for r := 0; r < rows; r++ {
		o := (r/heads)*stride + (r%heads)*n
		var ss, dot float64
		for _, v := range x[o : o+n] {
			ss += float64(v) * float64(v)
		}
		ri := 1 / math.Sqrt(ss+1e-6)
		for i := 0; i < n; i++ {
			dot += float64(g[r*n+i]) * float64(x[o+i]) * ri
		}
		for i := 0; i < n; i++ {
			dx[o+i] = float32(ri * (float64(g[r*n+i]) - float64(x[o+i])*ri*dot))
		}
	}
}

// GDNGates is the reference for gdn_gates_fwd: g = −exp(A_log)·softplus(a + dt_bias) and
// β = σ(b) over [T, nv] (head h = i mod nv).
func GDNGates(a, b, aLog, dtBias []float32) (g, beta []float32) {
	nv := len(aLog)
	g, beta = make([]float32, len(a)), make([]float32, len(b))
	for i := range a {
		h := i % nv
		x := float64(a[i]) + float64(dtBias[h])
		sp := x
		if x <= 20 {
			sp = math.Log1p(math.Exp(x))
		}
		g[i] = float32(-math.Exp(float64(aLog[h])) * sp)
		beta[i] = float32(sigmoid(float64(b[i])))
	}
	return g, beta
}

// GDNGatesBackward is the reference for gdn_gates_bwd: da and db for dg and dβ.
func GDNGatesBackward(dg, dbeta, a, b, aLog, dtBias []float32) (da, db []float32) {
	nv := len(aLog)
	da, db = make([]float32, len(a)), make([]float32, len(b))
	for i := range a {
		h := i % nv
		s := sigmoid(float64(a[i]) + float64(dtBias[h]))
		da[i] = float32(float64(dg[i]) * -math.Exp(float64(aLog[h])) * s)
		be := sigmoid(float64(b[i]))
		db[i] = float32(float64(dbeta[i]) * be * (1 - be))
	}
	return da, db
}

// AttnGate is the reference for attn_gate_fwd: y = o·σ(gate), the gate of element (t, h, i)
// at qg[(t·H + h)·2·hd + hd + i].
func AttnGate(o, qg []float32, hd int) []float32 {
	y := make([]float32, len(o))
	for i := range o {
		y[i] = float32(float64(o[i]) * sigmoid(float64(qg[(i/hd)*2*hd+hd+i%hd])))
	}
	return y
}

// AttnGateBackward is the reference for attn_gate_bwd: do, and dgate written into the gate
// half of dqg (the query half left as it is).
func AttnGateBackward(dy, o, qg, dqg []float32, hd int) []float32 {
	do := make([]float32, len(o))
	for i := range o {
		gi := (i/hd)*2*hd + hd + i%hd
		s := sigmoid(float64(qg[gi]))
		do[i] = float32(float64(dy[i]) * s)
		dqg[gi] = float32(float64(dy[i]) * float64(o[i]) * s * (1 - s))
	}
	return do
}
