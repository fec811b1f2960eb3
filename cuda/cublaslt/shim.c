//go:build masscuda

#include "shim.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Values from cublasLt.h / library_types.h, stable across cuBLASLt 11, 12 and 13.
enum { R_32F = 0, R_16BF = 14, COMPUTE_32F = 68 };
enum { OP_N = 0, OP_T = 1 };
enum { DESC_TRANSA = 3, DESC_TRANSB = 4 };
enum { LAYOUT_BATCH_COUNT = 5, LAYOUT_STRIDED_BATCH_OFFSET = 6 };
enum { PREF_MAX_WORKSPACE_BYTES = 1 };
enum { PREF_MIN_ALIGNMENT_A_BYTES = 5, PREF_MIN_ALIGNMENT_B_BYTES = 6, PREF_MIN_ALIGNMENT_C_BYTES = 7,
       PREF_MIN_ALIGNMENT_D_BYTES = 8 };

typedef struct { uint64_t data[8]; } algo_t;
typedef struct {
    algo_t algo;
    size_t workspaceSize;
    int state;
    float wavesCount;
    int reserved[4];
} heur_t;

static void* lib;
static int (*p_create)(void**);
static int (*p_destroy)(void*);
static size_t (*p_version)(void);
static int (*p_desc_create)(void**, int, int);
static int (*p_desc_set)(void*, int, const void*, size_t);
static int (*p_desc_destroy)(void*);
static int (*p_layout_create)(void**, int, uint64_t, uint64_t, int64_t);
static int (*p_layout_set)(void*, int, const void*, size_t);
static int (*p_layout_destroy)(void*);
static int (*p_pref_create)(void**);
static int (*p_pref_set)(void*, int, const void*, size_t);
static int (*p_pref_destroy)(void*);
static int (*p_heuristic)(void*, void*, void*, void*, void*, void*, void*, int, heur_t*, int*);
static int (*p_matmul)(void*, void*, const void*, const void*, void*, const void*, void*,
                       const void*, const void*, void*, void*, void*, const algo_t*, void*,
                       size_t, void*);

#define SYM(var, name)                                              \
    do {                                                            \
        *(void**)(&var) = dlsym(lib, name);                         \
        if (!var) {                                                 \
            snprintf(err, errlen, "%s: missing symbol %s", path, name); \
            return -1;                                              \
        }                                                           \
    } while (0)

int mass_lt_open(const char* dir, char* path, size_t pathlen, char* err, size_t errlen) {
    static const char* names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"};
    err[0] = 0;
    if (lib) return 0;
    size_t used = 0;
    for (int i = 0; i < 3 && !lib; i++) {
        if (dir && dir[0]) snprintf(path, pathlen, "%s/%s", dir, names[i]);
        else snprintf(path, pathlen, "%s", names[i]);
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib && used < errlen) {
            const char* e = dlerror();
            used += snprintf(err + used, errlen - used, "%s%s", used ? "; " : "", e ? e : path);
        }
    }
    if (!lib) return -1;
    err[0] = 0;
    SYM(p_create, "cublasLtCreate");
    SYM(p_destroy, "cublasLtDestroy");
    SYM(p_version, "cublasLtGetVersion");
    SYM(p_desc_create, "cublasLtMatmulDescCreate");
    SYM(p_desc_set, "cublasLtMatmulDescSetAttribute");
    SYM(p_desc_destroy, "cublasLtMatmulDescDestroy");
    SYM(p_layout_create, "cublasLtMatrixLayoutCreate");
    SYM(p_layout_set, "cublasLtMatrixLayoutSetAttribute");
    SYM(p_layout_destroy, "cublasLtMatrixLayoutDestroy");
    SYM(p_pref_create, "cublasLtMatmulPreferenceCreate");
    SYM(p_pref_set, "cublasLtMatmulPreferenceSetAttribute");
    SYM(p_pref_destroy, "cublasLtMatmulPreferenceDestroy");
    SYM(p_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    SYM(p_matmul, "cublasLtMatmul");
    return 0;
}

size_t mass_lt_version(void) { return p_version ? p_version() : 0; }
int mass_lt_create(void** h) { return p_create(h); }
int mass_lt_destroy(void* h) { return p_destroy(h); }

