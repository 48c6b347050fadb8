#pragma once
// ProfilerSession: one profiling job — devices and communicators, calibration, every combination
// of every segment type of a model on one mesh under the protocol (protocol.h), results into the
// profile DB — as a Qt-free object for the CLI and the GUI.
//
// Threads. run() does the whole job on the calling thread, which then owns the backend's CUDA
// contexts and NCCL communicators; the GUI calls it from one dedicated thread. Callbacks are made
// on that thread (the GUI forwards them by queued signal). cancel(), cancelRequested() and
// partialResults() may be called from any thread.
//
// Cancellation. cancel() is honoured within a second: a launch in flight gets
// ProtocolSettings::cancelGraceSeconds to finish, then the backend is aborted. run() then returns
// a report with cancelled = true and every result measured so far; what was stored in the DB stays.
// (The model's analysis at the start — a few seconds for the largest presets — is not interrupted;
// cancellation takes effect as soon as it is done.) Destroy the session only after run() returned.
//
// Hangs. A launch that runs past the watchdog limit (protocol.h) aborts the backend and run()
// returns profiler.hang naming the segment and combination; partialResults() still has the rest.
//
// Which combinations. Every combination of a type with at most candidates.maxCombinations of them;
// a larger type is profiled on the cost model's candidates (candidates.h), and its summary says how
// many of how many (SegmentTypeSummary::selection). Early abandonment (protocol.h) never drops a
// combination kept for its memory: the keepBestByMemory least-memory combinations of a type that
// were abandoned are measured again in full at the end of the type (their rows replaced).
//
// Simulated measurements (a fingerprint with HardwareFingerprint::simulated()) are never stored in
// a profile DB that holds real ones: profiler.simulated_into_real_db names simulatedDbPath() as the
// place for them. planningMeasurements() never prefers them over real ones either.
//
// Time left. SessionProgress::remainingSeconds is the wall time per combination measured so far in
// this stage (everything the session does for it: work plan, launches, DB writes) times the
// combinations left; combinations reused from the DB do not count towards the rate. Unknown (< 0)
// until one combination was measured; 0 at the end.
//
// Reuse. A combination whose (fingerprint, segment signature, mesh, combination) is already in the
// DB is not measured again: its stored result is reported with reused = true. The calibration is
// measured when the DB has none for the fingerprint (CalibrationMode::IfMissing).
//
//   ProfilerSession s(config, std::move(*makeCudaBackend()), callbacks);
// Kernels. With SessionConfig::kernels the session measures the kernel suite (kernel_suite.h) one
// case at a time (stage "kernels") and returns: ProfileReport::kernels, kernelAccuracy.
//
//   std::thread worker([&] { auto report = s.run(); … });
//   … s.cancel();   // from the GUI thread
//
// Error codes of run(): profiler.bad_config, profiler.bad_protocol, profiler.no_device,
// profiler.simulated_into_real_db and
// profiler.* from the backend, profile_db.*, profiler.hang, analysis and plan errors.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "ir/graph.h"
#include "profiler/backend.h"
#include "profiler/calibration.h"
#include "profiler/candidates.h"
#include "profiler/kernel_suite.h"
#include "profiler/profile_db.h"
#include "profiler/protocol.h"

