// `cfp`: the headless command-line tool over the CFP Explorer core.
//
// Exit codes: 0 success, 1 the input or the work failed (a one-line error on stderr),
// 2 usage error (unknown command or option).

#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <csignal>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "analysis/analysis.h"
#include "args.h"
#include "export/export.h"
#include "hardware/hardware.h"
#include "io/atomic_file.h"
#include "plan/plan_json.h"
#include "plan/planner.h"
#include "format.h"
#include "import/hlo_writer.h"
#include "iopddl_command.h"
#include "io/graph_json.h"
#include "loader/model_loader.h"
#include "profiler/profiler.h"
#include "profiler/session.h"
#include "segments/fingerprint.h"
#include "stats/graph_stats.h"

namespace {

using namespace cfp;
using cfp::cli::OptionSpec;
using cfp::cli::ParsedArgs;
using Json = nlohmann::ordered_json;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

const char* kMainHelp = R"(cfp — plan intra-operator parallelism for large-model training (CFP)

Usage: cfp <command> [options]

Commands:
  describe MODEL   size of the model's training step: ops, parameters, FLOPs, activations
  analyze MODEL    ParallelBlocks, repeated segments and search space on a device mesh
  graph MODEL      write the model's training-step graph as native JSON (docs/graph-format.md)
  plan MODEL       the fastest plan that fits: segment DP on a cluster, with baselines
  export PLAN      write a plan for a training job (jax, dtensor, megatron, hlo-sharding, trace)
  profile MODEL    measure every segment type on the GPUs into a profile DB (cfp plan --db uses it)
  hardware         list the built-in hardware specs
  presets          list the built-in models
  devices          list the GPUs the profiler can use, or say why there are none
  iopddl           solve / evaluate problems in the IOPDDL contest format, export op-level ones

MODEL is builtin:NAME (see `cfp presets`), a Hugging-Face-style config.json, a native graph
file, XLA HLO text (.hlo) or an ONNX model (.onnx). The default model is )" "builtin:gpt3-1.3b" R"(.

Run `cfp <command> --help` for a command's options. `cfp --version` prints the version.
)";

const char* kModelOptionsHelp = R"(Model options (for builtin: and config.json models):
  --batch N          sequences per step (default 8)
  --seq N            tokens per sequence (default: the model's context, at most 2048)
  --dtype bf16|fp32  parameter/activation type; bf16 keeps fp32 master weights (default bf16)
  --qkv fused|separate   one fused QKV projection or three (default fused)
  --train            for imported forward-only models (.hlo, .onnx): add backward and AdamW
)";

int fail(const Error& e) {
    std::cerr << "cfp: error: " << e.toString() << '\n';
    return e.code == "cli.usage" ? kExitUsage : kExitFailure;
}

OptionSpec modelOptionSpec() {
    OptionSpec spec;
    spec.valued = {"--batch", "--seq", "--dtype", "--qkv"};
    spec.flags = {"--help", "-h", "--train"};
    return spec;
}

Result<BuildOptions> buildOptionsFrom(const ParsedArgs& args) {
    BuildOptions opt;
    if (auto v = args.value("--batch")) {
        auto n = cli::parsePositive("--batch", *v);
        if (!n) return n.error();
        opt.batch = *n;
    }
    if (auto v = args.value("--seq")) {
        auto n = cli::parsePositive("--seq", *v);
        if (!n) return n.error();
        opt.seq = *n;
    }
    if (auto v = args.value("--dtype")) {
        if (*v == "bf16") opt.dtype = DType::BF16;
        else if (*v == "fp32" || *v == "f32") opt.dtype = DType::F32;
        else return makeError("cli.usage", "--dtype expects bf16 or fp32, got '" + *v + "'");
    }
    if (auto v = args.value("--qkv")) {
        if (*v == "fused") opt.qkv = QkvLayout::Fused;
        else if (*v == "separate") opt.qkv = QkvLayout::Separate;
        else return makeError("cli.usage", "--qkv expects fused or separate, got '" + *v + "'");
    }
    return opt;
}

// Parses MODEL and model options shared by describe/graph; `extra` adds command-specific options.
Result<LoadedModel> loadFromArgs(const ParsedArgs& args) {
    if (args.positionals.size() > 1)
        return makeError("cli.usage", "expected one MODEL, got " + std::to_string(args.positionals.size()));
    const std::string spec = args.positionals.empty() ? std::string(kDefaultModel) : args.positionals[0];
    auto opt = buildOptionsFrom(args);
    if (!opt) return opt.error();
    ImportOptions importOptions;
    if (args.has("--train")) importOptions.training = TrainingMode::AppendTraining;
    auto model = loadModel(spec, *opt, importOptions);
    if (!model) return model;
    // Imported models: say what the importer approximated (one line each, on stderr).
    for (const ImportNote& n : model->notes) std::cerr << "cfp: note: " << n.toString() << '\n';
    return model;
}

