// `cfp describe`: the size of a model's training step.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "cost/op_cost.h"
#include "stats/graph_stats.h"

namespace cfp::cli {

namespace {

// Activations kept for backward as the planner counts them: fused kernels, flash attention.
int64_t fusedActivationBytes(const Graph& g) { return savedActivationBytes(g, opRoles(g, AttentionKernel::Flash)); }

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
    j["activation_bytes"] = fusedActivationBytes(m.graph);
    j["unfused_activation_bytes"] = s.activationBytes;
    j["build_seconds"] = m.loadSeconds;
    if (m.kind == ModelSourceKind::HloText || m.kind == ModelSourceKind::Onnx || m.kind == ModelSourceKind::StableHlo) {
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
    row("activations", humanBytes(static_cast<double>(fusedActivationBytes(m.graph))) +
                           " saved for backward (fused kernels, flash attention; " + humanBytes(static_cast<double>(s.activationBytes)) +
                           " as unfused ops), no recomputation or parallelism");
    row("built in", fixed(m.loadSeconds * 1000.0, 1) + " ms");
    if (m.kind == ModelSourceKind::HloText || m.kind == ModelSourceKind::Onnx || m.kind == ModelSourceKind::StableHlo) {
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

}  // namespace

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

}  // namespace cfp::cli
