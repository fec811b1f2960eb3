//go:build masscuda || masscudaemu

// Package cublaslt is a small cgo shim over cuBLASLt for bf16 matrix products with fp32
// accumulation. It dlopens libcublasLt.so.13, .12 or .11 at run time (from the folder named
// by MASS_CUBLASLT_DIR or Open's argument, else the loader's search path), because the GPU
// host's library may live only inside a Python environment's nvidia wheels.
package cublaslt

import (
	"fmt"

	"github.com/mass-dev/mass/errclass"
)

// CType is the element type of the output matrix C.
type CType int

// Output types.
const (
	F32 CType = iota
	BF16
)

// Gemm is one row-major product C = Alpha·op(A)·op(B) + Beta·C with op(A) [M, K] and
// op(B) [K, N]; A and B are bf16, C is CType. TransA means A is stored [K, M]; TransB that B
// is stored [N, K]. Leading dimensions are row strides in elements (0 means packed). With
// Batch > 1 the Stride fields give the element offset between consecutive matrices.
type Gemm struct {
	TransA, TransB bool
	M, N, K        int
	A, B, C        uintptr
	LDA, LDB, LDC  int
	CType          CType
	Alpha, Beta    float32
	Batch          int
	StrideA        int64
	StrideB        int64
	StrideC        int64
}

// check refuses a product no backend computes (class errclass.ErrInvalid).
func (g Gemm) check() error {
	if g.M <= 0 || g.N <= 0 || g.K <= 0 {
		return errclass.New(fmt.Sprintf("gemm %dx%dx%d: dimensions must be positive", g.M, g.N, g.K), errclass.ErrInvalid)
	}
	return nil
}

// leading returns the leading dimensions with zeros replaced by the packed defaults.
func (g Gemm) leading() (lda, ldb, ldc int) {
	lda, ldb, ldc = g.LDA, g.LDB, g.LDC
	if lda == 0 {
		lda = g.K
		if g.TransA {
			lda = g.M
		}
	}
	if ldb == 0 {
		ldb = g.N
		if g.TransB {
			ldb = g.K
		}
	}
	if ldc == 0 {
		ldc = g.N
	}
	return lda, ldb, ldc
}

// MaxAlign is the alignment cuBLASLt assumes for every operand unless told otherwise.
const MaxAlign = 256

// alignOf returns the largest power of two up to MaxAlign that divides the byte address of
// every matrix of an operand: its pointer and, in a strided batch, each stride step.
func alignOf(p uintptr, stride int64, elemBytes int64, batch int) int {
	a := MaxAlign
	for a > 1 && p%uintptr(a) != 0 {
		a >>= 1
	}
	if batch > 1 {
		s := stride * elemBytes
		for a > 1 && s%int64(a) != 0 {
			a >>= 1
		}
	}
	return a
}

// planKey identifies a cached matmul plan (descriptors, layouts and the chosen algorithm):
// everything the heuristic sees except the pointers, which enter only by their alignment.
type planKey struct {
	transA, transB      bool
	m, n, k             int
	lda, ldb, ldc       int
	ctype               CType
	batch               int
	sa, sb, sc          int64
	alignA, alignB, alC int
	ws                  int64
}

// key returns g's plan key for a workspace of ws bytes.
func (g Gemm) key(ws int64) planKey {
	lda, ldb, ldc := g.leading()
	batch := max(g.Batch, 1)
	cb := int64(4)
	if g.CType == BF16 {
		cb = 2
	}
	k := planKey{transA: g.TransA, transB: g.TransB, m: g.M, n: g.N, k: g.K, lda: lda, ldb: ldb, ldc: ldc,
		ctype: g.CType, batch: batch, ws: ws,
		alignA: alignOf(g.A, g.StrideA, 2, batch), alignB: alignOf(g.B, g.StrideB, 2, batch), alC: alignOf(g.C, g.StrideC, cb, batch)}
	if batch > 1 {
		k.sa, k.sb, k.sc = g.StrideA, g.StrideB, g.StrideC
	}
	return k
}

// maxPlans bounds the plan cache; past it the cache is emptied (a run has a few dozen shapes).
const maxPlans = 1024

// plans caches one value per planKey and counts how often it had to build one.
type plans[T any] struct {
	m     map[planKey]T
	Built int
}

// get returns the cached plan for k, building it with mk (and dropping everything through
// drop when the cache is full) on a miss.
func (p *plans[T]) get(k planKey, mk func() (T, error), drop func(T)) (T, error) {
	if v, ok := p.m[k]; ok {
		return v, nil
	}
	if p.m == nil || len(p.m) >= maxPlans {
		p.clear(drop)
	}
	v, err := mk()
	if err != nil {
		return v, err
	}
	p.m[k] = v
	p.Built++
	return v, nil
}

func (p *plans[T]) clear(drop func(T)) {
	for _, v := range p.m {
		drop(v)
	}
	p.m = map[planKey]T{}
}
