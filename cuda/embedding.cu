// Embedding lookup: out[t,:] = table[ids[t],:]; ids outside [0, V) give zeros.
#include "common.cuh"

extern "C" __global__ void embedding_fwd(bf16* out, const bf16* table, const int* ids,
                                         long long T, long long D, long long V) {
    for (long long t = blockIdx.x; t < T; t += gridDim.x) {
        int id = ids[t];
        bool ok = id >= 0 && id < V;
        for (long long d = threadIdx.x; d < D; d += blockDim.x)
            out[t * D + d] = ok ? table[(long long)id * D + d] : tobf(0.f);
    }
}
