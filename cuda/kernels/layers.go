//go:build masscuda || masscudaemu

package kernels

import (
	"fmt"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/errclass"
)

type (
	// P is a device pointer (0 for an absent optional input).
	P = uintptr
)

// invalid is the error of a launch refused before it runs (a shape, head
// size or alignment the kernel does not take): class errclass.ErrInvalid.
func invalid(format string, args ...any) error {
	return errclass.New(fmt.Sprintf(format, args...), errclass.ErrInvalid)
}

func ptr(p P) device.Arg     { return device.Ptr(p) }
func i(v int) device.Arg     { return device.Int(v) }
func f(v float32) device.Arg { return device.F32(v) }

// Embedding: out [T, D] bf16 = table [V, D] bf16 rows at ids [T] int32.
func (o *Ops) Embedding(out, table, ids P, t, d, v int) error {
	return o.X.Launch("embedding_fwd", device.D1(min(max(t, 1), 65535)), device.D1(256), 0,
		ptr(out), ptr(table), ptr(ids), i(t), i(d), i(v))
}

// RMSNormFwd: y, hOut [rows, D] bf16, rstd [rows] f32, from x (+ resid when non-zero) and w.
func (o *Ops) RMSNormFwd(y, hOut, rstd, x, resid, w P, n, d int, eps float32) error {
	return o.X.Launch("rmsnorm_fwd", rows(n), device.D1(rowBlock(d)), 0,
		ptr(y), ptr(hOut), ptr(rstd), ptr(x), ptr(resid), ptr(w), i(n), i(d), f(eps))
}

// RMSNormBwd: dh [rows, D] bf16 from dy, h, rstd, w (+ dresid when non-zero).
func (o *Ops) RMSNormBwd(dh, dy, h, rstd, w, dresid P, n, d int) error {
	return o.X.Launch("rmsnorm_bwd", rows(n), device.D1(rowBlock(d)), 0,
		ptr(dh), ptr(dy), ptr(h), ptr(rstd), ptr(w), ptr(dresid), i(n), i(d))
}

func halfBlock(hd int) device.Dim { return device.D1((hd/2 + 31) / 32 * 32) }

// checkRoPEHeadDim rejects head dims the qk_norm_rope kernels cannot run: one thread per
// rotated pair, at most 1024 threads a block.
func checkRoPEHeadDim(hd int) error {
	if hd%2 != 0 || hd > 2048 {
		return invalid("qk_norm_rope: head_dim %d must be even and at most 2048", hd)
	}
	return nil
}

// QKNormRoPEFwd normalizes and rotates x [T, H, hd] into out, writing rstd [T·H].
func (o *Ops) QKNormRoPEFwd(out, rstd, x, w, pos P, t, h, hd int, eps, theta float32) error {
	if err := checkRoPEHeadDim(hd); err != nil {
		return err
	}
	return o.X.Launch("qk_norm_rope_fwd", rows(t*h), halfBlock(hd), 0,
		ptr(out), ptr(rstd), ptr(x), ptr(w), ptr(pos), i(t*h), i(h), i(hd), f(eps), f(theta))
}

// QKNormRoPEBwd is the backward of QKNormRoPEFwd.
func (o *Ops) QKNormRoPEBwd(dx, dout, x, rstd, w, pos P, t, h, hd int, theta float32) error {
	if err := checkRoPEHeadDim(hd); err != nil {
		return err
	}
	return o.X.Launch("qk_norm_rope_bwd", rows(t*h), halfBlock(hd), 0,
		ptr(dx), ptr(dout), ptr(x), ptr(rstd), ptr(w), ptr(pos), i(t*h), i(h), i(hd), f(theta))
}

// RoPEFwd rotates x [T, H, hd] into out by plain rotate_half RoPE (Qwen2: no q/k norm).
// out may be x: each thread reads its pair before it writes it.
func (o *Ops) RoPEFwd(out, x, pos P, t, h, hd int, theta float32) error {
	if hd%2 != 0 {
		return invalid("rope: head_dim %d must be even", hd)
	}
	if t*h*hd/2 >= 1<<31 {
		return invalid("rope: %d rotated pairs, want fewer than 2^31 (the kernel indexes in 32 bits)", t*h*hd/2)
	}
	return o.launchN("rope_fwd", t*h*hd/2, ptr(out), ptr(x), ptr(pos), i(t*h), i(h), i(hd), f(theta))
}

