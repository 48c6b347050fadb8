#include <cstdlib>
#include <string>

#include "profiler/backend.h"
#include "profiler/profiler.h"

namespace cfp::profiler {

std::string HardwareFingerprint::key() const {
    return gpuModel + "|driver " + driverVersion + "|cuda " + cudaVersion + "|" + std::to_string(gpuCount) +
           (gpuCount == 1 ? " gpu|" : " gpus|") + std::to_string(nodes) + (nodes == 1 ? " node|" : " nodes|") + interconnect;
}

std::string interconnectOf(const std::vector<GpuInfo>& devices) {
    if (devices.size() <= 1) return "single";
    size_t pairs = 0, nvlink = 0;
    for (size_t i = 0; i < devices.size(); ++i)
        for (size_t j = 0; j < devices.size(); ++j) {
            if (i == j) continue;
            ++pairs;
            const auto& peers = devices[i].nvlinkPeers;
            for (int p : peers)
                if (p == devices[j].index) {
                    ++nvlink;
                    break;
                }
        }
    if (nvlink == pairs) return "nvlink";
    if (nvlink > 0) return "nvlink-partial";
    return "pcie";
}

bool launchedByMpi() {
    auto positive = [](const char* name) {
        const char* v = std::getenv(name);
        return v && std::atoi(v) > 0;
    };
    if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK")) return true;
    return std::getenv("SLURM_PROCID") && positive("SLURM_NTASKS") && std::atoi(std::getenv("SLURM_NTASKS")) > 1;
}

#ifndef CFP_HAVE_CUDA
BackendInfo backendInfo() {
    return {false, false, "built without the CUDA/NCCL backend (CUDA toolkit or NCCL not found at configure time)"};
}

Result<std::vector<GpuInfo>> discoverDevices() { return makeError("profiler.no_backend", backendInfo().description); }

Result<HardwareFingerprint> localFingerprint() { return makeError("profiler.no_backend", backendInfo().description); }

Result<std::unique_ptr<MeasureBackend>> makeCudaBackend(const CudaBackendOptions&) {
    return makeError("profiler.no_backend", backendInfo().description);
}
#endif

}  // namespace cfp::profiler