Json describeJson(const LoadedModel& m, const GraphStats& s) {
    Json j;
    j["model"] = m.graph.name();
    j["source"] = m.spec;
    j["source_kind"] = std::string(modelSourceKindName(m.kind));
    if (m.config) {
        j["family"] = std::string(modelFamilyName(m.config->family));
        j["layers"] = m.config->numLayers;
        j["hidden"] = m.config->hiddenSize;
    }
    if (m.options) {
        j["batch"] = m.options->batch;
        j["seq"] = m.options->seq;
        j["dtype"] = std::string(dtypeName(m.options->dtype));
    }
    j["ops"] = s.ops;
    j["ops_by_phase"] = {{"forward", s.opsByPhase[0]}, {"backward", s.opsByPhase[1]}, {"optimizer", s.opsByPhase[2]}};
    Json kinds = Json::object();
    for (const auto& [k, n] : s.opsByKind) kinds[k] = n;
    j["ops_by_kind"] = kinds;
    j["params"] = s.trainableParams;
    j["param_bytes"] = s.trainableParamBytes;
    j["optimizer_state_bytes"] = s.optimizerStateBytes;
    j["flops_per_step"] = s.flops;
    j["flops_by_phase"] = {{"forward", s.flopsByPhase[0]}, {"backward", s.flopsByPhase[1]}, {"optimizer", s.flopsByPhase[2]}};
    j["activation_bytes"] = s.activationBytes;
    j["build_seconds"] = m.loadSeconds;
    if (m.kind == ModelSourceKind::HloText || m.kind == ModelSourceKind::Onnx) {
        j["imported_training_step"] = m.hadBackward;
        j["training_appended"] = m.trainingAppended;
        Json notes = Json::array();
        for (const ImportNote& n : m.notes) notes.push_back({{"code", n.code}, {"message", n.message}, {"where", n.where}});
        j["import_notes"] = notes;
        Json sh = Json::object();
        for (const ShardingAnnotation& a : m.shardings) sh[a.op] = a.sharding;
        j["source_shardings"] = sh;
    }
    return j;
}

void printDescribe(const LoadedModel& m, const GraphStats& s) {
    using namespace cfp::cli;
    const std::string header = m.graph.name() + "  (" + m.spec + ")";
    std::cout << header << "\n\n";
    auto row = [](const std::string& label, const std::string& value) {
        std::printf("  %-22s %s\n", label.c_str(), value.c_str());
    };
    if (m.config) {
        const ModelConfig& c = *m.config;
        std::string shape = std::to_string(c.numLayers) + " layers, hidden " + std::to_string(c.hiddenSize) + ", " +
                            std::to_string(c.numHeads) + " heads";
        if (c.numKvHeads != c.numHeads) shape += " (" + std::to_string(c.numKvHeads) + " kv)";
        shape += ", ffn " + std::to_string(c.ffnSize) + ", vocab " + std::to_string(c.vocabSize);
        if (c.numExperts > 0)
            shape += ", " + std::to_string(c.numExperts) + " experts top-" + std::to_string(c.topK);
        row("architecture", std::string(modelFamilyName(c.family)) + ": " + shape);
    }
    if (m.options)
        row("step", "batch " + std::to_string(m.options->batch) + " x seq " + std::to_string(m.options->seq) + " = " +
                        withCommas(m.options->batch * m.options->seq) + " tokens, " +
                        std::string(dtypeName(m.options->dtype)));
    row("parameters", humanCount(static_cast<double>(s.trainableParams)) + " (" + withCommas(s.trainableParams) + ")");
    row("parameter memory", humanBytes(static_cast<double>(s.trainableParamBytes)) + " weights + " +
                                humanBytes(static_cast<double>(s.optimizerStateBytes)) + " optimizer state");
    row("ops", withCommas(s.ops) + "  (forward " + withCommas(s.opsByPhase[0]) + ", backward " +
                   withCommas(s.opsByPhase[1]) + ", optimizer " + withCommas(s.opsByPhase[2]) + ")");
    row("FLOPs per step", humanFlops(s.flops) + "  (forward " + humanFlops(s.flopsByPhase[0]) + ", backward " +
                              humanFlops(s.flopsByPhase[1]) + ", optimizer " + humanFlops(s.flopsByPhase[2]) + ")");
    row("activations", humanBytes(static_cast<double>(s.activationBytes)) + " saved for backward (unfused ops, no recomputation)");
    row("built in", fixed(m.loadSeconds * 1000.0, 1) + " ms");
    if (m.kind == ModelSourceKind::HloText || m.kind == ModelSourceKind::Onnx) {
        row("imported", std::string(modelSourceKindName(m.kind)) + ", " +
                            (m.trainingAppended ? "forward only; backward and AdamW added (--train)"
                             : m.hadBackward    ? "training step (phases inferred)"
                                                : "forward only (use --train for a training step)"));
        if (!m.shardings.empty()) {
            row("source shardings", std::to_string(m.shardings.size()) + " annotated op(s)");
            for (const ShardingAnnotation& a : m.shardings) std::printf("      %-30s %s\n", a.op.c_str(), a.sharding.c_str());
        }
    }
    std::cout << "\n  ops by kind:\n";
    for (const auto& [kind, n] : s.opsByKind) std::printf("    %-14s %10s\n", kind.c_str(), withCommas(n).c_str());
}


