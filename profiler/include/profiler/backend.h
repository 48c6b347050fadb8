#pragma once
// Measuring backends: what executes a work plan (work_plan.h) and times it. The session
// (session.h) drives one backend on one thread — the thread that owns its CUDA contexts and NCCL
// communicators — through prepare / launch / poll, so it can honour cancellation and turn a hang
// into an error (abort) without blocking in the driver.
//
//   CUDA backend (makeCudaBackend): one process over the local GPUs, or one rank per GPU under MPI
//     (mpirun / srun, the ncclUniqueId broadcast over MPI). NCCL communicators for the whole mesh
//     and one per mesh axis (ncclCommSplit). GEMMs through cuBLASLt (bf16/fp16 with fp32
//     accumulation, fp32 with TF32 allowed), memory-bound groups through a kernel that reads and
//     writes the group's bytes, collectives through NCCL on the axis communicators. Buffers are
//     allocated once per prepare; with one GPU per process a launch is captured in a CUDA graph.
//     NVTX ranges name the segment, combination and item. With fewer GPUs than the mesh needs it
//     measures one rank's compute and leaves the collectives to the model (CommMode::Modelled).
//   SimulatedBackend: no GPU; times come from a function of the work plan (by default the cost
//     model's prediction). Tests use it, and `cfp profile --simulate` to try the whole pipeline.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/profile_db.h"
#include "profiler/profiler.h"
#include "profiler/work_plan.h"
#include "sharding/mesh.h"

namespace cfp::profiler {

struct DeviceSetup {
    HardwareFingerprint fingerprint;
    std::vector<GpuInfo> devices;      // the local devices in use
    CommMode comm = CommMode::Measured;
    int rank = 0, ranks = 1;           // MPI rank and world size (1 without MPI)
    bool root = true;                  // this process reports and writes the DB
    std::string description;           // "8 x NVIDIA H100 80GB HBM3 (one process, NVLink)"
};

enum class Timing : uint8_t {
    Total,    // one pair of events around all iterations
    PerItem,  // events around every item as well (slightly slower; for per-op measurements)
};

struct LaunchResult {
    double secondsPerIteration = 0;    // device time, the slowest rank
    std::vector<double> itemSeconds;   // Timing::PerItem: per item, mean over iterations
};

enum class PollState : uint8_t { Pending, Done };

class MeasureBackend {
public:
    virtual ~MeasureBackend() = default;
    virtual std::string name() const = 0;

    // Devices and communicators for `mesh` (with link classes). Called once, first.
    virtual Result<DeviceSetup> open(const Mesh& mesh) = 0;
    // Buffers and launch plans for `work` (replacing the previous ones). profiler.oom when device
    // memory does not suffice (the combination is infeasible, the backend stays usable).
    virtual Status prepare(const SegmentWorkPlan& work) = 0;
    // Enqueues `iterations` back-to-back executions of the prepared work; returns at once.
    virtual Status launch(int iterations, Timing timing) = 0;
    // Done (with `out` filled) or Pending; an error when the launch failed.
    virtual Result<PollState> poll(LaunchResult& out) = 0;
    // Tears down whatever is in flight (the watchdog's and cancellation's last resort: aborts the
    // NCCL communicators). Callable from the session thread only; the backend is unusable after.
    virtual void abort() = 0;
    // Across MPI ranks, the value every rank agrees on (the maximum); single process: `value`.
    virtual double agree(double value) { return value; }
    // Across MPI ranks: whether any rank asks to stop (cancel); single process: `local`.
    virtual bool anyRank(bool local) { return local; }
};

// The simulated backend. Every hook is optional.
class SimulatedBackend final : public MeasureBackend {
public:
    struct Options {
        // Seconds per iteration of a work plan; default: its predictedSeconds.
        std::function<double(const SegmentWorkPlan&)> seconds;
        // Per-item seconds for Timing::PerItem; default: each item's predictedSeconds scaled so
        // that they add up to seconds().
        std::function<std::vector<double>(const SegmentWorkPlan&)> itemSeconds;
        // Whether prepare() runs out of memory; default: memoryBytes() > memoryBytes below.
        std::function<bool(const SegmentWorkPlan&)> outOfMemory;
        // Whether the n-th launch (from 0) never finishes (a hung collective), until abort().
        std::function<bool(int launchIndex)> hang;
        int64_t memoryBytes = int64_t{80} << 30;
        double realSecondsPerIteration = 0;  // wall time a launch takes per iteration (0: instant)
        CommMode comm = CommMode::Measured;
        HardwareFingerprint fingerprint;     // default: "simulated" model, 1 node
    };

    SimulatedBackend();
    explicit SimulatedBackend(Options options);
    std::string name() const override { return "simulated"; }
    Result<DeviceSetup> open(const Mesh& mesh) override;
    Status prepare(const SegmentWorkPlan& work) override;
    Status launch(int iterations, Timing timing) override;
    Result<PollState> poll(LaunchResult& out) override;
    void abort() override;

    // For tests (launches() may be read from another thread while the session runs).
    int launches() const { return m_launches.load(); }
    int prepares() const { return m_prepares; }
    bool aborted() const { return m_aborted; }
    const std::vector<std::string>& preparedKeys() const { return m_preparedKeys; }  // combination keys

private:
    Options m_options;
    std::optional<SegmentWorkPlan> m_work;
    bool m_inFlight = false;
    bool m_hung = false;
    bool m_aborted = false;
    int m_iterations = 0;
    Timing m_timing = Timing::Total;
    double m_launchedAt = 0;
    std::atomic<int> m_launches{0};
    int m_prepares = 0;
    std::vector<std::string> m_preparedKeys;
};

struct CudaBackendOptions {
    enum class Processes : uint8_t {
        Auto,    // MPI when launched by mpirun/srun (and built with MPI), else one process
        Single,  // one process over the local GPUs
        Mpi,     // one rank per GPU; error when not built with MPI
    };
    Processes processes = Processes::Auto;
    bool cudaGraphs = true;          // capture launches in a CUDA graph where the process has one GPU
    bool allowTf32 = true;           // fp32 GEMMs may use TF32 tensor cores
    bool nvtx = true;
};

// The CUDA/NCCL backend; profiler.no_backend when not compiled, profiler.no_device when no
// driver or GPU can be used (checked here, so the caller can fail within a few seconds).
Result<std::unique_ptr<MeasureBackend>> makeCudaBackend(const CudaBackendOptions& options = {});

// Whether this process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK,
// SLURM_PROCID with SLURM_NTASKS > 1).
bool launchedByMpi();

}  // namespace cfp::profiler
