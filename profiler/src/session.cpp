#include "profiler/session.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cmath>
#include <thread>

#include "segments/fingerprint.h"

namespace cfp::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// What waiting for a launch ended with.
enum class WaitEnd : uint8_t { Done, Cancelled };

}  // namespace

double remainingSecondsEstimate(double measuredWallSeconds, int64_t measuredCount, int64_t left) {
    if (measuredCount <= 0 || left < 0 || !(measuredWallSeconds >= 0)) return -1;
    return measuredWallSeconds / static_cast<double>(measuredCount) * static_cast<double>(left);
}

KeptSets keepBest(const std::vector<CombinationResult>& results, int byTime, int byMemory) {
    std::vector<const CombinationResult*> measured;
    for (const CombinationResult& r : results)
        if (r.status == CombinationStatus::Measured) measured.push_back(&r);
    KeptSets k;
    auto take = [&](auto less, int count, std::vector<std::string>& out) {
        std::vector<const CombinationResult*> v = measured;
        std::sort(v.begin(), v.end(), less);
        for (size_t i = 0; i < v.size() && static_cast<int>(i) < count; ++i) out.push_back(v[i]->key);
    };
    take([](const CombinationResult* a, const CombinationResult* b) {
        if (a->seconds != b->seconds) return a->seconds < b->seconds;
        return a->key < b->key;
    },
         byTime, k.byTime);
    take([](const CombinationResult* a, const CombinationResult* b) {
        if (a->memoryBytes != b->memoryBytes) return a->memoryBytes < b->memoryBytes;
        if (a->seconds != b->seconds) return a->seconds < b->seconds;
        return a->key < b->key;
    },
         byMemory, k.byMemory);
    return k;
}

struct ProfilerSession::Impl {
    SessionConfig config;
    std::unique_ptr<MeasureBackend> backend;
    Callbacks cb;
    std::atomic<bool> cancel{false};
    mutable std::mutex mutex;
    std::vector<CombinationResult> results;
    Clock::time_point start;
    bool aborted = false;
    bool running = false;

    // Progress bookkeeping of the current stage: the estimate of the time left is the wall time per
    // combination (or probe) measured so far times what is left to do.
    int64_t done = 0, total = 0;
    double measuredWallSeconds = 0;
    int64_t measuredCount = 0;

    void log(const std::string& s) const {
        if (cb.log) cb.log(s);
    }
    // Progress is throttled to one call per kProgressSeconds, except when the stage changes.
    static constexpr double kProgressSeconds = 0.1;
    std::string lastStage;
    std::optional<Clock::time_point> lastProgress;
    // The report's end: cancelled or not, the wall time, and the last progress report ("done").
    ProfileReport finish(ProfileReport report) {
        report.cancelled = cancel.load();
        report.seconds = secondsSince(start);
        SessionProgress fin;
        fin.stage = "done";
        fin.remainingSeconds = 0;
        fin.message = report.cancelled ? "cancelled" : "done";
        progress(fin);
        return report;
    }

    void progress(SessionProgress p) {
        const bool stageChanged = p.stage != lastStage;
        if (!stageChanged && lastProgress && secondsSince(*lastProgress) < kProgressSeconds) return;
        lastStage = p.stage;
        lastProgress = Clock::now();
        p.elapsedSeconds = secondsSince(start);
        p.done = done;
        p.total = total;
        if (measuredCount > 0 && total >= done)
            p.remainingSeconds = remainingSecondsEstimate(measuredWallSeconds, measuredCount, total - done);
        if (cb.progress) cb.progress(p);
    }
    void publish(const CombinationResult& r) {
        {
            std::lock_guard<std::mutex> lock(mutex);
            results.push_back(r);
        }
        if (cb.result) cb.result(r);
    }

