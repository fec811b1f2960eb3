// Gated DeltaNet (Qwen3.5/3.6): the chunked (WY/UT) gated delta rule, forward, fp32.
// One block per value head walks the chunks in order; within a chunk of n <= C tokens
// (Γ = cumsum of the log decays g, γ = exp Γ, S the state entering the chunk):
//   A[r,s] = β_r exp(Γ_r-Γ_s) k_r·k_s (s < r),  T = (I + A)^-1,
//   U = T (β⊙V),  W = T (βγ⊙K),  Δ = U - W S,
//   O = γ⊙(Q S) + (M ⊙ Q Kᵀ) Δ with M[r,s] = exp(Γ_r-Γ_s) (s <= r),
//   S <- exp(Γ_n) S + (exp(Γ_n-Γ)⊙K)ᵀ Δ.
// q, k [T, nk, dk] (L2-normalized; q is scaled here), v and o [T, nv, dv], g and beta [T, nv],
// s0 and s_out [nv, dk, dv] (s0 may be null: zeros). Value head h reads key head h/(nv/nk).
// work holds cuda.GDNWorkFloats(C, dk, dv) floats per value head. Correctness first: every
// product is a loop over global scratch; the Go reference is cuda.GatedDeltaRule.
#include "common.cuh"

// gdn_scratch points into one head's scratch: the state and the chunk buffers.
struct gdn_scratch {
    float *S, *Q, *K, *W, *V, *U, *D, *A, *P, *Tm, *G, *B;
};

__device__ __forceinline__ gdn_scratch gdn_at(float* work, long long blk, long long dk, long long dv, long long C) {
    long long per = dk * dv + C * (3 * dk + 3 * dv + 3 * C + 2);
    gdn_scratch w;
    w.S = work + blk * per;
    w.Q = w.S + dk * dv;
    w.K = w.Q + C * dk;
    w.W = w.K + C * dk;
    w.V = w.W + C * dk;
    w.U = w.V + C * dv;
    w.D = w.U + C * dv;
    w.A = w.D + C * dv;
    w.P = w.A + C * C;
    w.Tm = w.P + C * C;
    w.G = w.Tm + C * C;
    w.B = w.G + C;
    return w;
}

// gdn_prepare loads chunk [c0, c0+n) of value head h and computes A, P = M⊙QKᵀ, T, U, W and
// Δ for the entering state w.S. It starts and ends with a barrier.
__device__ void gdn_prepare(gdn_scratch w, const float* q, const float* k, const float* v, const float* g,
                            const float* beta, long long h, long long kh, long long c0, long long n,
                            long long nk, long long nv, long long dk, long long dv, float scale) {
    long long tid = threadIdx.x, nt = blockDim.x;
    __syncthreads();
    for (long long x = tid; x < n * dk; x += nt) {
        long long r = x / dk, i = x % dk, src = ((c0 + r) * nk + kh) * dk + i;
        w.Q[x] = scale * q[src];
        w.K[x] = k[src];
    }
    for (long long x = tid; x < n * dv; x += nt) w.V[x] = v[((c0 + x / dv) * nv + h) * dv + x % dv];
    if (tid == 0) {
        float acc = 0.f;
        for (long long r = 0; r < n; r++) {
            acc += g[(c0 + r) * nv + h];
            w.G[r] = acc;
            w.B[r] = beta[(c0 + r) * nv + h];
        }
    }
    __syncthreads();
    for (long long x = tid; x < n * n; x += nt) {
        long long r = x / n, s = x % n;
        float kk = 0.f, qk = 0.f;
        for (long long i = 0; i < dk; i++) {
            kk += w.K[r * dk + i] * w.K[s * dk + i];
            qk += w.Q[r * dk + i] * w.K[s * dk + i];
        }
        float e = s <= r ? expf(w.G[r] - w.G[s]) : 0.f;
        w.A[x] = s < r ? w.B[r] * e * kk : 0.f;
        w.P[x] = e * qk;
    }
    __syncthreads();
    for (long long r = 0; r < n; r++) {  // T = (I + A)^-1, forward substitution by rows
        for (long long j = tid; j < n; j += nt) {
            float y = j == r ? 1.f : 0.f;
            for (long long s = j; s < r; s++) y -= w.A[r * n + s] * w.Tm[s * n + j];
            w.Tm[r * n + j] = j <= r ? y : 0.f;
        }
        __syncthreads();
    }
    for (long long x = tid; x < n * dv; x += nt) {
        long long r = x / dv, j = x % dv;
        float y = 0.f;
        for (long long s = 0; s <= r; s++) y += w.Tm[r * n + s] * w.B[s] * w.V[s * dv + j];
        w.U[x] = y;
    }
    for (long long x = tid; x < n * dk; x += nt) {
        long long r = x / dk, i = x % dk;
        float y = 0.f;
        for (long long s = 0; s <= r; s++) y += w.Tm[r * n + s] * w.B[s] * expf(w.G[s]) * w.K[s * dk + i];
        w.W[x] = y;
    }
    __syncthreads();
    for (long long x = tid; x < n * dv; x += nt) {
        long long r = x / dv, j = x % dv;
        float y = w.U[x];
        for (long long i = 0; i < dk; i++) y -= w.W[r * dk + i] * w.S[i * dv + j];
        w.D[x] = y;
    }
    __syncthreads();
}