static int layout(void** l, int type, int rows, int cols, int ld, int batch, long long stride) {
    int st = p_layout_create(l, type, (uint64_t)rows, (uint64_t)cols, (int64_t)ld);
    if (st || batch <= 1) return st;
    int32_t b = batch;
    int64_t s = stride;
    st = p_layout_set(*l, LAYOUT_BATCH_COUNT, &b, sizeof b);
    if (!st) st = p_layout_set(*l, LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s);
    return st;
}

struct mass_lt_plan {
    void *desc, *la, *lb, *lc;
    heur_t heur;
};

void mass_lt_plan_free(void* p) {
    struct mass_lt_plan* pl = p;
    if (!pl) return;
    if (pl->lc) p_layout_destroy(pl->lc);
    if (pl->lb) p_layout_destroy(pl->lb);
    if (pl->la) p_layout_destroy(pl->la);
    if (pl->desc) p_desc_destroy(pl->desc);
    free(pl);
}

static int set_u32(void* pref, int attr, int v) {
    uint32_t u = (uint32_t)v;
    return p_pref_set(pref, attr, &u, sizeof u);
}

// Errors: the cuBLAS status, or 1000 + step when the heuristic found no algorithm. The
// alignments (bytes, powers of two up to 256) are those of the operands' real pointers and
// batch strides: without them cuBLASLt assumes 256 and may pick a kernel that faults or
// reads misaligned on attention's per-head offsets.
int mass_lt_plan(void* h, int transa, int transb, int m, int n, int k, int lda, long long strideA,
                 int ldb, long long strideB, int ctype, int ldc, long long strideC, int batch,
                 int alignA, int alignB, int alignC, size_t wsSize, void** out) {
    struct mass_lt_plan* pl = calloc(1, sizeof *pl);
    void* pref = 0;
    if (!pl) return 1002;
    int st = p_desc_create(&pl->desc, COMPUTE_32F, R_32F);
    int opa = transa ? OP_T : OP_N, opb = transb ? OP_T : OP_N;
    if (!st) st = p_desc_set(pl->desc, DESC_TRANSA, &opa, sizeof opa);
    if (!st) st = p_desc_set(pl->desc, DESC_TRANSB, &opb, sizeof opb);
    if (!st) st = layout(&pl->la, R_16BF, transa ? k : m, transa ? m : k, lda, batch, strideA);
    if (!st) st = layout(&pl->lb, R_16BF, transb ? n : k, transb ? k : n, ldb, batch, strideB);
    if (!st) st = layout(&pl->lc, ctype ? R_16BF : R_32F, m, n, ldc, batch, strideC);
    if (!st) st = p_pref_create(&pref);
    uint64_t wsz = wsSize;
    if (!st) st = p_pref_set(pref, PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz);
    if (!st) st = set_u32(pref, PREF_MIN_ALIGNMENT_A_BYTES, alignA);
    if (!st) st = set_u32(pref, PREF_MIN_ALIGNMENT_B_BYTES, alignB);
    if (!st) st = set_u32(pref, PREF_MIN_ALIGNMENT_C_BYTES, alignC);
    if (!st) st = set_u32(pref, PREF_MIN_ALIGNMENT_D_BYTES, alignC);
    int found = 0;
    if (!st) st = p_heuristic(h, pl->desc, pl->la, pl->lb, pl->lc, pl->lc, pref, 1, &pl->heur, &found);
    if (!st && found == 0) st = 1001;
    if (pref) p_pref_destroy(pref);
    if (st) {
        mass_lt_plan_free(pl);
        return st;
    }
    *out = pl;
    return 0;
}

int mass_lt_run(void* h, void* plan, float alpha, uintptr_t A, uintptr_t B, float beta, uintptr_t C,
                uintptr_t ws, size_t wsSize, uintptr_t stream) {
    struct mass_lt_plan* pl = plan;
    return p_matmul(h, pl->desc, &alpha, (const void*)A, pl->la, (const void*)B, pl->lb, &beta,
                    (void*)C, pl->lc, (void*)C, pl->lc, &pl->heur.algo, (void*)ws, wsSize,
                    (void*)stream);
}
