// dlopen shim for cuBLASLt: bf16 GEMMs with fp32 accumulation, without linking any
// particular libcublasLt soname at build time.
#ifndef MASS_CUBLASLT_SHIM_H
#define MASS_CUBLASLT_SHIM_H
#include <stddef.h>
#include <stdint.h>

// mass_lt_open loads libcublasLt from dir (or the default search path when dir is empty),
// trying sonames .13, .12, .11. It returns 0 and fills path, or -1 and fills err.
int mass_lt_open(const char* dir, char* path, size_t pathlen, char* err, size_t errlen);
// mass_lt_version returns cublasLtGetVersion().
size_t mass_lt_version(void);
int mass_lt_create(void** handle);
int mass_lt_destroy(void* handle);

// mass_lt_plan builds a column-major matmul plan D = alpha*op(A)*op(B) + beta*C (C and D
// share storage), bf16 A and B, C of ctype (0 = fp32, 1 = bf16), fp32 compute, strided
// batches when batch > 1: descriptors, layouts and the heuristic's first algorithm for
// operands aligned to alignA/B/C bytes. Free it with mass_lt_plan_free.
int mass_lt_plan(void* handle, int transa, int transb, int m, int n, int k, int lda, long long strideA,
                 int ldb, long long strideB, int ctype, int ldc, long long strideC, int batch,
                 int alignA, int alignB, int alignC, size_t wsSize, void** plan);
void mass_lt_plan_free(void* plan);
// mass_lt_run runs a plan on stream.
int mass_lt_run(void* handle, void* plan, float alpha, uintptr_t A, uintptr_t B, float beta, uintptr_t C,
                uintptr_t workspace, size_t wsSize, uintptr_t stream);
#endif
