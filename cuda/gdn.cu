// Gated DeltaNet (Qwen3.5/3.6): the chunked (WY/UT) gated delta rule, forward, fp32.
// One block per value head walks the chunks in order; within a chunk of n <= C tokens
// (Γ = cumsum of the log decays g, γ = exp Γ, S the state entering the chunk):
//   A[r,s] = β_r exp(Γ_r-Γ_s) k_r·k_s (s < r),  T = (I + A)^-1,
//   U = T (β⊙V),  W = T (βγ⊙K),  Δ = U - W S,
//   O = γ⊙(Q S) + (M ⊙ Q Kᵀ) Δ with M[r,s] = exp(Γ_r-Γ_s) (s <= r),
//   S <- exp(Γ_n) S + (exp(Γ_n-Γ)⊙K)ᵀ Δ.
// q, k [T, nk, dk] (L2-normalized; q is scaled here), v and o [T, nv, dv], g and beta [T, nv],
// s0 and s_out [nv, dk, dv] (s0 may be null: zeros). Value head h reads key head h/(nv/nk).
// work holds gdn_chunk_work(C, dk, dv) floats per value head. Correctness first: every
// product is a loop over global scratch; the Go reference is cuda.GatedDeltaRule.
#include "common.cuh"

extern "C" __global__ void gdn_chunk_fwd(float* o, float* s_out, const float* q, const float* k,
                                         const float* v, const float* g, const float* beta,
                                         const float* s0, float* work, long long T, long long nk,
                                         long long nv, long long dk, long long dv, long long C,
                                         float scale) {
    long long h = blockIdx.x, kh = h / (nv / nk);
    long long per = dk * dv + C * (2 * dk + dk + 3 * dv + 3 * C + 2);
    float* S = work + h * per;
    float *Q = S + dk * dv, *K = Q + C * dk, *W = K + C * dk, *V = W + C * dk, *U = V + C * dv;
    float *D = U + C * dv, *A = D + C * dv, *P = A + C * C, *Tm = P + C * C, *G = Tm + C * C, *B = G + C;
    long long tid = threadIdx.x, nt = blockDim.x;
    for (long long i = tid; i < dk * dv; i += nt) S[i] = s0 ? s0[h * dk * dv + i] : 0.f;
    for (long long c0 = 0; c0 < T; c0 += C) {
        long long n = T - c0 < C ? T - c0 : C;
        __syncthreads();
        for (long long x = tid; x < n * dk; x += nt) {
            long long r = x / dk, i = x % dk, src = ((c0 + r) * nk + kh) * dk + i;
            Q[x] = scale * q[src];
            K[x] = k[src];
        }
        for (long long x = tid; x < n * dv; x += nt) V[x] = v[((c0 + x / dv) * nv + h) * dv + x % dv];
        if (tid == 0) {
            float acc = 0.f;
            for (long long r = 0; r < n; r++) {
                acc += g[(c0 + r) * nv + h];
                G[r] = acc;
                B[r] = beta[(c0 + r) * nv + h];
            }
        }
        __syncthreads();
        for (long long x = tid; x < n * n; x += nt) {
            long long r = x / n, s = x % n;
            float kk = 0.f, qk = 0.f;
            for (long long i = 0; i < dk; i++) {
                kk += K[r * dk + i] * K[s * dk + i];
                qk += Q[r * dk + i] * K[s * dk + i];
            }
            float e = s <= r ? expf(G[r] - G[s]) : 0.f;
            A[x] = s < r ? B[r] * e * kk : 0.f;
            P[x] = e * qk;
        }
        __syncthreads();
        for (long long r = 0; r < n; r++) {  // T = (I + A)^-1, forward substitution by rows
            for (long long j = tid; j < n; j += nt) {
                float y = j == r ? 1.f : 0.f;
                for (long long s = j; s < r; s++) y -= A[r * n + s] * Tm[s * n + j];
                Tm[r * n + j] = j <= r ? y : 0.f;
            }
            __syncthreads();
        }
        for (long long x = tid; x < n * dv; x += nt) {
            long long r = x / dv, j = x % dv;
            float y = 0.f;
            for (long long s = 0; s <= r; s++) y += Tm[r * n + s] * B[s] * V[s * dv + j];
            U[x] = y;
        }
        for (long long x = tid; x < n * dk; x += nt) {
            long long r = x / dk, i = x % dk;
            float y = 0.f;
            for (long long s = 0; s <= r; s++) y += Tm[r * n + s] * B[s] * expf(G[s]) * K[s * dk + i];
            W[x] = y;
        }
        __syncthreads();
        for (long long x = tid; x < n * dv; x += nt) {
            long long r = x / dv, j = x % dv;
            float y = U[x];
            for (long long i = 0; i < dk; i++) y -= W[r * dk + i] * S[i * dv + j];
            D[x] = y;
        }
        __syncthreads();
        for (long long x = tid; x < n * dv; x += nt) {
            long long r = x / dv, j = x % dv;
            float qs = 0.f, y = 0.f;
            for (long long i = 0; i < dk; i++) qs += Q[r * dk + i] * S[i * dv + j];
            for (long long s = 0; s <= r; s++) y += P[r * n + s] * D[s * dv + j];
            o[((c0 + r) * nv + h) * dv + j] = expf(G[r]) * qs + y;
        }
        __syncthreads();
        for (long long x = tid; x < dk * dv; x += nt) {
            long long i = x / dv, j = x % dv;
            float y = expf(G[n - 1]) * S[x];
            for (long long s = 0; s < n; s++) y += expf(G[n - 1] - G[s]) * K[s * dk + i] * D[s * dv + j];
            S[x] = y;
        }
    }
    __syncthreads();
    for (long long x = tid; x < dk * dv; x += nt) s_out[h * dk * dv + x] = S[x];
}
