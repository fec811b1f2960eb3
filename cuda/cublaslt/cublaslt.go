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

	"github.com/mass-dev/mass/errclass"
)

// EnvDir names the environment variable that points at the folder holding libcublasLt.
const EnvDir = "MASS_CUBLASLT_DIR"

// Handle is an open cuBLASLt handle. Use it only from the thread that owns the CUDA
// context (the device layer's Do).
type Handle struct {
	h     unsafe.Pointer
	Path  string // the library that was loaded
	plans plans[unsafe.Pointer]
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
		return nil, errclass.Mark(fmt.Errorf("load cuBLASLt (set %s to the folder holding libcublasLt.so.13/.12/.11): %s",
			EnvDir, C.GoString(&msg[0])), errclass.ErrUnavailable)
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
	h.plans.clear(func(p unsafe.Pointer) { C.mass_lt_plan_free(p) })
	if st := C.mass_lt_destroy(h.h); st != 0 {
		return fmt.Errorf("cublasLtDestroy: status %d", int(st))
	}
	return nil
}

// Matmul runs g on stream with the given device workspace. cuBLASLt is column-major, so
// the row-major product is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ with the operands swapped. The
// plan (descriptors, layouts, algorithm) is built once per shape and operand alignment.
func (h *Handle) Matmul(g Gemm, workspace uintptr, wsBytes int64, stream uintptr) error {
	if err := g.check(); err != nil {
		return err
	}
	k := g.key(wsBytes)
	plan, err := h.plans.get(k, func() (unsafe.Pointer, error) {
		var p unsafe.Pointer
		st := C.mass_lt_plan(h.h, b2i(k.transB), b2i(k.transA), C.int(k.n), C.int(k.m), C.int(k.k),
			C.int(k.ldb), C.longlong(k.sb), C.int(k.lda), C.longlong(k.sa), C.int(k.ctype), C.int(k.ldc),
			C.longlong(k.sc), C.int(k.batch), C.int(k.alignB), C.int(k.alignA), C.int(k.alC), C.size_t(k.ws), &p)
		if st != 0 {
			return nil, fmt.Errorf("status %d", int(st))
		}
		return p, nil
	}, func(p unsafe.Pointer) { C.mass_lt_plan_free(p) })
	if err == nil {
		if st := C.mass_lt_run(h.h, plan, C.float(g.Alpha), C.uintptr_t(g.B), C.uintptr_t(g.A), C.float(g.Beta),
			C.uintptr_t(g.C), C.uintptr_t(workspace), C.size_t(wsBytes), C.uintptr_t(stream)); st != 0 {
			err = fmt.Errorf("status %d", int(st))
		}
	}
	if err != nil {
		return fmt.Errorf("cublasLtMatmul %dx%dx%d (transA %v, transB %v, batch %d, align A/B/C %d/%d/%d): %w",
			g.M, g.N, g.K, g.TransA, g.TransB, k.batch, k.alignA, k.alignB, k.alC, err)
	}
	return nil
}

// Plans returns how many matmul plans were built so far.
func (h *Handle) Plans() int { return h.plans.Built }

func b2i(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
