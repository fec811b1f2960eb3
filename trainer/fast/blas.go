package fast

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -lopenblas
#include "kernels.h"

// The CBLAS entry point, declared here so that building needs no header.
void cblas_sgemm(int order, int transA, int transB, int m, int n, int k,
	float alpha, const float *a, int lda, const float *b, int ldb,
	float beta, float *c, int ldc);
// OpenBLAS's thread count; weak, so another CBLAS links too.
extern void openblas_set_num_threads(int n) __attribute__((weak));

static void mass_blas_threads(int n) {
	if (openblas_set_num_threads) openblas_set_num_threads(n);
}
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

const (
	rowMajor = 101
	noTrans  = 111
	trans    = 112
)

var blasOnce sync.Once

// initBLAS makes OpenBLAS single-threaded: this package spreads the work over
// cores itself, each goroutine calling a single-threaded sgemm.
func initBLAS() { blasOnce.Do(func() { C.mass_blas_threads(1) }) }

func tr(t bool) C.int {
	if t {
		return trans
	}
	return noTrans
}

// sgemm is C = alpha·op(A)·op(B) + beta·C, row-major, on one thread.
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(c, m, n, ldc, beta)
		return
	}
	C.cblas_sgemm(rowMajor, tr(tA), tr(tB), C.int(m), C.int(n), C.int(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.int(lda), (*C.float)(unsafe.Pointer(&b[0])), C.int(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

func scaleC(c []float32, m, n, ldc int, beta float32) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemm is sgemm with the work split over the cores: by rows of C when it has
// more rows than columns, else by columns. Slices start at each operand's
// first element; the split moves those starts.
func gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	w := workers()
	flops := 2 * m * n * k
	if w == 1 || flops < 1<<20 {
		sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if m >= n {
		parts := split(m, w, 16)
		fork(len(parts)-1, func(i int) {
			r0, r1 := parts[i], parts[i+1]
			ao := r0 * lda
			if tA {
				ao = r0
			}
			sgemm(tA, tB, r1-r0, n, k, alpha, a[ao:], lda, b, ldb, beta, c[r0*ldc:], ldc)
		})
		return
	}
	parts := split(n, w, 64)
	fork(len(parts)-1, func(i int) {
		c0, c1 := parts[i], parts[i+1]
		bo := c0
		if tB {
			bo = c0 * ldb
		}
		sgemm(tA, tB, m, c1-c0, k, alpha, a, lda, b[bo:], ldb, beta, c[c0:], ldc)
	})
}

// workers is the number of goroutines a parallel step uses.
func workers() int { return runtime.GOMAXPROCS(0) }

// split cuts [0,n) into at most w ranges of at least min (unless n < min).
func split(n, w, min int) []int {
	if w > (n+min-1)/min {
		w = (n + min - 1) / min
	}
	if w < 1 {
		w = 1
	}
	out := make([]int, w+1)
	for i := 0; i <= w; i++ {
		out[i] = i * n / w
	}
	return out
}

// fork calls f(0..n-1) on n goroutines and waits.
func fork(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) { defer wg.Done(); f(i) }(i)
	}
	wg.Wait()
}

// parallelRows calls f on contiguous row ranges of [0,n) over the cores.
func parallelRows(n int, f func(r0, r1 int)) {
	parts := split(n, workers(), 8)
	fork(len(parts)-1, func(i int) { f(parts[i], parts[i+1]) })
}

// expShift writes exp(x[i]-shift) into x and returns the sum (C, vectorized).
func expShift(x []float32, shift float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return float32(C.mass_exp_shift((*C.float)(unsafe.Pointer(&x[0])), C.int(len(x)), C.float(shift)))
}

// maxOf returns the largest value of x (C, vectorized).
func maxOf(x []float32) float32 {
	return float32(C.mass_max((*C.float)(unsafe.Pointer(&x[0])), C.int(len(x))))
}