void printAnalysis(const LoadedModel& m, const AnalysisReport& r) {
    using namespace cfp::cli;
    const Graph& g = m.graph;
    std::cout << g.name() << " on mesh " << r.blocks.mesh.toString() << ": " << withCommas(g.size())
              << " ops, analysed in " << fixed(r.seconds * 1000.0, 1) << " ms\n\n";
    auto row = [](const std::string& label, const std::string& value) {
        std::printf("  %-22s %s\n", label.c_str(), value.c_str());
    };
    int64_t inBlocks = 0;
    for (const ParallelBlock& b : r.blocks.blocks) inBlocks += static_cast<int64_t>(b.members.size());
    std::map<int64_t, int64_t> hist;
    for (int64_t s : r.space.strategiesPerBlock) ++hist[s];
    std::string strategies;
    for (const auto& [s, n] : hist) strategies += (strategies.empty() ? "" : ", ") + std::to_string(n) + " with " + std::to_string(s);
    row("ParallelBlocks", withCommas(static_cast<int64_t>(r.blocks.blocks.size())) + "  (strategies: " + strategies + ")");
    row("block check", r.check.pass ? "pass (" + withCommas(r.check.edgesChecked) + " intra-block edges, no resharding)"
                                    : "FAIL: " + r.check.firstViolation);
    std::map<std::string, int64_t> reasons;
    for (const UnassignedOp& u : r.blocks.resolvedLater) ++reasons[std::string(unassignedReasonName(u.reason))];
    std::string later;
    for (const auto& [reason, n] : reasons) later += (later.empty() ? "" : ", ") + reason + " " + withCommas(n);
    row("ops covered", fixed(100.0 * r.coverage, 2) + "%  (" + withCommas(inBlocks) + " in blocks; resolved later: " +
                           (later.empty() ? "none" : later) + ")");
    row("unsupported ops", r.blocks.unsupported.empty() ? "none" : std::to_string(r.blocks.unsupported.size()));
    for (const UnsupportedOp& u : r.blocks.unsupported) std::printf("      %s (%s): %s\n", u.name.c_str(), u.kind.c_str(), u.message.c_str());
    std::cout << "\n  segments: " << r.cover.types.size() << " types, " << r.cover.segments.size() << " segments ("
              << coverQualityName(r.cover.quality) << " cover)\n";
    for (const RepeatRun& run : repeatRuns(r.cover)) {
        const SegmentType& t = r.cover.types[static_cast<size_t>(run.type)];
        std::printf("    T%-3d %2zu block%s x %-4d from block %-5d %s combinations\n", run.type, t.blockFingerprints.size(),
                    t.blockFingerprints.size() == 1 ? " " : "s", run.count, run.firstBlock,
                    t.combinations == INT64_MAX ? ("1e" + fixed(t.combinationsLog10, 1)).c_str()
                                                : withCommas(t.combinations).c_str());
    }
    std::cout << "\n  search space (log10):  op level " << fixed(r.space.opLevelLog10, 1) << ", block level "
              << fixed(r.space.blockLevelLog10, 1) << ", segment level " << fixed(r.space.segmentLevelLog10, 2) << "\n";
}

int cmdDescribe(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.flags.insert("--json");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp describe [MODEL] [options]\n\n"
                     "Builds (or reads) MODEL's training step and prints its size.\n\n"
                  << kModelOptionsHelp << "  --json             machine-readable output\n";
        return kExitOk;
    }
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    const GraphStats stats = computeStats(model->graph);
    if (args->has("--json")) {
        std::cout << describeJson(*model, stats).dump(2) << '\n';
    } else {
        printDescribe(*model, stats);
    }
    return kExitOk;
}

int cmdAnalyze(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--mesh", "--devices", "--gpus-per-node"});
    spec.flags.insert("--json");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp analyze [MODEL] [--mesh M] [options]\n\n"
                     "Finds ParallelBlocks (operator groups where one partition choice propagates with no\n"
                     "communication), checks them independently, folds repeated segments and reports the\n"
                     "search space.\n\n"
                     "  --mesh M           device mesh: 8, 2x4, or dp=2,tp=4 (default 8)\n"
                     "  --devices N        check the mesh uses exactly N devices\n"
                     "  --gpus-per-node G  for intra/inter-node link classes of mesh axes (default 8)\n"
                  << kModelOptionsHelp << "  --json             machine-readable output\n";
        return kExitOk;
    }
    const std::string meshText = args->value("--mesh").value_or("8");
    auto mesh = parseMesh(meshText);
    if (!mesh) return fail(mesh.error().withContext("--mesh"));
    if (auto v = args->value("--devices")) {
        auto n = cli::parsePositive("--devices", *v);
        if (!n) return fail(n.error());
        if (auto st = checkDeviceCount(*mesh, *n); !st) return fail(st.error().withContext("--mesh"));
    }
    int64_t gpusPerNode = 8;
    if (auto v = args->value("--gpus-per-node")) {
        auto n = cli::parsePositive("--gpus-per-node", *v);
        if (!n) return fail(n.error());
        gpusPerNode = *n;
    }
    auto linked = assignLinkClasses(*mesh, gpusPerNode);
    if (!linked) return fail(linked.error().withContext("--mesh"));
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    auto report = analyzeGraph(model->graph, *linked);
    if (!report) return fail(report.error());
    if (args->has("--json")) {
        std::cout << analysisToJson(model->graph, *report).dump(2) << '\n';
        return kExitOk;
    }
    printAnalysis(*model, *report);
    return kExitOk;
}

