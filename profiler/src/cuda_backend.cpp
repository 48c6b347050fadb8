// CUDA device discovery and the hardware fingerprint: compiled only when the toolkit and NCCL were
// found (see CMakeLists.txt).
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>

#include "cuda_common.h"
#include "profiler/profiler.h"

namespace cfp::profiler {

namespace {

// The driver's version string ("550.54.15") from NVML, loaded at run time so that the binary does
// not depend on the driver's libraries; empty when NVML is absent.
std::string nvmlDriverVersion() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) return {};
    using InitFn = int (*)();
    using VersionFn = int (*)(char*, unsigned);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    auto version = reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
    std::string out;
    if (init && version && shutdown && init() == 0) {
        char buf[96] = {};
        if (version(buf, sizeof buf) == 0) out = buf;
        shutdown();
    }
    dlclose(lib);
    return out;
}

}  // namespace

std::string cudaErrorText(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

BackendInfo backendInfo() {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    int nccl = 0;
    ncclGetVersion(&nccl);
    BackendInfo info;
    info.compiled = true;
#ifdef CFP_HAVE_MPI
    info.mpi = true;
#endif
    info.description = "CUDA runtime " + std::to_string(runtime) + ", NCCL " + std::to_string(nccl / 10000) + "." +
                       std::to_string(nccl / 100 % 100) + "." + std::to_string(nccl % 100) + ", cuBLASLt " +
                       std::to_string(cublasLtGetVersion()) + (info.mpi ? ", MPI" : "");
    return info;
}

Result<std::vector<GpuInfo>> discoverDevices() {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
        return makeError("profiler.no_device", "no usable CUDA device (" + cudaErrorText(status) + ")");
    if (count == 0) return makeError("profiler.no_device", "no CUDA device found");
    std::vector<GpuInfo> out;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        GpuInfo g;
        g.index = i;
        g.name = prop.name;
        g.memoryBytes = static_cast<int64_t>(prop.totalGlobalMem);
        g.smCount = prop.multiProcessorCount;
        g.computeMajor = prop.major;
        g.computeMinor = prop.minor;
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) g.pciBusId = bus;
        out.push_back(std::move(g));
    }
    // Peers: direct access, and NVLink where P2P native atomics are supported (PCIe P2P has none).
    for (GpuInfo& g : out)
        for (const GpuInfo& p : out) {
            if (p.index == g.index) continue;
            int access = 0, atomics = 0;
            if (cudaDeviceCanAccessPeer(&access, g.index, p.index) != cudaSuccess || !access) continue;
            g.peerAccess.push_back(p.index);
            if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, g.index, p.index) == cudaSuccess && atomics)
                g.nvlinkPeers.push_back(p.index);
        }
    if (out.empty()) return makeError("profiler.no_device", "CUDA reports devices but none could be queried");
    return out;
}

HardwareFingerprint fingerprintOf(const std::vector<GpuInfo>& devices, int gpuCount, int nodes) {
    HardwareFingerprint f;
    f.gpuModel = devices.empty() ? std::string("unknown") : devices.front().name;
    f.driverVersion = nvmlDriverVersion();
    if (f.driverVersion.empty()) {
        int driver = 0;
        cudaDriverGetVersion(&driver);
        f.driverVersion = "cuda-driver-api " + std::to_string(driver);
    }
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    f.cudaVersion = std::to_string(runtime);
    int nccl = 0;
    ncclGetVersion(&nccl);
    f.ncclVersion = std::to_string(nccl);
    f.gpuCount = gpuCount;
    f.nodes = nodes;
    f.interconnect = interconnectOf(devices);
    if (nodes > 1) f.interconnect += "+network";
    return f;
}

Result<HardwareFingerprint> localFingerprint() {
    auto devices = discoverDevices();
    if (!devices) return devices.error();
    return fingerprintOf(*devices, static_cast<int>(devices->size()), 1);
}

}  // namespace cfp::profiler
