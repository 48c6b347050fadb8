// `cfp`: the headless command-line tool over the CFP Explorer core.
//
// Exit codes: 0 success, 1 the input or the work failed (a one-line error on stderr),
// 2 usage error (unknown command or option).

#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "args.h"
#include "format.h"
#include "io/graph_json.h"
#include "loader/model_loader.h"
#include "profiler/profiler.h"
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
  presets          list the built-in models
  devices          list the GPUs the profiler can use, or say why there are none

MODEL is builtin:NAME (see `cfp presets`), a Hugging-Face-style config.json, or a native graph
file. The default model is )" "builtin:gpt3-1.3b" R"(.

Run `cfp <command> --help` for a command's options. `cfp --version` prints the version.
)";

const char* kModelOptionsHelp = R"(Model options (for builtin: and config.json models):
  --batch N          sequences per step (default 8)
  --seq N            tokens per sequence (default: the model's context, at most 2048)
  --dtype bf16|fp32  parameter/activation type; bf16 keeps fp32 master weights (default bf16)
  --qkv fused|separate   one fused QKV projection or three (default fused)
)";

int fail(const Error& e) {
    std::cerr << "cfp: error: " << e.toString() << '\n';
    return e.code == "cli.usage" ? kExitUsage : kExitFailure;
}

OptionSpec modelOptionSpec() {
    OptionSpec spec;
    spec.valued = {"--batch", "--seq", "--dtype", "--qkv"};
    spec.flags = {"--help", "-h"};
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
    return loadModel(spec, *opt);
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
                     "Writes MODEL's training-step graph as native JSON (atomically). FILE '-' writes to stdout.\n\n"
                  << kModelOptionsHelp;
        return kExitOk;
    }
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "graph needs -o FILE (or -o - for stdout)"));
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    if (*out == "-") {
        std::cout << writeGraphJson(model->graph);
        return kExitOk;
    }
    if (auto st = writeGraphFile(model->graph, *out); !st) return fail(st.error());
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
        if (command == "devices") return cmdDevices(args);
    } catch (const std::bad_alloc&) {
        std::cerr << "cfp: error: out of memory while running '" << command << "' (try a smaller --batch/--seq)\n";
        return kExitFailure;
    }
    std::cerr << "cfp: error: unknown command '" << command << "' (see cfp --help) [cli.usage]\n";
    return kExitUsage;
}