int cmdGraph(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert("-o");
    spec.valued.insert("--output");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp graph [MODEL] [options] -o FILE\n\n"
                     "Writes MODEL's training-step graph as native JSON (atomically), or as XLA HLO text when\n"
                     "FILE ends in .hlo. FILE '-' writes JSON to stdout.\n\n"
                  << kModelOptionsHelp;
        return kExitOk;
    }
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "graph needs -o FILE (or -o - for stdout)"));
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    const bool hlo = out->size() > 4 && out->compare(out->size() - 4, 4, ".hlo") == 0;
    if (*out == "-") {
        std::cout << writeGraphJson(model->graph);
        return kExitOk;
    }
    if (hlo) {
        if (auto st = writeFileAtomically(*out, writeHloText(model->graph)); !st) return fail(st.error());
    } else if (auto st = writeGraphFile(model->graph, *out); !st) {
        return fail(st.error());
    }
    std::cerr << "cfp: wrote " << model->graph.size() << " ops to " << *out << '\n';
    return kExitOk;
}

int cmdPresets(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp presets [--json]\n\nLists the built-in models (use them as builtin:NAME).\n";
        return kExitOk;
    }
    Json list = Json::array();
    for (const std::string& name : presetNames()) {
        auto c = presetConfig(name);
        if (!c) return fail(c.error());
        list.push_back({{"name", "builtin:" + name},
                        {"family", std::string(modelFamilyName(c->family))},
                        {"params", analyticParameterCount(*c)},
                        {"layers", c->numLayers},
                        {"hidden", c->hiddenSize}});
    }
    if (args->has("--json")) {
        std::cout << list.dump(2) << '\n';
        return kExitOk;
    }
    std::printf("  %-24s %-7s %7s %7s %12s\n", "model", "family", "layers", "hidden", "parameters");
    for (const auto& p : list)
        std::printf("  %-24s %-7s %7lld %7lld %12s\n", p["name"].get<std::string>().c_str(),
                    p["family"].get<std::string>().c_str(), static_cast<long long>(p["layers"].get<int64_t>()),
                    static_cast<long long>(p["hidden"].get<int64_t>()),
                    cli::humanCount(static_cast<double>(p["params"].get<int64_t>())).c_str());
    return kExitOk;
}

int cmdDevices(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp devices [--json]\n\nLists the GPUs the profiler can use. Exits 1 when there are none.\n";
        return kExitOk;
    }
    const auto backend = profiler::backendInfo();
    auto devices = profiler::discoverDevices();
    if (args->has("--json")) {
        Json j;
        j["backend_compiled"] = backend.compiled;
        j["backend"] = backend.description;
        j["devices"] = Json::array();
        if (devices) {
            for (const auto& d : *devices)
                j["devices"].push_back({{"index", d.index},
                                        {"name", d.name},
                                        {"memory_bytes", d.memoryBytes},
                                        {"sm_count", d.smCount},
                                        {"compute_capability", std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor)}});
        } else {
            j["error"] = devices.error().toString();
        }
        std::cout << j.dump(2) << '\n';
        return devices ? kExitOk : kExitFailure;
    }
    std::cout << "profiler backend: " << backend.description << '\n';
    if (!devices) return fail(devices.error());
    for (const auto& d : *devices)
        std::printf("  GPU %d  %-28s %s  %d SMs  sm_%d%d\n", d.index, d.name.c_str(),
                    cli::humanBytes(static_cast<double>(d.memoryBytes)).c_str(), d.smCount, d.computeMajor,
                    d.computeMinor);
    return kExitOk;
}

// Memory sizes: plain bytes or with a unit (GiB, GB, MiB, MB, KiB, KB).
Result<int64_t> parseBytes(const std::string& option, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!end || end == text.c_str() || !(v > 0) || !std::isfinite(v))
        return makeError("cli.usage", option + " expects a positive size such as 80GiB or 85899345920, got '" + text + "'");
    const std::string unit(end);
    double mult = 1;
    if (unit.empty() || unit == "B") mult = 1;
    else if (unit == "KiB") mult = 1024.0;
    else if (unit == "MiB") mult = 1024.0 * 1024.0;
    else if (unit == "GiB" || unit == "G") mult = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "TiB") mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    else if (unit == "KB") mult = 1e3;
    else if (unit == "MB") mult = 1e6;
    else if (unit == "GB") mult = 1e9;
    else if (unit == "TB") mult = 1e12;
    else return makeError("cli.usage", option + ": unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
    const double bytes = v * mult;
    if (bytes > 9.0e18) return makeError("cli.usage", option + " is too large: '" + text + "'");
    return static_cast<int64_t>(bytes);
}

// --hardware (default h100-sxm) and --nodes (default 1): the cluster plan and profile work on.
Result<Cluster> clusterFromArgs(const ParsedArgs& args) {
    auto hw = loadHardware(args.value("--hardware").value_or("h100-sxm"));
    if (!hw) return hw.error().withContext("--hardware");
    int64_t nodes = 1;
    if (auto v = args.value("--nodes")) {
        auto n = cli::parsePositive("--nodes", *v);
        if (!n) return n.error();
        nodes = *n;
    }
    return makeCluster(*hw, nodes);
}

std::string ms(double seconds) { return cli::fixed(seconds * 1e3, 1) + " ms"; }

Json costJson(const CostBreakdown& c) {
    return {{"seconds", c.total()},
            {"compute_seconds", c.computeSeconds},
            {"collective_seconds", c.collectiveSeconds},
            {"reshard_seconds", c.reshardSeconds},
            {"provenance", std::string(provenanceName(c.provenance))}};
}