// gdn_chunk_fwd: grid = nv blocks. entry (may be null) receives the state entering every
// chunk, [chunks, nv, dk, dv], for gdn_chunk_bwd.
extern "C" __global__ void gdn_chunk_fwd(float* o, float* s_out, float* entry, const float* q, const float* k,
                                         const float* v, const float* g, const float* beta,
                                         const float* s0, float* work, long long T, long long nk,
                                         long long nv, long long dk, long long dv, long long C,
                                         float scale) {
    long long h = blockIdx.x, kh = h / (nv / nk);
    gdn_scratch w = gdn_at(work, h, dk, dv, C);
    long long tid = threadIdx.x, nt = blockDim.x;
    for (long long i = tid; i < dk * dv; i += nt) w.S[i] = s0 ? s0[h * dk * dv + i] : 0.f;
    for (long long c0 = 0; c0 < T; c0 += C) {
        long long n = T - c0 < C ? T - c0 : C;
        __syncthreads();
        if (entry)
            for (long long x = tid; x < dk * dv; x += nt) entry[((c0 / C) * nv + h) * dk * dv + x] = w.S[x];
        gdn_prepare(w, q, k, v, g, beta, h, kh, c0, n, nk, nv, dk, dv, scale);
        for (long long x = tid; x < n * dv; x += nt) {
            long long r = x / dv, j = x % dv;
            float qs = 0.f, y = 0.f;
            for (long long i = 0; i < dk; i++) qs += w.Q[r * dk + i] * w.S[i * dv + j];
            for (long long s = 0; s <= r; s++) y += w.P[r * n + s] * w.D[s * dv + j];
            o[((c0 + r) * nv + h) * dv + j] = expf(w.G[r]) * qs + y;
        }
        __syncthreads();
        for (long long x = tid; x < dk * dv; x += nt) {
            long long i = x / dv, j = x % dv;
            float y = expf(w.G[n - 1]) * w.S[x];
            for (long long s = 0; s < n; s++) y += expf(w.G[n - 1] - w.G[s]) * w.K[s * dk + i] * w.D[s * dv + j];
            w.S[x] = y;
        }
    }
    __syncthreads();
    for (long long x = tid; x < dk * dv; x += nt) s_out[h * dk * dv + x] = w.S[x];
}

// gdn_back points at one key head's backward buffers, after its gdn_scratch.
struct gdn_back {
    float *dS, *nS, *DO, *dD, *dBV, *QS, *dQ, *dK, *dBK, *dW, *E2, *dP, *dA, *dKK, *E3, *dG, *dB, *DC;
};

__device__ __forceinline__ gdn_back gdn_back_at(float* p, long long dk, long long dv, long long C) {
    gdn_back b;
    b.dS = p;
    b.nS = b.dS + dk * dv;
    b.DO = b.nS + dk * dv;
    b.dD = b.DO + C * dv;
    b.dBV = b.dD + C * dv;
    b.QS = b.dBV + C * dv;
    b.dQ = b.QS + C * dv;
    b.dK = b.dQ + C * dk;
    b.dBK = b.dK + C * dk;
    b.dW = b.dBK + C * dk;
    b.E2 = b.dW + C * dk;
    b.dP = b.E2 + C * C;
    b.dA = b.dP + C * C;
    b.dKK = b.dA + C * C;
    b.E3 = b.dKK + C * C;
    b.dG = b.E3 + C * C;
    b.dB = b.dG + C;
    b.DC = b.dB + C;
    return b;
}

