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
    // Keeps the extra reads alive; the buffers hold values in ±[0.25, 1) (fillBuffer), so this store never happens.
    if (acc == 12345.f && writeVectors > 0) dst[0].x = acc;
}

__global__ void fillWords(unsigned short* __restrict__ p, size_t words, unsigned seed) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ static_cast<unsigned>(i >> 32) * 40503u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        // sign | exponent 125 or 126 (±[0.25, 1)) | 7 mantissa bits
        p[i] = static_cast<unsigned short>(((h & 1u) << 15) | ((125u + ((h >> 1) & 1u)) << 7) | ((h >> 2) & 0x7Fu));
    }
}

}  // namespace

cudaError_t fillBuffer(void* p, size_t bytes, unsigned seed, cudaStream_t stream) {
    const size_t words = bytes / 2;
    if (words > 0) {
        constexpr int kThreads = 256;
        size_t blocks = (words + kThreads - 1) / kThreads;
        if (blocks > 4096) blocks = 4096;
        fillWords<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(static_cast<unsigned short*>(p), words, seed);
        if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    if (bytes % 2) return cudaMemsetAsync(static_cast<char*>(p) + bytes - 1, 0x3E, 1, stream);
    return cudaSuccess;
}

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
