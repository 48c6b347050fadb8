#pragma once
// GPU profiler API (no Qt). This first version discovers devices and tells whether a measuring
// backend exists; the segment executor, communicators and the profile DB build on it.
//
// Without the CUDA toolkit at build time, or without a driver/GPU at run time, every call reports
// why in plain words and the analytic cost model serves instead.

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace cfp::profiler {

struct BackendInfo {
    bool compiled = false;        // built with the CUDA/NCCL backend
    std::string description;      // "CUDA runtime 13000, NCCL 2.27.3" or why it is absent
};

struct GpuInfo {
    int index = 0;
    std::string name;
    int64_t memoryBytes = 0;
    int smCount = 0;
    int computeMajor = 0;
    int computeMinor = 0;
};

BackendInfo backendInfo();

// Lists the GPUs visible to this process. Errors (code "profiler.no_backend" or
// "profiler.no_device") say why none can be used.
Result<std::vector<GpuInfo>> discoverDevices();

}  // namespace cfp::profiler
