// Strided column copies of fp32 matrices (the Gated DeltaNet's v columns out of the conv
// output and their gradient back in) and an fp32 add (data-parallel gradient reduction).
#include "common.cuh"

// copy_cols_f32: dst[r·dst_stride + c] = src[r·src_stride + c] for r < rows, c < n; the
// pointers are already offset to the first column.
extern "C" __global__ void copy_cols_f32(float* dst, long long dst_stride, const float* src,
                                         long long src_stride, long long rows, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * n;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = i / n, c = i - r * n;
        dst[r * dst_stride + c] = src[r * src_stride + c];
    }
}

// add_f32: a += b, elementwise.
extern "C" __global__ void add_f32(float* a, const float* b, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        a[i] += b[i];
}