Json planSummaryJson(const PlanOutcome& o, const Graph& graph) {
    const Plan& p = o.plan;
    Json j;
    j["model"] = graph.name();
    j["hardware"] = p.hardware;
    j["nodes"] = p.nodes;
    j["devices"] = p.mesh.deviceCount();
    j["mesh"] = p.mesh.toString();
    j["predicted_step_seconds"] = p.predictedStepSeconds;
    j["evaluator_step_seconds"] = p.evaluatorStepSeconds;
    j["step"] = costJson(p.step);
    j["memory_per_device_bytes"] = p.memory.total();
    j["memory_limit_bytes"] = p.memoryLimitBytes;
    int recomputedBlocks = 0;
    for (const BlockChoice& b : p.blocks) recomputedBlocks += b.recompute;
    j["memory_policy"] = {{"optimizer_sharding", p.policy.optimizerSharding},
                          {"recompute", std::string(recomputePolicyName(p.policy.recompute))},
                          {"recomputed_blocks", recomputedBlocks}};
    j["memory_breakdown_bytes"] = {{"weights", p.memory.weights},
                                   {"gradients", p.memory.gradients},
                                   {"optimizer", p.memory.optimizer},
                                   {"activations", p.memory.activations},
                                   {"transient", p.memory.transient}};
    Json segs = Json::array();
    for (const SegmentPlan& s : p.segments) {
        Json labels = Json::array();
        for (int k = 0; k < s.blockCount; ++k) labels.push_back(p.blocks[static_cast<size_t>(s.firstBlock + k)].label);
        Json c = costJson(s.cost);
        segs.push_back({{"index", s.index},
                        {"type", s.type},
                        {"first_block", s.firstBlock},
                        {"combination", s.combination},
                        {"labels", labels},
                        {"cost", c},
                        {"memory_bytes", s.memoryBytes}});
    }
    j["segments"] = segs;
    Json baselines = Json::object();
    Json details = Json::array();
    for (const Baseline& b : p.baselines) {
        baselines[b.name] = b.feasible ? Json(b.stepSeconds) : Json(nullptr);
        details.push_back({{"name", b.name},
                           {"description", b.description},
                           {"feasible", b.feasible},
                           {"fits", b.fits},
                           {"step_seconds", b.feasible ? Json(b.stepSeconds) : Json(nullptr)},
                           {"memory_per_device_bytes", b.feasible ? Json(b.memory.total()) : Json(nullptr)},
                           {"speedup_of_plan", b.feasible && p.evaluatorStepSeconds > 0 ? Json(b.stepSeconds / p.evaluatorStepSeconds) : Json(nullptr)},
                           {"note", b.note}});
    }
    j["baselines"] = baselines;
    j["baseline_details"] = details;
    Json cands = Json::array();
    for (const MeshCandidate& c : o.candidates)
        cands.push_back({{"mesh", c.mesh},
                         {"planned", c.planned},
                         {"step_seconds", c.planned ? Json(c.stepSeconds) : Json(nullptr)},
                         {"memory_bytes", c.planned ? Json(c.memoryBytes) : Json(nullptr)},
                         {"seconds", c.seconds},
                         {"note", c.note}});
    j["meshes_tried"] = cands;
    j["pins"] = p.pins;
    j["search_exact"] = p.searchExact;
    j["search_seconds"] = p.searchSeconds;
    return j;
}

void printPlan(const PlanOutcome& o, const Graph& graph) {
    const Plan& p = o.plan;
    std::cout << graph.name() << " on " << p.nodes << " x " << p.gpusPerNode << " " << p.hardwareName << ", mesh "
              << p.mesh.toString() << "\n\n";
    std::cout << "  step time        " << ms(p.evaluatorStepSeconds) << "  (compute " << ms(p.step.computeSeconds)
              << ", own collectives " << ms(p.step.collectiveSeconds) << ", resharding " << ms(p.step.reshardSeconds) << "; "
              << provenanceName(p.step.provenance) << ")\n";
    std::cout << "  search objective " << ms(p.predictedStepSeconds) << (p.searchExact ? "" : "  (not proven optimal under the memory limit)")
              << "\n";
    std::cout << "  memory/device    " << cli::humanBytes(static_cast<double>(p.memory.total())) << " of "
              << cli::humanBytes(static_cast<double>(p.memoryLimitBytes)) << "  (weights " << cli::humanBytes(static_cast<double>(p.memory.weights))
              << ", grads " << cli::humanBytes(static_cast<double>(p.memory.gradients)) << ", optimizer "
              << cli::humanBytes(static_cast<double>(p.memory.optimizer)) << ", activations "
              << cli::humanBytes(static_cast<double>(p.memory.activations)) << ", largest op "
              << cli::humanBytes(static_cast<double>(p.memory.transient)) << ")\n";
    int recomputed = 0;
    for (const BlockChoice& b : p.blocks) recomputed += b.recompute;
    std::cout << "  memory policy    optimizer sharding " << (p.policy.optimizerSharding ? "on" : "off") << ", recompute "
              << recomputePolicyName(p.policy.recompute) << " (" << recomputed << " of " << p.blocks.size()
              << " blocks recomputed)\n\n";
    std::cout << "  segments (runs of one type and combination; +rc: block recomputed):\n";
    size_t i = 0;
    while (i < p.segments.size()) {
        size_t j = i + 1;
        const SegmentPlan& s = p.segments[i];
        auto recomputes = [&](const SegmentPlan& seg) {
            std::vector<bool> r;
            for (int k = 0; k < seg.blockCount; ++k) r.push_back(p.blocks[static_cast<size_t>(seg.firstBlock + k)].recompute);
            return r;
        };
        while (j < p.segments.size() && p.segments[j].type == s.type && p.segments[j].combination == s.combination &&
               recomputes(p.segments[j]) == recomputes(s))
            ++j;
        std::string labels;
        for (int k = 0; k < s.blockCount; ++k) {
            const BlockChoice& b = p.blocks[static_cast<size_t>(s.firstBlock + k)];
            labels += (k ? " | " : "") + b.label + (b.recompute ? " +rc" : "");
        }
        std::cout << "    #" << i << (j - i > 1 ? "-" + std::to_string(j - 1) : std::string()) << "  T" << s.type << " x " << (j - i)
                  << "  " << ms(s.cost.total()) << " each  [" << labels << "]\n";
        i = j;
    }
    std::cout << "\n  baselines:\n";
    for (const Baseline& b : p.baselines) {
        std::cout << "    " << b.name << " (" << b.description << "): ";
        if (!b.feasible) std::cout << "not possible: " << b.note << "\n";
        else
            std::cout << ms(b.stepSeconds) << ", " << cli::humanBytes(static_cast<double>(b.memory.total())) << "/device"
                      << (b.fits ? "" : " — does not fit: " + b.note) << "; plan is " << cli::fixed(b.stepSeconds / p.evaluatorStepSeconds, 2)
                      << "x faster\n";
    }
    if (o.candidates.size() > 1) {
        std::cout << "\n  meshes tried:\n";
        for (const MeshCandidate& c : o.candidates)
            std::cout << "    " << c.mesh << ": " << (c.planned ? ms(c.stepSeconds) : "skipped — " + c.note) << "\n";
    }
    std::cout << "\n  planned in " << cli::fixed(p.searchSeconds, 2) << " s\n";
}

