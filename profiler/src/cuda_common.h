#pragma once
// Private helpers of the CUDA backend (compiled only with CUDA).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "memory_kernel.h"
#include "profiler/profiler.h"

namespace cfp::profiler {

// "cudaErrorMemoryAllocation: out of memory"
std::string cudaErrorText(cudaError_t e);

// The fingerprint of `devices` (the local ones) for a job of `gpuCount` GPUs on `nodes` nodes.
HardwareFingerprint fingerprintOf(const std::vector<GpuInfo>& devices, int gpuCount, int nodes);

}  // namespace cfp::profiler
