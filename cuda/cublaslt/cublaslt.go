//go:build masscuda

package cublaslt

// #cgo LDFLAGS: -ldl
// #include <stdlib.h>
// #include "shim.h"
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// EnvDir names the environment variable that points at the folder holding libcublasLt.
const EnvDir = "MASS_CUBLASLT_DIR"

// Handle is an open cuBLASLt handle. Use it only from the thread that owns the CUDA
// context (the device layer's Do).
type Handle struct {
	h    unsafe.Pointer
	Path string // the library that was loaded
}

// Open loads cuBLASLt from dir (or $MASS_CUBLASLT_DIR, or the search path when both are
// empty) and creates a handle on the current context.
func Open(dir string) (*Handle, error) {
	if dir == "" {
		dir = os.Getenv(EnvDir)
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var path, msg [4096]C.char
	if C.mass_lt_open(cdir, &path[0], C.size_t(len(path)), &msg[0], C.size_t(len(msg))) != 0 {
		return nil, fmt.Errorf("load cuBLASLt (set %s to the folder holding libcublasLt.so.13/.12/.11): %s",
			EnvDir, C.GoString(&msg[0]))
	}
	h := &Handle{Path: C.GoString(&path[0])}
	if st := C.mass_lt_create(&h.h); st != 0 {
		return nil, fmt.Errorf("cublasLtCreate: status %d", int(st))
	}
	return h, nil
}

// Version returns cublasLtGetVersion() (e.g. 130000 for 13.0).
func (h *Handle) Version() int { return int(C.mass_lt_version()) }

// Close destroys the handle.
func (h *Handle) Close() error {
	if st := C.mass_lt_destroy(h.h); st != 0 {
		return fmt.Errorf("cublasLtDestroy: status %d", int(st))
	}
	return nil
}

// Matmul runs g on stream with the given device workspace. cuBLASLt is column-major, so
// the row-major product is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ with the operands swapped.
func (h *Handle) Matmul(g Gemm, workspace uintptr, wsBytes int64, stream uintptr) error {
	if g.M <= 0 || g.N <= 0 || g.K <= 0 {
		return fmt.Errorf("gemm %dx%dx%d: dimensions must be positive", g.M, g.N, g.K)
	}
	lda, ldb, ldc := g.leading()
	batch := max(g.Batch, 1)
	st := C.mass_lt_matmul(h.h, b2i(g.TransB), b2i(g.TransA), C.int(g.N), C.int(g.M), C.int(g.K),
		C.float(g.Alpha), C.uintptr_t(g.B), C.int(ldb), C.longlong(g.StrideB),
		C.uintptr_t(g.A), C.int(lda), C.longlong(g.StrideA), C.float(g.Beta),
		C.uintptr_t(g.C), C.int(g.CType), C.int(ldc), C.longlong(g.StrideC), C.int(batch),
		C.uintptr_t(workspace), C.size_t(wsBytes), C.uintptr_t(stream))
	if st != 0 {
		return fmt.Errorf("cublasLtMatmul %dx%dx%d (transA %v, transB %v, batch %d): status %d",
			g.M, g.N, g.K, g.TransA, g.TransB, batch, int(st))
	}
	return nil
}

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
