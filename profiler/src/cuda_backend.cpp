// CUDA/NCCL backend: compiled only when the toolkit and NCCL were found (see CMakeLists.txt).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "profiler/profiler.h"

namespace cfp::profiler {

BackendInfo backendInfo() {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    int nccl = 0;
    ncclGetVersion(&nccl);
    return {true, "CUDA runtime " + std::to_string(runtime) + ", NCCL " + std::to_string(nccl)};
}

Result<std::vector<GpuInfo>> discoverDevices() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
        return makeError("profiler.no_device",
                         std::string("no usable CUDA device: ") + cudaGetErrorString(status));
    if (count == 0) return makeError("profiler.no_device", "no CUDA device found");
    std::vector<GpuInfo> out;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        out.push_back(GpuInfo{i, prop.name, static_cast<int64_t>(prop.totalGlobalMem), prop.multiProcessorCount,
                              prop.major, prop.minor});
    }
    return out;
}

}  // namespace cfp::profiler