int cmdPlan(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--mesh", "--pin", "--memory-limit", "--recompute", "--optimizer-sharding", "-o", "--output",
                        "--db", "--db-fingerprint", "--threads"});
    spec.flags.insert({"--json", "--no-baselines", "--quiet", "--check-blocks"});
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp plan [MODEL] [--hardware H] [--nodes N] [--mesh auto|SHAPE] [--pin P]... [--memory-limit SIZE] [-o PLAN] [--json]\n\n"
                     "Finds the fastest plan that fits in memory: ParallelBlocks and segments on the mesh, the\n"
                     "analytic cost model, and the segment DP; recomputes it with the independent evaluator and\n"
                     "compares it with data-parallel and Megatron-style baselines.\n\n"
                     "  --hardware H       built-in spec (see `cfp hardware`) or a JSON file (default h100-sxm)\n"
                     "  --nodes N          nodes of the hardware's GPUs per node (default 1)\n"
                     "  --mesh M           auto (default: every 1–3 axis mesh aligned with nodes) or 8, 2x4, dp=2,tp=4\n"
                     "  --pin P            restrict the search; repeatable. SEG=COMBO pins segment SEG (index, or\n"
                     "                     T<k> for every segment of type k) to one strategy per block, e.g.\n"
                     "                     --pin 3=x:rows,x:cols,*,x:contract (';' between multi-axis labels);\n"
                     "                     bN=STRATEGY pins block N\n"
                     "  --memory-limit S   per-device memory, e.g. 40GiB (default: the GPU's HBM)\n"
                     "  --recompute R      activation recomputation per ParallelBlock: auto (default: the search\n"
                     "                     decides per block, only where memory needs it), none, or all\n"
                     "  --optimizer-sharding on|off\n"
                     "                     shard optimizer state and update over the axes a weight is replicated on\n"
                     "                     (ZeRO-1 / distributed optimizer; default on)\n"
                     "  -o PLAN            write the plan file (docs/plan-format.md), atomically\n"
                     "  --db FILE          use the measurements of a profile DB (cfp profile): measured GEMMs and the\n"
                     "                     calibrated model of the fingerprint profiled as --hardware\n"
                     "  --db-fingerprint K that fingerprint instead (see `cfp profile --list --db FILE`)\n"
                     "  --no-baselines     skip the baselines\n"
                     "  --threads N        worker threads for the block check, cost tables, search and evaluator\n"
                     "                     (default: CFP_THREADS, else every hardware thread); the plan is the same\n"
                     "  --check-blocks     also run the independent block check of `cfp analyze` on every mesh\n"
                     "                     (a violation fails that mesh); the evaluator checks the plan either way\n"
                     "  --quiet            no progress on stderr\n"
                  << kModelOptionsHelp << "  --json             machine-readable summary on stdout\n";
        return kExitOk;
    }
    auto cluster = clusterFromArgs(*args);
    if (!cluster) return fail(cluster.error());
    PlannerOptions options;
    if (auto v = args->value("--threads")) {
        auto t = cli::parsePositive("--threads", *v);
        if (!t) return fail(t.error());
        options.threads = static_cast<int>(std::min<int64_t>(*t, 1024));
    }
    options.pins = args->all("--pin");
    options.baselines = !args->has("--no-baselines");
    options.checkBlocks = args->has("--check-blocks");
    if (auto v = args->value("--memory-limit")) {
        auto b = parseBytes("--memory-limit", *v);
        if (!b) return fail(b.error());
        options.memoryLimitBytes = *b;
    }
    if (auto v = args->value("--recompute")) {
        auto r = parseRecomputePolicy(*v);
        if (!r) return fail(makeError("cli.usage", "--recompute: '" + *v + "' is not one of auto, none, all"));
        options.policy.recompute = *r;
    }
    if (auto v = args->value("--optimizer-sharding")) {
        if (*v != "on" && *v != "off") return fail(makeError("cli.usage", "--optimizer-sharding: '" + *v + "' is not on or off"));
        options.policy.optimizerSharding = *v == "on";
    }
    std::optional<profiler::PlanningMeasurements> profile;
    if (auto db = args->value("--db")) {
        auto pm = profiler::planningMeasurements(*db, args->value("--hardware").value_or("h100-sxm"), args->value("--db-fingerprint").value_or(""));
        if (!pm) return fail(pm.error().withContext("--db"));
        options.measured = pm->measured;
        options.calibration = pm->calibration;
        profile = std::move(*pm);
    } else if (args->value("--db-fingerprint")) {
        return fail(makeError("cli.usage", "--db-fingerprint needs --db FILE"));
    }
    const bool progress = !args->has("--quiet") && isatty(STDERR_FILENO);
    if (progress)
        options.progress = [](const PlanProgress& p) {
            std::fprintf(stderr, "\r\033[Kcfp: %s mesh %d/%d %s %3.0f%%", p.stage.c_str(), p.meshIndex + 1, p.meshCount,
                         p.mesh.c_str(), p.fraction * 100.0);
            std::fflush(stderr);
        };
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    auto outcome = planGraph(model->graph, *cluster, args->value("--mesh").value_or("auto"), options);
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (!outcome) return fail(outcome.error());
    outcome->plan.modelSource = model->spec;
    if (model->options) {
        outcome->plan.batch = model->options->batch;
        outcome->plan.seq = model->options->seq;
        outcome->plan.dtype = std::string(dtypeName(model->options->dtype));
        outcome->plan.qkv = model->options->qkv == QkvLayout::Separate ? "separate" : "fused";
    }
    outcome->plan.hardware = args->value("--hardware").value_or("h100-sxm");
    std::optional<std::string> out = args->value("-o");
    if (!out) out = args->value("--output");
    if (out) {
        if (auto st = writePlanFile(*out, outcome->plan, model->graph); !st) return fail(st.error());
    }
    int64_t measuredOps = 0, computingOps = 0;
    for (const CostBreakdown& c : outcome->evaluation.opCost) {
        if (c.computeSeconds != 0) ++computingOps;
        if (c.provenance == Provenance::Measured) ++measuredOps;
    }
    if (args->has("--json")) {
        Json j = planSummaryJson(*outcome, model->graph);
        if (profile)
            j["profile"] = {{"db", *args->value("--db")},
                            {"fingerprint", profile->hardware.key},
                            {"hardware_spec", profile->hardware.hardwareSpec},
                            {"simulated", profile->hardware.fingerprint.interconnect == "simulated"},
                            {"op_measurements", profile->measured.size()},
                            {"calibrated", !profile->calibration.empty()},
                            {"measured_ops_in_plan", measuredOps}};
        else
            j["profile"] = nullptr;
        std::cout << j.dump(2) << '\n';
    } else {
        printPlan(*outcome, model->graph);
        if (profile)
            std::cout << "  profile DB " << *args->value("--db") << ": " << profile->measured.size() << " measured ops, "
                      << (profile->calibration.empty() ? "no calibration" : "calibrated model") << " of '" << profile->hardware.key << "'"
                      << (profile->hardware.fingerprint.interconnect == "simulated" ? " (SIMULATED measurements)" : "") << "; "
                      << measuredOps << " of " << computingOps << " kernels in the plan measured\n";
        if (out) std::cout << "  plan written to " << *out << "\n";
    }
    return kExitOk;
}

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