// RoPEBwd is the backward of RoPEFwd (the rotation by −angle); it needs no saved input,
// and dx may be dout.
func (o *Ops) RoPEBwd(dx, dout, pos P, t, h, hd int, theta float32) error {
	if hd%2 != 0 {
		return invalid("rope: head_dim %d must be even", hd)
	}
	if t*h*hd/2 >= 1<<31 {
		return invalid("rope: %d rotated pairs, want fewer than 2^31 (the kernel indexes in 32 bits)", t*h*hd/2)
	}
	return o.launchN("rope_bwd", t*h*hd/2, ptr(dx), ptr(dout), ptr(pos), i(t*h), i(h), i(hd), f(theta))
}

// BiasFill writes bias [cols] into every row of out [rows, cols] (bf16), as the C of a
// projection's product with beta 1.
func (o *Ops) BiasFill(out, bias P, rows, cols int) error {
	return o.X.Launch("bias_fill_bf16", device.D1(max(1, min(rows, o.X.Info.SMs*16))), device.D1(rowBlock(cols)), 0,
		ptr(out), ptr(bias), i(rows), i(cols))
}

// SwiGLUFwd: h = silu(gate)·up over n elements.
func (o *Ops) SwiGLUFwd(h, gate, up P, n int) error {
	if err := aligned16("swiglu_fwd", h, gate, up); err != nil {
		return err
	}
	return o.launchN("swiglu_fwd", n, ptr(h), ptr(gate), ptr(up), i(n))
}

// SwiGLUBwd: dgate, dup from dh.
func (o *Ops) SwiGLUBwd(dgate, dup, dh, gate, up P, n int) error {
	if err := aligned16("swiglu_bwd", dgate, dup, dh, gate, up); err != nil {
		return err
	}
	return o.launchN("swiglu_bwd", n, ptr(dgate), ptr(dup), ptr(dh), ptr(gate), ptr(up), i(n))
}

// CastF32BF16 converts n floats to bf16.
func (o *Ops) CastF32BF16(out, in P, n int) error {
	return o.launchN("cast_f32_bf16", n, ptr(out), ptr(in), i(n))
}

// CastBF16F32 widens n bf16 values.
func (o *Ops) CastBF16F32(out, in P, n int) error {
	return o.launchN("cast_bf16_f32", n, ptr(out), ptr(in), i(n))
}

// Fill sets n floats to v.
func (o *Ops) Fill(out P, v float32, n int) error {
	return o.launchN("fill_f32", n, ptr(out), f(v), i(n))
}

// AddBF16: a += b over n bf16 elements.
func (o *Ops) AddBF16(a, b P, n int) error {
	return o.launchN("add_bf16", n, ptr(a), ptr(b), i(n))
}

// Dropout: out = x masked by the shared hash with probability p, scaled by 1/(1−p).
func (o *Ops) Dropout(out, x P, n int, seed uint32, p float32) error {
	if err := aligned16("lora_dropout", out, x); err != nil {
		return err
	}
	return o.launchN("lora_dropout", n, ptr(out), ptr(x), i(n), i(int(seed)), f(p))
}

// DropoutAdd: dx += t masked as Dropout masks (seed, p), scaled by 1/(1−p): the dropout's
// backward fused with the add into the input gradient.
func (o *Ops) DropoutAdd(dx, t P, n int, seed uint32, p float32) error {
	if err := aligned16("lora_dropout_add", dx, t); err != nil {
		return err
	}
	return o.launchN("lora_dropout_add", n, ptr(dx), ptr(t), i(n), i(int(seed)), f(p))
}

// SumSq adds Σ x² over n floats into *acc.
func (o *Ops) SumSq(acc, x P, n int) error {
	return o.launchN("sumsq", n, ptr(acc), ptr(x), i(n))
}

// FillNormal writes n bf16 values std·N(0,1) from the counter-based stream under seed.
func (o *Ops) FillNormal(out P, n int, seed uint32, std float32) error {
	return o.launchN("fill_normal_bf16", n, ptr(out), i(n), i(int(seed)), f(std))
}

// aligned16 refuses a tensor that is not 16-byte aligned for a kernel that moves 128 bits at
// a time (every devmem block is; a view into one may not be).
func aligned16(kernel string, ptrs ...P) error {
	for _, p := range ptrs {
		if p%16 != 0 {
			return invalid("%s: tensor at %#x is not 16-byte aligned (128-bit loads)", kernel, p)
		}
	}
	return nil
}