// gdn_bwd_chunk differentiates one chunk of value head h: b.dS holds dLoss/d(exit state)
// on entry, b.nS dLoss/d(entry state) on return; prepare ran for the entry state w.S.
__device__ void gdn_bwd_chunk(gdn_scratch w, gdn_back b, const float* dout, long long h, long long c0,
                              long long n, long long nv, long long dk, long long dv) {
    long long tid = threadIdx.x, nt = blockDim.x;
    float* G = w.G;
    for (long long x = tid; x < n * dv; x += nt) {
        long long r = x / dv, j = x % dv;
        b.DO[x] = dout[((c0 + r) * nv + h) * dv + j];
        float qs = 0.f;
        for (long long i = 0; i < dk; i++) qs += w.Q[r * dk + i] * w.S[i * dv + j];
        b.QS[x] = qs;
    }
    __syncthreads();
    for (long long x = tid; x < n * dv; x += nt) {  // dΔ = (M⊙P)ᵀ dO + tail⊙(K dS)
        long long r = x / dv, j = x % dv;
        float y = 0.f, kd = 0.f;
        for (long long s = r; s < n; s++) y += w.P[s * n + r] * b.DO[s * dv + j];
        for (long long i = 0; i < dk; i++) kd += w.K[r * dk + i] * b.dS[i * dv + j];
        b.dD[x] = y + expf(G[n - 1] - G[r]) * kd;
    }
    for (long long x = tid; x < n * n; x += nt) {
        long long r = x / n, s = x % n;
        float d = 0.f;
        if (s <= r)
            for (long long j = 0; j < dv; j++) d += b.DO[r * dv + j] * w.D[s * dv + j];
        b.E2[x] = d * w.P[x];
        b.dP[x] = s <= r ? d * expf(G[r] - G[s]) : 0.f;
    }
    __syncthreads();
    for (long long x = tid; x < n * dk; x += nt) {
        long long r = x / dk, i = x % dk;
        float a = 0.f, o = 0.f, c = 0.f, d = 0.f, m = 0.f;
        for (long long s = 0; s <= r; s++) a += b.dP[r * n + s] * w.K[s * dk + i];
        for (long long s = r; s < n; s++) c += b.dP[s * n + r] * w.Q[s * dk + i];
        for (long long j = 0; j < dv; j++) {
            o += b.DO[r * dv + j] * w.S[i * dv + j];
            d += w.D[r * dv + j] * b.dS[i * dv + j];
            m -= b.dD[r * dv + j] * w.S[i * dv + j];
        }
        b.dQ[x] = a + expf(G[r]) * o;
        b.dK[x] = c + expf(G[n - 1] - G[r]) * d;
        b.dW[x] = m;
    }
    for (long long x = tid; x < dk * dv; x += nt) {
        long long i = x / dv, j = x % dv;
        float y = expf(G[n - 1]) * b.dS[x];
        for (long long r = 0; r < n; r++)
            y += w.Q[r * dk + i] * expf(G[r]) * b.DO[r * dv + j] - w.W[r * dk + i] * b.dD[r * dv + j];
        b.nS[x] = y;
    }
    __syncthreads();
    for (long long x = tid; x < n * dv; x += nt) {  // dBV = Tᵀ dΔ
        long long r = x / dv, j = x % dv;
        float y = 0.f;
        for (long long s = r; s < n; s++) y += w.Tm[s * n + r] * b.dD[s * dv + j];
        b.dBV[x] = y;
    }
    for (long long x = tid; x < n * dk; x += nt) {  // dBK = Tᵀ dW
        long long r = x / dk, i = x % dk;
        float y = 0.f;
        for (long long s = r; s < n; s++) y += w.Tm[s * n + r] * b.dW[s * dk + i];
        b.dBK[x] = y;
    }
    __syncthreads();
    for (long long x = tid; x < n * n; x += nt) {  // dA = -(dBV Uᵀ + dBK Wᵀ), strictly lower
        long long r = x / n, s = x % n;
        b.dA[x] = b.dKK[x] = b.E3[x] = 0.f;
        if (s >= r) continue;
        float a = 0.f, kk = 0.f;
        for (long long j = 0; j < dv; j++) a -= b.dBV[r * dv + j] * w.U[s * dv + j];
        for (long long i = 0; i < dk; i++) {
            a -= b.dBK[r * dk + i] * w.W[s * dk + i];
            kk += w.K[r * dk + i] * w.K[s * dk + i];
        }
        float e = expf(G[r] - G[s]);
        b.dA[x] = a * e * kk;
        b.dKK[x] = a * w.B[r] * e;
        b.E3[x] = a * w.B[r] * kk * e;
    }
    __syncthreads();
}