    // Waits for the launch in flight: polls, honours cancel (grace, then abort) and the watchdog.
    Result<WaitEnd> wait(LaunchResult& out, double limitSeconds, const std::string& what) {
        const ProtocolSettings& p = config.protocol;
        const auto t0 = Clock::now();
        std::optional<Clock::time_point> cancelledAt;
        while (true) {
            auto st = backend->poll(out);
            if (!st) return st.error();
            if (*st == PollState::Done) return cancelledAt ? WaitEnd::Cancelled : WaitEnd::Done;
            if (!cancelledAt && cancel.load()) cancelledAt = Clock::now();
            if (cancelledAt && secondsSince(*cancelledAt) >= p.cancelGraceSeconds) {
                backend->abort();
                aborted = true;
                return WaitEnd::Cancelled;
            }
            if (secondsSince(t0) > limitSeconds) {
                backend->abort();
                aborted = true;
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.1f s", limitSeconds);
                return makeError("profiler.hang", what + " did not finish within " + buf +
                                                      ": a collective or kernel hung, so the communicators were aborted; the "
                                                      "measurements made before it are kept");
            }
            std::this_thread::sleep_for(std::chrono::duration<double>(p.pollSeconds));
        }
    }

    double limitFor(const SegmentWorkPlan& w, int iterations) const {
        const ProtocolSettings& p = config.protocol;
        return std::max(p.watchdogSeconds, p.watchdogFactor * w.predictedSeconds * std::max(1, iterations));
    }

    struct Measurement {
        CombinationStatus status = CombinationStatus::Measured;
        double seconds = 0;
        std::vector<double> samples;
        std::vector<double> itemSeconds;
        std::string note;
        bool cancelled = false;
    };

    // The protocol for one prepared work plan. `best` is the best time so far of its type (0: none).
    Result<Measurement> measure(const SegmentWorkPlan& w, double best, bool instrument, const std::string& what) {
        const ProtocolSettings& p = config.protocol;
        Measurement r;
        const Status st = backend->prepare(w);
        if (!st && st.error().code == "profiler.aborted") return st.error();
        // Every rank must launch or none (a collective with a missing rank would hang): a
        // combination that fails to prepare on one rank is skipped by all.
        const bool oom = !st && st.error().code == "profiler.oom";
        if (backend->anyRank(oom)) {
            r.status = CombinationStatus::Infeasible;
            r.note = oom ? st.error().message : "out of device memory on another rank";
            return r;
        }
        if (backend->anyRank(!st)) {
            r.status = CombinationStatus::Failed;
            r.note = st ? "failed on another rank" : st.error().toString();
            return r;
        }
        LaunchResult lr;
        auto run = [&](int iterations, Timing timing) -> Result<WaitEnd> {
            CFP_TRY(backend->launch(iterations, timing));
            return wait(lr, limitFor(w, iterations), what);
        };
        if (p.warmupRuns > 0) {
            auto e = run(p.warmupRuns, Timing::Total);
            if (!e) return e.error();
            if (*e == WaitEnd::Cancelled) {
                r.cancelled = true;
                return r;
            }
        }
        for (int round = 0; round < p.timedRounds; ++round) {
            auto e = run(p.runsPerRound, Timing::Total);
            if (!e) return e.error();
            if (*e == WaitEnd::Cancelled) {
                r.cancelled = true;
                return r;
            }
            const double s = backend->agree(lr.secondsPerIteration);
            r.samples.push_back(s);
            if (p.abandonFactor > 0 && best > 0 && s > p.abandonFactor * best) {
                r.status = CombinationStatus::Abandoned;
                r.seconds = s;
                char buf[96];
                std::snprintf(buf, sizeof buf, "abandoned after round %d: %.3g s > %.2g x best %.3g s", round + 1, s, p.abandonFactor, best);
                r.note = buf;
                return r;
            }
        }
        r.seconds = median(r.samples);
        if (instrument) {
            auto e = run(p.runsPerRound, Timing::PerItem);
            if (!e) return e.error();
            if (*e == WaitEnd::Cancelled) {
                r.cancelled = true;
                return r;
            }
            r.itemSeconds = lr.itemSeconds;
            for (double& s : r.itemSeconds) s = backend->agree(s);
        }
        return r;
    }
};