int cmdProfile(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--mesh", "--db", "--types", "--calibrate", "--warmups", "--rounds", "--runs", "--abandon",
                        "--keep", "--processes", "--optimizer-sharding"});
    spec.flags.insert({"--json", "--new-db", "--no-reuse", "--simulate", "--quiet", "--list"});
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp profile [MODEL] --db FILE [--hardware H] [--nodes N] [--mesh SHAPE] [options]\n\n"
                     "Runs every segment type of MODEL under every block-strategy combination on the attached GPUs\n"
                     "(cuBLASLt GEMMs, memory-bound kernels, NCCL collectives on the mesh axes), calibrates the cost\n"
                     "model, and stores everything in the profile DB, keyed by the hardware fingerprint. Combinations\n"
                     "already in the DB are not measured again. `cfp plan --db FILE` then plans with the measurements.\n"
                     "Across nodes, start one rank per GPU: mpirun -np 16 -npernode 8 cfp profile … (docs/profiler.md).\n\n"
                     "  --db FILE          the profile DB (SQLite; created when missing)\n"
                     "  --new-db           start a new DB; an existing (or damaged) FILE is kept as FILE.old-…/.damaged-…\n"
                     "  --list             list the fingerprints stored in --db FILE and exit\n"
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
    if (!dbPath) return fail(makeError("cli.usage", "profile needs --db FILE (the profile DB to store measurements in)"));
    const std::string hwName = args->value("--hardware").value_or("h100-sxm");
    auto cluster = clusterFromArgs(*args);
    if (!cluster) return fail(cluster.error());
    profiler::SessionConfig config;
    config.cluster = *cluster;
    config.hardwareSpec = hwName;
    config.dbPath = *dbPath;
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
    if (json) std::cout << profileReportJson(*report).dump(2) << '\n';
    else printProfileReport(*report, config.modelName);
    if (report->cancelled) {
        std::cerr << "cfp: error: profile: cancelled; the " << report->results.size()
                  << " combinations finished before it are in the profile DB [profiler.cancelled]\n";
        return kExitFailure;
    }
    return kExitOk;
}

