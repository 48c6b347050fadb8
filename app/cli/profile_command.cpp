// `cfp profile`: measure segment types on the GPUs into a profile DB.

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "profiler/profile_db.h"
#include "profiler/profiler.h"
#include "profiler/session.h"
#include "segments/fingerprint.h"
#include "hardware/hardware.h"

namespace cfp::cli {

namespace {

std::atomic<profiler::ProfilerSession*> g_profileSession{nullptr};

extern "C" void onProfileInterrupt(int) {
    if (auto* s = g_profileSession.load()) s->cancel();
}

Json calibrationJson(const CostCalibration& c) {
    Json j;
    j["hbm_bytes_per_second"] = c.hbmBytesPerSecond > 0 ? Json(c.hbmBytesPerSecond) : Json(nullptr);
    j["launch_seconds"] = c.launchSeconds >= 0 ? Json(c.launchSeconds) : Json(nullptr);
    Json g = Json::array();
    for (const GemmEfficiencyPoint& p : c.gemm)
        g.push_back({{"dtype", std::string(dtypeName(p.dtype))}, {"flops", p.flops}, {"bytes", p.bytes}, {"efficiency", p.efficiency}});
    j["gemm"] = g;
    Json k = Json::array();
    for (const CollectiveFit& f : c.collectives)
        k.push_back({{"link", std::string(linkClassName(f.link))},
                     {"devices", f.devices},
                     {"collective", std::string(collectiveKindName(f.kind))},
                     {"alpha_seconds", f.alphaSeconds},
                     {"beta_seconds_per_byte", f.betaSecondsPerByte}});
    j["collectives"] = k;
    return j;
}

Json accuracyJson(const profiler::AccuracyReport& a) {
    return {{"segments", a.segments},
            {"mean_relative_error", a.meanRelativeError},
            {"worst_relative_error", a.worstRelativeError},
            {"worst", a.worst}};
}

Json profileReportJson(const profiler::ProfileReport& r) {
    Json j;
    j["backend"] = r.backend;
    j["devices"] = r.setup.description;
    j["fingerprint"] = r.setup.fingerprint.key();
    j["comm"] = std::string(profiler::commModeName(r.setup.comm));
    j["ranks"] = r.setup.ranks;
    j["mesh"] = r.mesh;
    j["protocol"] = r.protocol;
    j["db"] = r.dbPath.empty() ? Json(nullptr) : Json(r.dbPath);
    j["db_moved_aside"] = r.dbMovedAside.empty() ? Json(nullptr) : Json(r.dbMovedAside);
    j["cancelled"] = r.cancelled;
    j["seconds"] = r.seconds;
    j["calibration_measured"] = r.calibrationMeasured;
    j["calibration"] = calibrationJson(r.calibration);
    j["op_measurements_stored"] = r.opMeasurements;
    j["measured_ops_in_db"] = r.distinctOps;
    j["accuracy"] = accuracyJson(r.accuracy);
    j["uncalibrated_accuracy"] = accuracyJson(r.uncalibratedAccuracy);
    Json types = Json::array();
    for (const profiler::SegmentTypeSummary& t : r.types)
        types.push_back({{"type", t.type},
                         {"name", t.name},
                         {"signature", fingerprintHex(t.signature)},
                         {"combinations", t.combinations},
                         {"measured", t.measured},
                         {"abandoned", t.abandoned},
                         {"infeasible", t.infeasible},
                         {"failed", t.failed},
                         {"reused", t.reused},
                         {"best_seconds", t.bestSeconds > 0 ? Json(t.bestSeconds) : Json(nullptr)},
                         {"best", t.bestLabel},
                         {"kept_by_time", t.keptByTime},
                         {"kept_by_memory", t.keptByMemory}});
    j["segment_types"] = types;
    Json results = Json::array();
    for (const profiler::CombinationResult& c : r.results)
        results.push_back({{"type", c.segmentType},
                           {"combination", c.key},
                           {"label", c.label},
                           {"status", std::string(profiler::combinationStatusName(c.status))},
                           {"comm", std::string(profiler::commModeName(c.comm))},
                           {"reused", c.reused},
                           {"kept", c.kept},
                           {"seconds", c.seconds},
                           {"samples", c.samples},
                           {"predicted_seconds", c.predictedSeconds},
                           {"uncalibrated_seconds", c.uncalibratedSeconds},
                           {"modelled_comm_seconds", c.modelledCommSeconds},
                           {"memory_bytes", c.memoryBytes},
                           {"note", c.note}});
    j["results"] = results;
    return j;
}

void printProfileReport(const profiler::ProfileReport& r, const std::string& model) {
    std::cout << model << " on mesh " << r.mesh << ": " << r.setup.description << " [" << r.backend << "]\n\n";
    std::cout << "  protocol      " << r.protocol << "\n";
    std::cout << "  fingerprint   " << r.setup.fingerprint.key() << "\n";
    if (r.setup.comm == profiler::CommMode::Modelled)
        std::cout << "  communication modelled (one rank's compute measured; collectives from the alpha-beta model)\n";
    const CostCalibration& c = r.calibration;
    if (c.empty()) {
        std::cout << "  calibration   none\n";
    } else {
        std::cout << "  calibration   " << (r.calibrationMeasured ? "measured now" : "from the profile DB") << ": HBM "
                  << (c.hbmBytesPerSecond > 0 ? cli::fixed(c.hbmBytesPerSecond / 1e12, 2) + " TB/s" : std::string("-")) << ", launch "
                  << (c.launchSeconds >= 0 ? cli::fixed(c.launchSeconds * 1e6, 1) + " us" : std::string("-")) << ", " << c.gemm.size()
                  << " GEMM points, " << c.collectives.size() << " collective fits\n";
    }
    std::cout << "\n  segment types:\n";
    for (const profiler::SegmentTypeSummary& t : r.types) {
        std::cout << "    " << t.name << ": " << t.combinations << " combinations, " << t.measured << " measured, " << t.abandoned
                  << " abandoned, " << t.infeasible << " infeasible";
        if (t.failed) std::cout << ", " << t.failed << " failed";
        if (t.reused) std::cout << " (" << t.reused << " reused from the DB)";
        if (t.bestSeconds > 0) std::cout << "; best " << ms(t.bestSeconds) << " [" << t.bestLabel << "]";
        std::cout << "; kept " << t.keptByTime.size() << " by time, " << t.keptByMemory.size() << " by memory\n";
    }
    auto pct = [](double v) { return cli::fixed(100.0 * v, 1) + "%"; };
    if (r.accuracy.segments > 0) {
        std::cout << "\n  model vs measured (" << r.accuracy.segments << " combinations): calibrated mean " << pct(r.accuracy.meanRelativeError)
                  << ", worst " << pct(r.accuracy.worstRelativeError) << " (" << r.accuracy.worst << "); spec numbers mean "
                  << pct(r.uncalibratedAccuracy.meanRelativeError) << ", worst " << pct(r.uncalibratedAccuracy.worstRelativeError) << "\n";
    }
    if (!r.dbPath.empty())
        std::cout << "\n  profile DB    " << r.dbPath << " (" << r.opMeasurements << " GEMM timings stored; " << r.distinctOps
                  << " measured ops for this fingerprint"
                  << (r.dbMovedAside.empty() ? "" : "; previous file kept as " + r.dbMovedAside) << ")\n";
    std::cout << "  " << (r.cancelled ? "cancelled after " : "done in ") << cli::fixed(r.seconds, 1) << " s\n";
}

Json kernelsJson(const profiler::ProfileReport& r, const std::string& model, const std::string& hardware) {
    Json j;
    j["model"] = model;
    j["hardware_spec"] = hardware;
    j["backend"] = r.backend;
    j["devices"] = r.setup.description;
    j["fingerprint"] = r.setup.fingerprint.key();
    j["protocol"] = r.protocol;
    j["cancelled"] = r.cancelled;
    j["seconds"] = r.seconds;
    j["accuracy"] = accuracyJson(r.kernelAccuracy);
    Json list = Json::array();
    for (const profiler::KernelResult& k : r.kernels) {
        const profiler::KernelCase& c = k.kernel;
        Json e{{"group", std::string(profiler::kernelGroupName(c.group))},
               {"name", c.name},
               {"shape", c.shape},
               {"reference", c.reference},
               {"backend", c.backend.empty() ? Json(nullptr) : Json(c.backend)},
               {"predicted_seconds", c.predictedSeconds},
               {"measured_seconds", k.measured && k.status == profiler::CombinationStatus::Measured ? Json(k.seconds) : Json(nullptr)},
               {"samples", k.samples},
               {"status", k.measured ? std::string(profiler::combinationStatusName(k.status)) : std::string("not run")},
               {"note", k.note},
               {"flops", c.flops},
               {"bytes", c.bytes}};
        switch (c.group) {
            case profiler::KernelGroup::Gemm:
                e["gemm"] = {{"batch", c.gemm.batch}, {"m", c.gemm.m}, {"n", c.gemm.n}, {"k", c.gemm.k}, {"dtype", std::string(dtypeName(c.gemm.dtype))}};
                break;
            case profiler::KernelGroup::Memory: e["copy_bytes"] = c.copyBytes; break;
            case profiler::KernelGroup::Attention:
                e["attention"] = {{"batch", c.attention.batch},     {"heads", c.attention.heads},
                                  {"seq", c.attention.seq},         {"key_seq", c.attention.keySeq},
                                  {"head_dim", c.attention.headDim}, {"causal", c.attention.causal},
                                  {"dtype", std::string(dtypeName(c.attention.dtype))}};
                break;
        }
        list.push_back(std::move(e));
    }
    j["kernels"] = list;
    return j;
}

void printKernels(const profiler::ProfileReport& r, const std::string& model, const std::string& hardware) {
    std::cout << model << ", kernel by kernel on one device: " << r.setup.description << " [" << r.backend << "]\n";
    std::cout << "  predicted by the cost model with the '" << hardware << "' spec's numbers (no calibration); protocol " << r.protocol
              << "\n\n";
    std::printf("  %-10s %-58s %-34s %10s %10s %8s\n", "group", "kernel", "shape", "model ms", "meas. ms", "model/m");
    bool unmeasured = false;
    for (const profiler::KernelResult& k : r.kernels) {
        const profiler::KernelCase& c = k.kernel;
        const std::string name = c.name.size() > 58 ? c.name.substr(0, 55) + "..." : c.name;
        std::string measured = "-", ratio = "-";
        if (k.measured && k.status == profiler::CombinationStatus::Measured && k.seconds > 0) {
            measured = cli::fixed(k.seconds * 1e3, 4);
            ratio = cli::fixed(c.predictedSeconds / k.seconds, 2);
        } else if (k.measured) {
            measured = std::string(profiler::combinationStatusName(k.status));
        } else {
            unmeasured = true;
        }
        std::printf("  %-10s %-58s %-34s %10s %10s %8s\n", std::string(profiler::kernelGroupName(c.group)).c_str(), name.c_str(), c.shape.c_str(),
                    cli::fixed(c.predictedSeconds * 1e3, 4).c_str(), measured.c_str(), ratio.c_str());
    }
    std::fflush(stdout);
    if (unmeasured)
        std::cout << "\n  '-': the profiler has no fused attention kernel; bench/reference/kernels.py times these with PyTorch\n"
                     "  (scaled_dot_product_attention) from this command's --json output\n";
    if (r.kernelAccuracy.segments > 0)
        std::cout << "\n  model vs measured (" << r.kernelAccuracy.segments << " kernels): mean "
                  << cli::fixed(100.0 * r.kernelAccuracy.meanRelativeError, 1) << "%, worst " << cli::fixed(100.0 * r.kernelAccuracy.worstRelativeError, 1)
                  << "% (" << r.kernelAccuracy.worst << ")\n";
    std::cout << "  " << (r.cancelled ? "cancelled after " : "done in ") << cli::fixed(r.seconds, 1) << " s\n";
}

int listProfileDb(const std::string& path, bool json) {
    auto db = profiler::ProfileDb::open(path, profiler::ProfileDb::OpenMode::ReadOnly);
    if (!db) return fail(db.error().withContext("--db"));
    auto hw = db->hardware();
    if (!hw) return fail(hw.error());
    Json list = Json::array();
    for (const profiler::HardwareRecord& h : *hw)
        list.push_back({{"fingerprint", h.key},
                        {"hardware_spec", h.hardwareSpec},
                        {"segments", h.segments},
                        {"ops", h.ops},
                        {"calibrated", h.calibrated},
                        {"updated", h.updated}});
    if (json) {
        std::cout << list.dump(2) << '\n';
        return kExitOk;
    }
    if (hw->empty()) std::cout << "profile DB " << path << " is empty\n";
    for (const profiler::HardwareRecord& h : *hw)
        std::cout << "  " << h.key << "\n      profiled as " << h.hardwareSpec << ": " << h.segments << " segment combinations, " << h.ops
                  << " ops" << (h.calibrated ? ", calibrated" : "") << "\n";
    return kExitOk;
}

}  // namespace

int cmdProfile(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--mesh", "--db", "--types", "--calibrate", "--warmups", "--rounds", "--runs", "--abandon",
                        "--keep", "--processes", "--optimizer-sharding"});
    spec.flags.insert({"--json", "--new-db", "--no-reuse", "--simulate", "--quiet", "--list", "--kernels"});
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp profile [MODEL] --db FILE [--hardware H] [--nodes N] [--mesh SHAPE] [options]\n"
                     "       cfp profile [MODEL] --kernels [--hardware H] [--json]\n\n"
                     "Runs every segment type of MODEL under every block-strategy combination on the attached GPUs\n"
                     "(cuBLASLt GEMMs, memory-bound kernels, NCCL collectives on the mesh axes), calibrates the cost\n"
                     "model, and stores everything in the profile DB, keyed by the hardware fingerprint. Combinations\n"
                     "already in the DB are not measured again. `cfp plan --db FILE` then plans with the measurements.\n"
                     "Across nodes, start one rank per GPU: mpirun -np 16 -npernode 8 cfp profile … (docs/profiler.md).\n\n"
                     "  --db FILE          the profile DB (SQLite; created when missing)\n"
                     "  --new-db           start a new DB; an existing (or damaged) FILE is kept as FILE.old-…/.damaged-…\n"
                     "  --list             list the fingerprints stored in --db FILE and exit\n"
                     "  --kernels          instead: each kernel of MODEL's step on one GPU (its GEMMs forward and\n"
                     "                     backward, streaming copies, the flash attention core) measured on its own\n"
                     "                     against the cost model's price with the --hardware spec's numbers; no DB.\n"
                     "                     --json's output feeds bench/reference/kernels.py (the same kernels in PyTorch)\n"
                     "  --hardware H       the hardware spec the measurements stand for (default h100-sxm)\n"
                     "  --nodes N          nodes (default 1); the mesh has N x GPUs-per-node devices\n"
                     "  --mesh M           8, 2x4, dp=2,tp=4 (default: one axis over all devices)\n"
                     "  --types T0,T2      profile only these segment types (default: all)\n"
                     "  --calibrate auto|always|never   measure GEMMs, HBM and collectives when the DB has no\n"
                     "                     calibration for this fingerprint (auto, default), always, or never\n"
                     "  --warmups N --rounds N --runs N --abandon F --keep N   protocol (default 2, 3, 3, 1.5, 10)\n"
                     "  --optimizer-sharding on|off   as `cfp plan` will use it (default on)\n"
                     "  --no-reuse         measure again what the DB already has\n"
                     "  --processes auto|single|mpi   one process over local GPUs, or one rank per GPU (default auto)\n"
                     "  --simulate         no GPU: times from the analytic model, stored under a 'simulated' fingerprint\n"
                     "                     (to try the pipeline; `cfp plan --db` marks such numbers as simulated)\n"
                     "  --quiet            no progress on stderr\n"
                  << kModelOptionsHelp << "  --json             machine-readable report on stdout\n";
        return kExitOk;
    }
    auto dbPath = args->value("--db");
    if (args->has("--list")) {
        if (!dbPath) return fail(makeError("cli.usage", "--list needs --db FILE"));
        return listProfileDb(*dbPath, args->has("--json"));
    }
    const bool kernels = args->has("--kernels");
    if (kernels)
        for (const char* o : {"--db", "--new-db", "--mesh", "--nodes", "--types", "--no-reuse", "--calibrate", "--optimizer-sharding", "--processes"})
            if (args->has(o) || args->value(o)) return fail(makeError("cli.usage", std::string(o) + " does not apply to --kernels (one GPU, nothing stored)"));
    if (!dbPath && !kernels) return fail(makeError("cli.usage", "profile needs --db FILE (the profile DB to store measurements in)"));
    const std::string hwName = args->value("--hardware").value_or("h100-sxm");
    auto cluster = clusterFromArgs(*args);
    if (!cluster) return fail(cluster.error());
    profiler::SessionConfig config;
    config.cluster = *cluster;
    config.hardwareSpec = hwName;
    config.dbPath = dbPath.value_or("");
    config.kernels = kernels;  // one GPU, no calibration, no DB (the session's kernel mode)
    config.dbMode = args->has("--new-db") ? profiler::ProfileDb::OpenMode::StartNew : profiler::ProfileDb::OpenMode::OpenOrCreate;
    config.mesh = args->value("--mesh").value_or("");
    config.reuse = !args->has("--no-reuse");
    if (auto v = args->value("--optimizer-sharding")) {
        if (*v != "on" && *v != "off") return fail(makeError("cli.usage", "--optimizer-sharding: '" + *v + "' is not on or off"));
        config.policy.optimizerSharding = *v == "on";
    }
    if (auto v = args->value("--calibrate")) {
        if (*v == "auto") config.calibration = profiler::CalibrationMode::IfMissing;
        else if (*v == "always") config.calibration = profiler::CalibrationMode::Always;
        else if (*v == "never") config.calibration = profiler::CalibrationMode::Never;
        else return fail(makeError("cli.usage", "--calibrate expects auto, always or never, got '" + *v + "'"));
    }
    auto intOption = [&](const char* name, int& out, int lo) -> Status {
        if (auto v = args->value(name)) {
            char* end = nullptr;
            const long n = std::strtol(v->c_str(), &end, 10);
            if (v->empty() || !end || *end != '\0' || n < lo || n > 100000)
                return makeError("cli.usage", std::string(name) + " expects a whole number from " + std::to_string(lo) + ", got '" + *v + "'");
            out = static_cast<int>(n);
        }
        return {};
    };
    if (auto st = intOption("--warmups", config.protocol.warmupRuns, 0); !st) return fail(st.error());
    if (auto st = intOption("--rounds", config.protocol.timedRounds, 1); !st) return fail(st.error());
    if (auto st = intOption("--runs", config.protocol.runsPerRound, 1); !st) return fail(st.error());
    if (auto st = intOption("--keep", config.protocol.keepBestByTime, 0); !st) return fail(st.error());
    config.protocol.keepBestByMemory = config.protocol.keepBestByTime;
    if (auto v = args->value("--abandon")) {
        char* end = nullptr;
        const double f = std::strtod(v->c_str(), &end);
        if (v->empty() || !end || *end != '\0' || !(f == 0 || f >= 1))
            return fail(makeError("cli.usage", "--abandon expects 0 (never) or a factor of at least 1, got '" + *v + "'"));
        config.protocol.abandonFactor = f;
    }
    if (auto v = args->value("--types")) {
        std::string text = *v;
        size_t start = 0;
        while (start <= text.size()) {
            const size_t comma = text.find(',', start);
            std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!part.empty() && (part[0] == 'T' || part[0] == 't')) part = part.substr(1);
            char* end = nullptr;
            const long t = std::strtol(part.c_str(), &end, 10);
            if (part.empty() || !end || *end != '\0' || t < 0)
                return fail(makeError("cli.usage", "--types expects segment types like T0,T2, got '" + *v + "'"));
            config.segmentTypes.push_back(static_cast<int>(t));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (auto st = profiler::validateProtocol(config.protocol); !st) return fail(st.error());

    // The backend first: without a GPU this fails within seconds, before the model is built.
    std::unique_ptr<profiler::MeasureBackend> backend;
    if (args->has("--simulate")) {
        backend = std::make_unique<profiler::SimulatedBackend>();
    } else {
        profiler::CudaBackendOptions o;
        if (auto v = args->value("--processes")) {
            if (*v == "auto") o.processes = profiler::CudaBackendOptions::Processes::Auto;
            else if (*v == "single") o.processes = profiler::CudaBackendOptions::Processes::Single;
            else if (*v == "mpi") o.processes = profiler::CudaBackendOptions::Processes::Mpi;
            else return fail(makeError("cli.usage", "--processes expects auto, single or mpi, got '" + *v + "'"));
        }
        auto b = profiler::makeCudaBackend(o);
        if (!b) {
            const Error& e = b.error();
            return fail(makeError(e.code, e.message + "; nothing was profiled, and `cfp plan` uses the analytic cost model", "profile"));
        }
        backend = std::move(*b);
    }
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    config.graph = std::make_shared<const Graph>(std::move(model->graph));
    config.modelName = config.graph->name();

    const bool json = args->has("--json");
    const bool progress = !args->has("--quiet") && isatty(STDERR_FILENO);
    profiler::ProfilerSession::Callbacks callbacks;
    if (progress)
        callbacks.progress = [](const profiler::SessionProgress& p) {
            std::string eta = p.remainingSeconds >= 0 ? ", ~" + cli::fixed(p.remainingSeconds, 0) + " s left" : "";
            std::fprintf(stderr, "\r\033[Kcfp: %s %lld/%lld%s  %s", p.stage.c_str(), static_cast<long long>(p.done),
                         static_cast<long long>(p.total), eta.c_str(), p.message.substr(0, 80).c_str());
            std::fflush(stderr);
        };
    if (!args->has("--quiet"))
        callbacks.log = [progress](const std::string& line) { std::fprintf(stderr, "%scfp: %s\n", progress ? "\r\033[K" : "", line.c_str()); };
    profiler::ProfilerSession session(config, std::move(backend), callbacks);
    g_profileSession.store(&session);
    auto previous = std::signal(SIGINT, onProfileInterrupt);
    auto report = session.run();
    std::signal(SIGINT, previous);
    g_profileSession.store(nullptr);
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (!report) return fail(report.error().withContext("profile"));
    if (!report->setup.root) return report->cancelled ? kExitFailure : kExitOk;
    if (kernels) {
        if (json) std::cout << kernelsJson(*report, config.modelName, hwName).dump(2) << '\n';
        else printKernels(*report, config.modelName, hwName);
    } else if (json) {
        std::cout << profileReportJson(*report).dump(2) << '\n';
    } else {
        printProfileReport(*report, config.modelName);
    }
    if (report->cancelled && kernels) {
        std::cerr << "cfp: error: profile: cancelled; the kernels measured before it are shown above [profiler.cancelled]\n";
        return kExitFailure;
    }
    if (report->cancelled) {
        std::cerr << "cfp: error: profile: cancelled; the " << report->results.size()
                  << " combinations finished before it are in the profile DB [profiler.cancelled]\n";
        return kExitFailure;
    }
    return kExitOk;
}

}  // namespace cfp::cli