ProfilerSession::ProfilerSession(SessionConfig config, std::unique_ptr<MeasureBackend> backend, Callbacks callbacks)
    : m(std::make_unique<Impl>()) {
    m->config = std::move(config);
    m->backend = std::move(backend);
    m->cb = std::move(callbacks);
}

ProfilerSession::~ProfilerSession() = default;

void ProfilerSession::cancel() { m->cancel.store(true); }
bool ProfilerSession::cancelRequested() const { return m->cancel.load(); }

std::vector<CombinationResult> ProfilerSession::partialResults() const {
    std::lock_guard<std::mutex> lock(m->mutex);
    return m->results;
}

Result<ProfileReport> ProfilerSession::run() {
    Impl& S = *m;
    if (S.running) return makeError("profiler.bad_config", "the session is already running");
    S.running = true;
    struct Reset {
        bool& flag;
        ~Reset() { flag = false; }
    } reset{S.running};
    S.start = Clock::now();
    const SessionConfig& cfg = S.config;
    if (!cfg.graph) return makeError("profiler.bad_config", "no model graph to profile");
    if (!S.backend) return makeError("profiler.bad_config", "no measuring backend");
    CFP_TRY(validateProtocol(cfg.protocol));
    if (S.aborted) return makeError("profiler.aborted", "the backend of this session was aborted; start a new session");

    // Mesh.
    // The kernel comparison runs on one device whatever the cluster and mesh.
    const int64_t devices = cfg.kernels ? 1 : cfg.cluster.devices();
    const std::string meshText = cfg.kernels ? std::string("dp=1") : cfg.mesh.empty() ? std::to_string(devices) : cfg.mesh;
    if (meshText == "auto") return makeError("profiler.bad_config", "profiling needs one mesh (e.g. 8, 2x4, dp=2,tp=4), not 'auto'");
    auto parsed = parseMesh(meshText, devices);
    if (!parsed) return parsed.error().withContext("mesh");
    auto mesh = assignLinkClasses(*parsed, cfg.kernels ? 1 : cfg.cluster.hardware.gpusPerNode);
    if (!mesh) return mesh.error().withContext("mesh");

    ProfileReport report;
    report.backend = S.backend->name();
    report.mesh = mesh->toString();
    report.protocol = cfg.protocol.describe();
    report.dbPath = cfg.dbPath;

    SessionProgress pr;
    pr.stage = "devices";
    pr.message = "opening devices and communicators";
    S.progress(pr);
    auto setup = S.backend->open(*mesh);
    if (!setup) return setup.error();
    report.setup = *setup;
    S.log("devices: " + setup->description);
    if (setup->comm == CommMode::Modelled)
        S.log("fewer GPUs than the mesh needs: measuring one rank's compute, communication from the model");

    if (cfg.kernels) {
        auto suite = kernelSuite(*cfg.graph, cfg.cluster.hardware);
        if (!suite) return suite.error();
        S.done = 0;
        S.total = static_cast<int64_t>(std::count_if(suite->begin(), suite->end(), [](const KernelCase& c) { return c.measurable(); }));
        std::vector<PredictedMeasured> pairs;
        for (KernelCase& c : *suite) {
            KernelResult r;
            if (c.measurable() && !S.backend->anyRank(S.cancel.load())) {
                SessionProgress kp;
                kp.stage = "kernels";
                kp.combination = c.name;
                kp.message = "measuring: " + c.name;
                S.progress(kp);
                const auto t0 = Clock::now();
                auto meas = S.measure(c.work, 0.0, false, "kernel '" + c.name + "'");
                if (!meas) return meas.error();
                if (meas->cancelled) break;
                r.measured = true;
                r.status = meas->status;
                r.seconds = meas->seconds;
                r.samples = meas->samples;
                r.note = meas->note;
                ++S.done;
                S.measuredWallSeconds += secondsSince(t0);
                ++S.measuredCount;
                if (r.status == CombinationStatus::Measured) pairs.push_back({c.name + " " + c.shape, c.predictedSeconds, r.seconds});
            }
            r.kernel = std::move(c);
            report.kernels.push_back(std::move(r));
        }
        report.kernelAccuracy = accuracyOf(pairs);
        return S.finish(std::move(report));
    }

    // Profile DB (written by the root rank only).
    std::optional<ProfileDb> db;
    int64_t hwId = 0;
    if (!cfg.dbPath.empty() && setup->root) {
        auto opened = ProfileDb::open(cfg.dbPath, cfg.dbMode);
        if (!opened) return opened.error();
        db = std::move(*opened);
        if (setup->fingerprint.simulated()) {
            // Simulated numbers are the cost model's own: they must not sit beside real measurements.
            auto hardware = db->hardware();
            if (!hardware) return hardware.error();
            for (const HardwareRecord& h : *hardware)
                if (!h.fingerprint.simulated())
                    return makeError("profiler.simulated_into_real_db",
                                     "profile DB '" + cfg.dbPath + "' holds real measurements ('" + h.key +
                                         "'); simulated runs are stored in a DB of their own, e.g. '" + simulatedDbPath(cfg.dbPath) + "'",
                                     cfg.dbPath);
        }
        report.dbMovedAside = db->movedAside();
        if (!report.dbMovedAside.empty()) S.log("previous profile DB kept as " + report.dbMovedAside);
        auto id = db->hardwareId(setup->fingerprint, cfg.hardwareSpec.empty() ? cfg.cluster.hardware.id : cfg.hardwareSpec);
        if (!id) return id.error();
        hwId = *id;
    }

    // Calibration: from the DB, measured when missing (or always).
    auto baseModel = CostModel::create(cfg.cluster.hardware, *mesh);
    if (!baseModel) return baseModel.error();
    CostCalibration calibration;
    if (db) {
        auto c = db->calibration(hwId);
        if (!c) return c.error();
        calibration = std::move(*c);
    }
    const bool calibrate = cfg.calibration == CalibrationMode::Always ||
                           (cfg.calibration == CalibrationMode::IfMissing && S.backend->anyRank(setup->root && calibration.empty()));
    if (calibrate) {
        auto probes = calibrationProbes(cfg.calibrationGrid, *baseModel,
                                        setup->comm == CommMode::Measured ? ProbeCollectives::Include : ProbeCollectives::Skip);
        std::vector<double> seconds(probes.size(), 0.0);
        S.done = 0;
        S.total = static_cast<int64_t>(probes.size());
        for (size_t i = 0; i < probes.size(); ++i) {
            if (S.backend->anyRank(S.cancel.load())) break;
            SessionProgress cp;
            cp.stage = "calibration";
            cp.combination = probes[i].label;
            cp.message = "calibrating: " + probes[i].items.front().name;
            S.progress(cp);
            const auto t0 = Clock::now();
            auto r = S.measure(probes[i], 0.0, false, "calibration probe '" + probes[i].items.front().name + "'");
            if (!r) return r.error();
            if (r->cancelled) break;
            if (r->status == CombinationStatus::Measured) seconds[i] = r->seconds;
            ++S.done;
            S.measuredWallSeconds += secondsSince(t0);
            ++S.measuredCount;
        }
        if (!S.cancel.load()) {
            CostCalibration fitted = fitCalibration(probes, seconds, *baseModel);
            if (db) {
                CFP_TRY(db->putCalibration(hwId, fitted));
                auto c = db->calibration(hwId);
                if (!c) return c.error();
                calibration = std::move(*c);
            } else {
                calibration = std::move(fitted);
            }
            report.calibrationMeasured = true;
        }
        S.measuredWallSeconds = 0;
        S.measuredCount = 0;
    }
    report.calibration = calibration;

    auto catalog = SegmentCatalog::build(*cfg.graph, cfg.cluster.hardware, *mesh, calibration, cfg.policy);
    if (!catalog) return catalog.error();
    std::vector<int> types = cfg.segmentTypes;
    if (types.empty())
        for (const auto& t : catalog->types()) types.push_back(t.type);
    // Which combinations of each type: all of them, or the cost model's candidates of a large type.
    std::vector<CandidateSet> sets;
    S.done = 0;
    S.total = 0;
    for (int t : types) {
        if (t < 0 || static_cast<size_t>(t) >= catalog->types().size())
            return makeError("profiler.bad_config", "the model has no segment type T" + std::to_string(t) + " on mesh " + report.mesh +
                                                        " (types T0…T" + std::to_string(catalog->types().size() - 1) + ")");
        const auto& info = catalog->types()[static_cast<size_t>(t)];
        if (info.combinations > cfg.candidates.maxCombinations) {
            SessionProgress cp;
            cp.stage = "candidates";
            cp.segmentType = info.type;
            cp.message = info.name + ": " + std::to_string(info.combinations) + " combinations, choosing the cost model's candidates";
            S.progress(cp);
        }
        auto set = selectCandidates(*catalog, t, cfg.candidates);
        if (!set) return set.error();
        if (!set->complete) S.log(info.name + ": profiling " + set->describe());
        S.total += set->count();
        sets.push_back(std::move(*set));
        if (S.backend->anyRank(S.cancel.load())) S.cancel.store(true);
        if (S.cancel.load()) break;
    }

    const std::string modelName = cfg.modelName.empty() ? cfg.graph->name() : cfg.modelName;
    const CommMode comm = setup->comm;
    S.measuredWallSeconds = 0;
    S.measuredCount = 0;
    for (size_t ti = 0; ti < sets.size() && !S.cancel.load(); ++ti) {
        const CandidateSet& set = sets[ti];
        const auto& info = catalog->types()[static_cast<size_t>(set.type)];
        const std::string sig = fingerprintHex(info.signature);
        SegmentTypeSummary summary;
        summary.type = info.type;
        summary.name = info.name;
        summary.signature = info.signature;
        summary.combinations = info.combinations;
        summary.profiled = set.count();
        summary.selection = set.describe();
        std::vector<CombinationResult> typeResults;
        double best = 0;

        // Measures one combination under the protocol (no abandonment when `abandonBest` is 0) and
        // stores it; nullopt when cancelled.
        auto measureAndStore = [&](const SegmentWorkPlan& work, CombinationResult& r, double abandonBest) -> Result<bool> {
            auto meas = S.measure(work, abandonBest, true, info.name + " combination '" + work.label + "'");
            if (!meas) return meas.error();
            if (meas->cancelled) return false;
            r.reused = false;
            r.status = meas->status;
            r.samples = meas->samples;
            r.note = meas->note;
            r.seconds = meas->seconds;
            r.comm = comm;
            r.modelledCommSeconds = 0;
            if (comm == CommMode::Modelled && (r.status == CombinationStatus::Measured || r.status == CombinationStatus::Abandoned)) {
                // One rank's compute was timed; the collectives come from the model.
                r.modelledCommSeconds = work.predictedCommSeconds;
                r.seconds += r.modelledCommSeconds;
                for (double& s : r.samples) s += r.modelledCommSeconds;
            }
            if (db) {
                SegmentRecord rec;
                rec.segmentSignature = sig;
                rec.mesh = report.mesh;
                rec.combination = r.key;
                rec.label = r.label;
                rec.segmentType = info.type;
                rec.model = modelName;
                rec.status = r.status;
                rec.comm = comm;
                rec.seconds = r.seconds;
                rec.samples = r.samples;
                rec.predictedSeconds = r.predictedSeconds;
                rec.memoryBytes = r.memoryBytes;
                rec.modelledCommSeconds = r.modelledCommSeconds;
                rec.protocol = report.protocol;
                rec.note = r.note;
                CFP_TRY(db->putSegment(hwId, rec));
                // GEMMs become measured ops (local shapes: valid on any mesh).
                std::vector<OpRecord> ops;
                for (size_t i = 0; i < work.items.size() && i < meas->itemSeconds.size(); ++i) {
                    const WorkItem& item = work.items[i];
                    if (item.kind != WorkKind::Gemm || !(meas->itemSeconds[i] > 0)) continue;
                    ops.push_back({item.opSignature, item.name, meas->itemSeconds[i], cfg.protocol.runsPerRound});
                }
                CFP_TRY(db->putOps(hwId, ops, comm));
                report.opMeasurements += static_cast<int64_t>(ops.size());
            }
            return true;
        };

        for (int64_t k = 0; k < set.count(); ++k) {
            if (S.backend->anyRank(S.cancel.load())) {
                S.cancel.store(true);
                break;
            }
            const auto started = Clock::now();
            const int64_t ci = set.indices[static_cast<size_t>(k)];
            const std::vector<int32_t> combo = catalog->combination(info.type, ci);
            auto work = catalog->workPlan(info.type, combo);
            if (!work) return work.error();
            SessionProgress sp;
            sp.stage = "profiling";
            sp.segmentType = info.type;
            sp.typeIndex = static_cast<int>(ti);
            sp.typeCount = static_cast<int>(sets.size());
            sp.combinationIndex = k;
            sp.combinationCount = set.count();
            sp.combination = work->label;
            sp.message = info.name + " " + std::to_string(k + 1) + "/" + std::to_string(set.count()) +
                         (set.complete ? "" : " (candidates of " + std::to_string(info.combinations) + ")") + ": " + work->label;
            S.progress(sp);

            CombinationResult r;
            r.segmentType = info.type;
            r.combination = combo;
            r.key = work->combinationKey;
            r.label = work->label;
            r.comm = comm;
            r.predictedSeconds = work->predictedSeconds;
            r.uncalibratedSeconds = catalog->predictSeconds(*work, *baseModel);
            r.memoryBytes = work->memoryBytes();

            std::optional<SegmentRecord> stored;
            if (db && cfg.reuse) {
                auto f = db->findSegment(hwId, sig, report.mesh, r.key);
                if (!f) return f.error();
                stored = std::move(*f);
            }
            if (S.backend->anyRank(stored.has_value())) {
                r.reused = true;
                r.status = static_cast<CombinationStatus>(static_cast<int>(S.backend->agree(stored ? static_cast<double>(stored->status) : 0.0)));
                r.seconds = S.backend->agree(stored ? stored->seconds : 0.0);
                if (stored) {
                    r.samples = stored->samples;
                    r.comm = stored->comm;
                    r.modelledCommSeconds = stored->modelledCommSeconds;
                    r.note = stored->note;
                }
            } else {
                auto ok = measureAndStore(*work, r, best);
                if (!ok) return ok.error();
                if (!*ok) break;
            }
            if (r.status == CombinationStatus::Measured && r.seconds > 0 && (best == 0 || r.seconds < best)) best = r.seconds;
            ++S.done;
            typeResults.push_back(r);
            S.publish(r);
            if (!r.reused) {
                // The rate for the estimate: everything this combination took, not only its launches.
                S.measuredWallSeconds += secondsSince(started);
                ++S.measuredCount;
            }
            if (S.aborted) break;
        }

        // Early abandonment judges by time only; the least-memory combinations stay candidates
        // for memory, so the abandoned ones among them are measured again in full.
        if (cfg.protocol.keepBestByMemory > 0 && !S.cancel.load() && !S.aborted) {
            std::vector<size_t> order;
            for (size_t i = 0; i < typeResults.size(); ++i)
                if (typeResults[i].status == CombinationStatus::Measured || typeResults[i].status == CombinationStatus::Abandoned)
                    order.push_back(i);
            std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                const CombinationResult& x = typeResults[a];
                const CombinationResult& y = typeResults[b];
                if (x.memoryBytes != y.memoryBytes) return x.memoryBytes < y.memoryBytes;
                if (x.seconds != y.seconds) return x.seconds < y.seconds;
                return x.key < y.key;
            });
            if (order.size() > static_cast<size_t>(cfg.protocol.keepBestByMemory)) order.resize(static_cast<size_t>(cfg.protocol.keepBestByMemory));
            for (size_t i : order) {
                CombinationResult& r = typeResults[i];
                if (S.backend->anyRank(r.status != CombinationStatus::Abandoned)) continue;
                if (S.backend->anyRank(S.cancel.load())) {
                    S.cancel.store(true);
                    break;
                }
                auto work = catalog->workPlan(info.type, r.combination);
                if (!work) return work.error();
                const std::string abandonedNote = r.note;
                auto ok = measureAndStore(*work, r, 0.0);
                if (!ok) return ok.error();
                if (!*ok) break;
                r.note = "measured in full (among the least memory) after " + abandonedNote;
                ++summary.remeasured;
                {
                    std::lock_guard<std::mutex> lock(S.mutex);
                    for (CombinationResult& p : S.results)
                        if (p.segmentType == r.segmentType && p.key == r.key) p = r;
                }
                if (S.cb.result) S.cb.result(r);
                if (S.aborted) break;
            }
        }
        for (const CombinationResult& r : typeResults) {
            switch (r.status) {
                case CombinationStatus::Measured: ++summary.measured; break;
                case CombinationStatus::Abandoned: ++summary.abandoned; break;
                case CombinationStatus::Infeasible: ++summary.infeasible; break;
                case CombinationStatus::Failed: ++summary.failed; break;
            }
            if (r.reused) ++summary.reused;
        }

        // Pruning: the best by time and by memory stay candidates.
        const KeptSets kept = keepBest(typeResults, cfg.protocol.keepBestByTime, cfg.protocol.keepBestByMemory);
        summary.keptByTime = kept.byTime;
        summary.keptByMemory = kept.byMemory;
        std::vector<std::string> keptAll = kept.byTime;
        for (const auto& k : kept.byMemory)
            if (std::find(keptAll.begin(), keptAll.end(), k) == keptAll.end()) keptAll.push_back(k);
        for (CombinationResult& r : typeResults) r.kept = std::find(keptAll.begin(), keptAll.end(), r.key) != keptAll.end();
        {
            std::lock_guard<std::mutex> lock(S.mutex);
            for (CombinationResult& r : S.results)
                if (r.segmentType == info.type) r.kept = std::find(keptAll.begin(), keptAll.end(), r.key) != keptAll.end();
        }
        if (db && !typeResults.empty()) CFP_TRY(db->setKept(hwId, sig, report.mesh, keptAll));
        best = 0;
        for (const CombinationResult& r : typeResults)
            if (r.status == CombinationStatus::Measured && r.seconds > 0 && (best == 0 || r.seconds < best)) best = r.seconds;
        if (best > 0) {
            summary.bestSeconds = best;
            for (const CombinationResult& r : typeResults)
                if (r.status == CombinationStatus::Measured && r.seconds == best) {
                    summary.bestLabel = r.label;
                    break;
                }
        }
        if (summary.reused > 0) S.log(info.name + ": " + std::to_string(summary.reused) + " of " + std::to_string(typeResults.size()) +
                                      " combinations reused from the profile DB");
        report.types.push_back(std::move(summary));
        for (CombinationResult& r : typeResults) report.results.push_back(std::move(r));
        if (S.aborted) break;
    }
    if (db) {
        auto ops = db->ops(hwId);
        if (!ops) return ops.error();
        report.distinctOps = static_cast<int64_t>(ops->size());
    }
    std::vector<PredictedMeasured> calibrated, uncalibrated;
    for (const CombinationResult& r : report.results) {
        if (r.status != CombinationStatus::Measured) continue;
        const std::string label = "T" + std::to_string(r.segmentType) + " " + r.label;
        calibrated.push_back({label, r.predictedSeconds, r.seconds});
        uncalibrated.push_back({label, r.uncalibratedSeconds, r.seconds});
    }
    report.accuracy = accuracyOf(calibrated);
    report.uncalibratedAccuracy = accuracyOf(uncalibrated);
    return S.finish(std::move(report));
}

}  // namespace cfp::profiler