int cmdExport(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.valued = {"--format", "-o", "--output"};
    spec.flags = {"--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::string formats;
        for (const auto& f : exportFormatNames()) formats += (formats.empty() ? "" : ", ") + f;
        std::cout << "Usage: cfp export PLAN --format F -o FILE\n\n"
                     "Writes a plan (from `cfp plan -o PLAN`) for a training job. Formats: " << formats << ".\n"
                     "The model is rebuilt from the plan's model source and checked against the plan.\n"
                     "FILE '-' writes to stdout. See docs/exporters.md.\n";
        return kExitOk;
    }
    if (args->positionals.size() != 1) return fail(makeError("cli.usage", "export needs one PLAN file"));
    auto fmtText = args->value("--format");
    if (!fmtText) return fail(makeError("cli.usage", "export needs --format F"));
    auto format = parseExportFormat(*fmtText);
    if (!format) return fail(format.error());
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "export needs -o FILE (or -o - for stdout)"));
    auto plan = readPlanFile(args->positionals[0]);
    if (!plan) return fail(plan.error());
    BuildOptions opt;
    if (plan->batch > 0) opt.batch = plan->batch;
    if (plan->seq > 0) opt.seq = plan->seq;
    if (!plan->dtype.empty()) {
        auto dt = parseDType(plan->dtype);
        if (!dt) return fail(makeError("plan.format", "unknown dtype '" + plan->dtype + "'", "/model/dtype"));
        opt.dtype = *dt;
    }
    if (plan->qkv == "separate") opt.qkv = QkvLayout::Separate;
    auto model = loadModel(plan->modelSource, opt);
    if (!model) return fail(model.error().withContext("plan model '" + plan->modelSource + "'"));
    if (auto st = checkPlanAgainstGraph(*plan, model->graph); !st) return fail(st.error());
    std::vector<TimelineEvent> timeline;
    if (*format == ExportFormat::Trace) {
        auto hw = loadHardware(plan->hardware);
        if (!hw) return fail(hw.error().withContext("plan hardware"));
        auto cost = CostModel::create(*hw, plan->mesh);
        if (!cost) return fail(cost.error());
        auto ev = evaluatePlan(model->graph, *plan, *cost, true);
        if (!ev) return fail(ev.error());
        timeline = std::move(ev->timeline);
    }
    auto text = exportPlan(model->graph, *plan, *format, timeline);
    if (!text) return fail(text.error());
    if (*out == "-") {
        std::cout << *text;
        return kExitOk;
    }
    if (auto st = writeFileAtomically(*out, *text); !st) return fail(st.error());
    std::cerr << "cfp: wrote " << *fmtText << " export to " << *out << '\n';
    return kExitOk;
}

int cmdHardware(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp hardware [--json]\n\nLists the built-in hardware specs (docs/hardware-format.md).\n";
        return kExitOk;
    }
    Json list = Json::array();
    for (const std::string& name : hardwareNames()) {
        auto h = loadHardware(name);
        if (!h) return fail(h.error());
        list.push_back({{"id", h->id},
                        {"name", h->name},
                        {"memory_bytes", h->memoryBytes},
                        {"hbm_bytes_per_second", h->hbmBytesPerSecond},
                        {"bf16_flops", h->peakFlopsFor(DType::BF16)},
                        {"gpus_per_node", h->gpusPerNode},
                        {"intra_node", h->intraNode.name},
                        {"inter_node", h->interNode.name}});
    }
    if (args->has("--json")) {
        std::cout << list.dump(2) << '\n';
        return kExitOk;
    }
    for (const auto& h : list)
        std::printf("  %-16s %-28s %9s  %6.0f TFLOP/s bf16  %s per node\n", h["id"].get<std::string>().c_str(),
                    h["name"].get<std::string>().c_str(), cli::humanBytes(h["memory_bytes"].get<double>()).c_str(),
                    h["bf16_flops"].get<double>() / 1e12, std::to_string(h["gpus_per_node"].get<int64_t>()).c_str());
    return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kMainHelp;
        return args.empty() ? kExitUsage : kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "cfp " CFP_VERSION "\n";
        return kExitOk;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "describe") return cmdDescribe(args);
        if (command == "analyze") return cmdAnalyze(args);
        if (command == "graph") return cmdGraph(args);
        if (command == "presets") return cmdPresets(args);
        if (command == "plan") return cmdPlan(args);
        if (command == "export") return cmdExport(args);
        if (command == "hardware") return cmdHardware(args);
        if (command == "devices") return cmdDevices(args);
        if (command == "profile") return cmdProfile(args);
        if (command == "iopddl") return cli::runIopddlCommand(args);
    } catch (const std::bad_alloc&) {
        std::cerr << "cfp: error: out of memory while running '" << command << "' (try a smaller --batch/--seq)\n";
        return kExitFailure;
    }
    std::cerr << "cfp: error: unknown command '" << command << "' (see cfp --help) [cli.usage]\n";
    return kExitUsage;
}