// gdn_bwd_rows turns the chunk's matrices into dβ, dΓ (reverse-summed into dg), dq, dk, dv.
__device__ void gdn_bwd_rows(gdn_scratch w, gdn_back b, float* dq, float* dk_, float* dv_, float* dg, float* dbeta,
                             long long h, long long kh, long long c0, long long n, long long nk, long long nv,
                             long long dk, long long dv, float scale) {
    long long tid = threadIdx.x, nt = blockDim.x;
    float* G = w.G;
    for (long long r = tid; r < n; r += nt) {
        float bk = 0.f, bv = 0.f, oq = 0.f, dc = 0.f, gr = expf(G[r]);
        for (long long i = 0; i < dk; i++) bk += b.dBK[r * dk + i] * w.K[r * dk + i];
        for (long long j = 0; j < dv; j++) {
            bv += b.dBV[r * dv + j] * w.V[r * dv + j];
            oq += b.DO[r * dv + j] * b.QS[r * dv + j];
            float kd = 0.f;
            for (long long i = 0; i < dk; i++) kd += w.K[r * dk + i] * b.dS[i * dv + j];
            dc += kd * w.D[r * dv + j];
        }
        float db = bv + gr * bk, dgam = gr * oq + w.B[r] * gr * bk;
        for (long long s = 0; s < n; s++) {
            db += b.dA[r * n + s];
            dgam += b.E2[r * n + s] - b.E2[s * n + r] + b.E3[r * n + s] - b.E3[s * n + r];
        }
        b.DC[r] = expf(G[n - 1] - G[r]) * dc;
        b.dB[r] = db;
        b.dG[r] = dgam - b.DC[r];
    }
    __syncthreads();
    if (tid == 0) {
        float extra = 0.f, acc = 0.f;
        for (long long x = 0; x < dk * dv; x++) extra += b.dS[x] * w.S[x];
        extra *= expf(G[n - 1]);
        for (long long s = 0; s < n; s++) extra += b.DC[s];
        b.dG[n - 1] += extra;
        for (long long r = n - 1; r >= 0; r--) {
            acc += b.dG[r];
            dg[(c0 + r) * nv + h] = acc;
            dbeta[(c0 + r) * nv + h] = b.dB[r];
        }
    }
    for (long long x = tid; x < n * dk; x += nt) {
        long long r = x / dk, i = x % dk;
        float y = b.dK[x] + w.B[r] * expf(G[r]) * b.dBK[x];
        for (long long s = 0; s < r; s++) y += b.dKK[r * n + s] * w.K[s * dk + i];
        for (long long s = r + 1; s < n; s++) y += b.dKK[s * n + r] * w.K[s * dk + i];
        long long at = ((c0 + r) * nk + kh) * dk + i;
        dq[at] += scale * b.dQ[x];
        dk_[at] += y;
    }
    for (long long x = tid; x < n * dv; x += nt)
        dv_[((c0 + x / dv) * nv + h) * dv + x % dv] = w.B[x / dv] * b.dBV[x];
    __syncthreads();
}

// gdn_chunk_bwd: grid = nk blocks, each walking its key head's value heads and their chunks
// backwards from the entry states gdn_chunk_fwd wrote. dsT may be null (zero). work holds
// cuda.GDNBackWorkFloats(C, dk, dv) floats per key head. Writes dq, dk (summed over the
// group), dv, dg, dbeta and ds0.
extern "C" __global__ void gdn_chunk_bwd(float* dq, float* dk_, float* dv_, float* dg, float* dbeta, float* ds0,
                                         const float* q, const float* k, const float* v, const float* g,
                                         const float* beta, const float* entry, const float* dout,
                                         const float* dsT, float* work, long long T, long long nk, long long nv,
                                         long long dk, long long dv, long long C, float scale) {
    long long kh = blockIdx.x, rep = nv / nk, tid = threadIdx.x, nt = blockDim.x;
    long long per = dk * dv + C * (3 * dk + 3 * dv + 3 * C + 2);
    long long per2 = 2 * dk * dv + C * (4 * dv + 4 * dk + 5 * C + 3);
    gdn_scratch w = gdn_at(work + kh * (per + per2), 0, dk, dv, C);
    gdn_back b = gdn_back_at(work + kh * (per + per2) + per, dk, dv, C);
    for (long long x = tid; x < T * dk; x += nt) {
        long long at = ((x / dk) * nk + kh) * dk + x % dk;
        dq[at] = dk_[at] = 0.f;
    }
    for (long long h = kh * rep; h < (kh + 1) * rep; h++) {
        for (long long x = tid; x < dk * dv; x += nt) b.dS[x] = dsT ? dsT[h * dk * dv + x] : 0.f;
        for (long long c = (T + C - 1) / C - 1; c >= 0; c--) {
            long long c0 = c * C, n = T - c0 < C ? T - c0 : C;
            __syncthreads();
            for (long long x = tid; x < dk * dv; x += nt) w.S[x] = entry[(c * nv + h) * dk * dv + x];
            gdn_prepare(w, q, k, v, g, beta, h, kh, c0, n, nk, nv, dk, dv, scale);
            gdn_bwd_chunk(w, b, dout, h, c0, n, nv, dk, dv);
            gdn_bwd_rows(w, b, dq, dk_, dv_, dg, dbeta, h, kh, c0, n, nk, nv, dk, dv, scale);
            for (long long x = tid; x < dk * dv; x += nt) b.dS[x] = b.nS[x];
        }
        __syncthreads();
        for (long long x = tid; x < dk * dv; x += nt) ds0[h * dk * dv + x] = b.dS[x];
    }
}
