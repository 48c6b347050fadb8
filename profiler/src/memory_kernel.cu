// The memory-bound kernel of the segment executor: moves exactly the bytes of one fused
// elementwise/reduction/layout group (reads, then writes) through HBM.
#include <cuda_runtime.h>

#include "memory_kernel.h"

namespace cfp::profiler {

namespace {

__global__ void touchBytes(const float4* __restrict__ src, size_t readVectors, float4* __restrict__ dst, size_t writeVectors) {
    const size_t n = readVectors > writeVectors ? readVectors : writeVectors;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    float acc = 0.f;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (i < readVectors) v = src[i];
        if (i < writeVectors) {
            v.x += acc;
            dst[i] = v;
            acc = 0.f;
        } else {
            acc += v.x + v.y + v.z + v.w;  // reads beyond the writes still feed a result
        }
    }
    // Keeps the extra reads alive; the buffers hold zeros, so this store never happens.
    if (acc == 12345.f && writeVectors > 0) dst[0].x = acc;
}

}  // namespace

cudaError_t launchMemoryKernel(const void* src, size_t readBytes, void* dst, size_t writeBytes, int smCount, cudaStream_t stream) {
    const size_t rv = readBytes / sizeof(float4), wv = writeBytes / sizeof(float4);
    const size_t n = rv > wv ? rv : wv;
    if (n == 0) return cudaSuccess;
    constexpr int kThreads = 256;
    size_t blocks = (n + kThreads - 1) / kThreads;
    const size_t cap = static_cast<size_t>(smCount > 0 ? smCount : 80) * 8;
    if (blocks > cap) blocks = cap;
    touchBytes<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<const float4*>(src), rv, static_cast<float4*>(dst), wv);
    return cudaGetLastError();
}

bool haveMemoryKernel() { return true; }

}  // namespace cfp::profiler
