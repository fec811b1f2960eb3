//go:build masscuda || masscudaemu

// Package cublaslt is a small cgo shim over cuBLASLt for bf16 matrix products with fp32
// accumulation. It dlopens libcublasLt.so.13, .12 or .11 at run time (from the folder named
// by MASS_CUBLASLT_DIR or Open's argument, else the loader's search path), because the GPU
// host's library may live only inside a Python environment's nvidia wheels.
package cublaslt

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
