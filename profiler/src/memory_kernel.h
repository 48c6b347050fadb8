#pragma once
// The memory-bound kernel of the CUDA backend (memory_kernel.cu, or memory_copy.cpp without nvcc).
// Plain CUDA runtime types only, so that nvcc compiles it without the project's C++20 headers.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace cfp::profiler {

// Reads `readBytes` from `src` and writes `writeBytes` to `dst` in 16-byte vectors, with enough
// blocks to fill `smCount` SMs. Without nvcc at build time, a device-to-device copy of
// min(read, write) plus a memset of the remaining writes stands in.
cudaError_t launchMemoryKernel(const void* src, size_t readBytes, void* dst, size_t writeBytes, int smCount, cudaStream_t stream);

// Fills `bytes` at `p` with values like a model's (GEMM timings depend on the data: on H200 a bf16
// GEMM of zeros ran 13-30% faster than of random values, bench/reference/kernels.py): every 16-bit
// word a bf16 of random sign and mantissa in ±[0.25, 1), which read as fp16 or as the high half of
// an fp32 is finite too. Without nvcc a constant non-zero byte stands in.
cudaError_t fillBuffer(void* p, size_t bytes, unsigned seed, cudaStream_t stream);

// Whether launchMemoryKernel is the real kernel (false: the copy stand-in).
bool haveMemoryKernel();

}  // namespace cfp::profiler
