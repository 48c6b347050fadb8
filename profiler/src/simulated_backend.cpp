// The simulated backend: times from a function of the work plan, no GPU.
#include <chrono>

#include "profiler/backend.h"

namespace cfp::profiler {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

SimulatedBackend::SimulatedBackend() : SimulatedBackend(Options{}) {}

SimulatedBackend::SimulatedBackend(Options options) : m_options(std::move(options)) {
    if (m_options.fingerprint.gpuModel.empty()) {
        m_options.fingerprint.gpuModel = "simulated";
        m_options.fingerprint.driverVersion = "none";
        m_options.fingerprint.cudaVersion = "none";
        m_options.fingerprint.interconnect = "simulated";
    }
}

Result<DeviceSetup> SimulatedBackend::open(const Mesh& mesh) {
    DeviceSetup s;
    s.fingerprint = m_options.fingerprint;
    if (s.fingerprint.gpuCount == 0)
        s.fingerprint.gpuCount = m_options.comm == CommMode::Measured ? static_cast<int>(mesh.deviceCount()) : 1;
    s.comm = m_options.comm;
    for (int i = 0; i < (m_options.comm == CommMode::Measured ? static_cast<int>(mesh.deviceCount()) : 1); ++i) {
        GpuInfo g;
        g.index = i;
        g.name = s.fingerprint.gpuModel;
        g.memoryBytes = m_options.memoryBytes;
        s.devices.push_back(std::move(g));
    }
    s.description = std::to_string(s.devices.size()) + " simulated device" + (s.devices.size() == 1 ? "" : "s") +
                    (m_options.comm == CommMode::Modelled ? " (one rank's compute; communication modelled)" : "");
    return s;
}

Status SimulatedBackend::prepare(const SegmentWorkPlan& work) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    ++m_prepares;
    m_preparedKeys.push_back(work.combinationKey);
    const bool oom = m_options.outOfMemory ? m_options.outOfMemory(work) : work.memoryBytes() > m_options.memoryBytes;
    if (oom) {
        m_work.reset();
        return makeError("profiler.oom", "out of device memory: " + work.label + " needs " + std::to_string(work.memoryBytes()) + " bytes");
    }
    m_work = work;
    return {};
}

Status SimulatedBackend::launch(int iterations, Timing timing) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    if (!m_work) return makeError("profiler.internal", "launch without a prepared work plan");
    if (m_inFlight) return makeError("profiler.internal", "launch while another is in flight");
    m_hung = m_options.hang && m_options.hang(m_launches.load());
    ++m_launches;
    m_inFlight = true;
    m_iterations = iterations;
    m_timing = timing;
    m_launchedAt = now();
    return {};
}

Result<PollState> SimulatedBackend::poll(LaunchResult& out) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    if (!m_inFlight) return makeError("profiler.internal", "poll without a launch");
    if (m_hung) return PollState::Pending;
    if (m_options.realSecondsPerIteration > 0 && now() - m_launchedAt < m_options.realSecondsPerIteration * m_iterations)
        return PollState::Pending;
    m_inFlight = false;
    const SegmentWorkPlan& w = *m_work;
    out = LaunchResult{};
    // With communication modelled the collectives are not executed: only compute is timed.
    const bool modelled = m_options.comm == CommMode::Modelled;
    const double predicted = w.predictedSeconds - (modelled ? w.predictedCommSeconds : 0.0);
    out.secondsPerIteration = m_options.seconds ? m_options.seconds(w) : predicted;
    if (m_timing == Timing::PerItem) {
        if (m_options.itemSeconds) {
            out.itemSeconds = m_options.itemSeconds(w);
        } else {
            const double scale = predicted > 0 ? out.secondsPerIteration / predicted : 0.0;
            for (const WorkItem& item : w.items)
                out.itemSeconds.push_back(modelled && item.kind == WorkKind::Collective ? 0.0 : item.predictedSeconds * scale);
        }
    }
    return PollState::Done;
}

void SimulatedBackend::abort() {
    m_aborted = true;
    m_inFlight = false;
}

}  // namespace cfp::profiler