namespace cfp::profiler {

enum class CalibrationMode : uint8_t { IfMissing, Always, Never };

struct SessionConfig {
    std::shared_ptr<const Graph> graph;   // the model's training step
    std::string modelName;                // for the DB and the report (default: the graph's name)
    Cluster cluster;                      // hardware spec and nodes the plan is for
    std::string hardwareSpec;             // the spec id recorded in the DB (`--hardware`)
    std::string mesh;                     // "8", "2x4", "dp=2,tp=4"; empty = one axis over all devices
    MemoryPolicy policy;                  // as the plans will use it (optimizer-state sharding; see work_plan.h)
    ProtocolSettings protocol;
    std::string dbPath;                   // empty: no DB (nothing reused, nothing stored)
    ProfileDb::OpenMode dbMode = ProfileDb::OpenMode::OpenOrCreate;
    std::vector<int> segmentTypes;        // types to profile; empty = all
    CalibrationMode calibration = CalibrationMode::IfMissing;
    CalibrationGrid calibrationGrid;
    bool reuse = true;                    // skip combinations the DB already has
    CandidateLimits candidates;           // which combinations of a large type are profiled
    // The kernel comparison (kernel_suite.h) instead of the segments: each kernel of the model's
    // step measured on one device (whatever the cluster and mesh) under the protocol against the
    // model's price; no calibration, nothing read from or stored in the DB.
    bool kernels = false;
};

struct SessionProgress {
    std::string stage;                    // "devices", "calibration", "candidates", "profiling", "done"
    int segmentType = -1;                 // current type id (-1 outside profiling)
    int typeIndex = 0, typeCount = 0;     // position among the types being profiled
    int64_t combinationIndex = 0;         // within the combinations profiled of the type
    int64_t combinationCount = 0;         // combinations profiled of the type (all, or its candidates)
    std::string combination;              // its label
    int64_t done = 0, total = 0;          // combinations (or probes, in calibration) done / to do
    double elapsedSeconds = 0;
    double remainingSeconds = -1;         // estimate; < 0 while unknown
    std::string message;                  // one line for a status bar
};

struct CombinationResult {
    int segmentType = 0;
    std::vector<int32_t> combination;
    std::string key;                      // "0,2,1,1"
    std::string label;                    // "x:rows | x:cols | …"
    CombinationStatus status = CombinationStatus::Measured;
    CommMode comm = CommMode::Measured;
    bool reused = false;                  // from the DB, not measured in this session
    bool kept = false;                    // among the best by time or memory of its type (when the type is done)
    double seconds = 0;                   // see SegmentRecord
    std::vector<double> samples;
    double predictedSeconds = 0;          // cost model (calibrated when a calibration exists)
    double uncalibratedSeconds = 0;       // cost model with the spec's numbers
    double modelledCommSeconds = 0;
    int64_t memoryBytes = 0;
    std::string note;
};

struct KernelResult {
    KernelCase kernel;
    CombinationStatus status = CombinationStatus::Measured;
    bool measured = false;                // run by the profiler (KernelCase::measurable)
    double seconds = 0;                   // median of the timed rounds
    std::vector<double> samples;
    std::string note;
};

struct SegmentTypeSummary {
    int type = 0;
    std::string name;                     // "T1 (4 blocks, x24)"
    uint64_t signature = 0;
    int64_t combinations = 0;             // of the type
    int64_t profiled = 0;                 // combinations profiled (all, or the candidates)
    std::string selection;                // CandidateSet::describe(): "" when every combination was profiled
    int remeasured = 0;                   // abandoned least-memory combinations measured again in full
    int measured = 0, abandoned = 0, infeasible = 0, failed = 0, reused = 0;
    std::vector<std::string> keptByTime;  // combination keys, fastest first
    std::vector<std::string> keptByMemory;  // smallest first
    double bestSeconds = 0;               // 0 when nothing was measured
    std::string bestLabel;
};

struct ProfileReport {
    DeviceSetup setup;
    std::string backend;                  // "cuda", "simulated"
    std::string mesh;
    std::string protocol;                 // ProtocolSettings::describe()
    std::string dbPath;
    std::string dbMovedAside;             // where a replaced DB went (OpenMode::StartNew)
    std::vector<CombinationResult> results;   // in profiling order
    std::vector<SegmentTypeSummary> types;
    CostCalibration calibration;          // in effect (measured now or from the DB)
    bool calibrationMeasured = false;     // measured in this session
    int64_t opMeasurements = 0;           // GEMM timings stored in this session
    int64_t distinctOps = 0;              // measured ops the DB holds for the fingerprint afterwards
    std::vector<KernelResult> kernels;    // SessionConfig::kernels: every case, in the suite's order
    AccuracyReport kernelAccuracy;        // the model vs the measured kernels
    AccuracyReport accuracy;              // calibrated model vs measured combinations
    AccuracyReport uncalibratedAccuracy;  // the spec's numbers vs measured
    double seconds = 0;                   // wall time of run()
    bool cancelled = false;
};

class ProfilerSession {
public:
    struct Callbacks {
        std::function<void(const SessionProgress&)> progress;  // at most every 0.1 s, and at every stage change
        std::function<void(const CombinationResult&)> result;  // every combination as it finishes
        std::function<void(const std::string&)> log;           // notes ("T0: 3 of 9 reused from the DB")
    };

    ProfilerSession(SessionConfig config, std::unique_ptr<MeasureBackend> backend, Callbacks callbacks = {});
    ~ProfilerSession();
    ProfilerSession(const ProfilerSession&) = delete;
    ProfilerSession& operator=(const ProfilerSession&) = delete;

    Result<ProfileReport> run();

    void cancel();
    bool cancelRequested() const;
    std::vector<CombinationResult> partialResults() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

// The time left: `measuredWallSeconds` over `measuredCount` combinations (all the session spent on
// them) times `left`; -1 while nothing was measured.
double remainingSecondsEstimate(double measuredWallSeconds, int64_t measuredCount, int64_t left);

// Keeps the best `byTime` combinations by seconds and the best `byMemory` by memory among
// `results` of one segment type (measured or reused-measured only; ties by combination key);
// returns the keys kept by time and by memory, in rank order.
struct KeptSets {
    std::vector<std::string> byTime, byMemory;
};
KeptSets keepBest(const std::vector<CombinationResult>& results, int byTime, int byMemory);

}  // namespace cfp::profiler
