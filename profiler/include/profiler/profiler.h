#pragma once
// GPU profiler API (no Qt): devices, the hardware fingerprint that keys the profile DB, and
// whether a measuring backend was compiled in.
//
// The rest of the profiler:
//   protocol.h   the measuring protocol (warm-ups, timed rounds, early abandonment, pruning)
//   work_plan.h  what one segment type under one block-strategy combination runs on one rank,
//                derived from the planner and the cost model (CPU only, testable)
//   backend.h    the measuring backends: CUDA/NCCL (when compiled) and a simulated one
//   profile_db.h the SQLite profile DB
//   calibration.h fitting GEMM efficiency, HBM bandwidth and α/β from measurements
//   session.h    ProfilerSession: the whole job with progress, partial results and cancel
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
    bool mpi = false;             // built with MPI (one rank per GPU across nodes)
    std::string description;      // "CUDA runtime 13000, NCCL 2.28.3, cuBLASLt 130000" or why it is absent
};

struct GpuInfo {
    int index = 0;
    std::string name;
    int64_t memoryBytes = 0;
    int smCount = 0;
    int computeMajor = 0;
    int computeMinor = 0;
    std::string pciBusId;            // "0000:1b:00.0"
    std::vector<int> peerAccess;     // devices this one can access directly (P2P over NVLink or PCIe)
    std::vector<int> nvlinkPeers;    // devices reachable over NVLink (from NVML; empty when unknown)
};

// What the profile DB is keyed by: measurements from one fingerprint are valid for another only
// when all of these agree.
struct HardwareFingerprint {
    std::string gpuModel;            // "NVIDIA H100 80GB HBM3"
    std::string driverVersion;       // "550.54.15", or the CUDA driver API version "12040"
    std::string cudaVersion;         // CUDA runtime version "13000"
    int gpuCount = 0;                // GPUs taking part (all ranks)
    int nodes = 1;
    std::string interconnect;        // "nvlink", "pcie", "nvlink-partial", "single", "simulated"
    std::string ncclVersion;         // informative, not part of the key

    // "NVIDIA H100 80GB HBM3|driver 550.54.15|cuda 13000|8 gpus|1 node|nvlink" — the DB key.
    std::string key() const;
    // Whether it stands for the simulated backend (interconnect "simulated"): such measurements are
    // the cost model's own numbers and are never taken for real ones (profile_db.h).
    bool simulated() const { return interconnect == kSimulatedInterconnect; }
    static constexpr const char* kSimulatedInterconnect = "simulated";
    bool operator==(const HardwareFingerprint&) const = default;
};

// "nvlink" when every pair of devices is NVLink-connected, "nvlink-partial" when some are,
// "pcie" otherwise, "single" for one device.
std::string interconnectOf(const std::vector<GpuInfo>& devices);

BackendInfo backendInfo();

// Lists the GPUs visible to this process. Errors (code "profiler.no_backend" or
// "profiler.no_device") say why none can be used.
Result<std::vector<GpuInfo>> discoverDevices();

// The fingerprint of this machine's GPUs (all visible devices, one node).
Result<HardwareFingerprint> localFingerprint();

}  // namespace cfp::profiler
