#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "plan/pipeline_plan.h"
#include "stats/graph_stats.h"

namespace cfp {

std::string_view provenanceName(Provenance p) {
    switch (p) {
        case Provenance::Modelled: return "modelled";
        case Provenance::Measured: return "measured";
        case Provenance::Mixed: return "mixed";
    }
    return "modelled";
}

std::optional<PlanBatch> planBatch(const Plan& plan, const Graph& graph) {
    std::optional<PlanBatch> out;
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Input || op.type.rank() == 0) continue;
        out = PlanBatch{};
        out->round = op.type.dims[0];
        out->accumulation = plan.policy.accumulation;
        break;
    }
    if (!out || plan.tensors.size() != static_cast<size_t>(graph.size())) return out;
    // The widest split of the batch dimension over the forward pass's results (a data input may
    // stay replicated, e.g. token ids read by a vocabulary-parallel embedding).
    for (const Op& op : graph.ops()) {
        if (op.phase != Phase::Forward || op.type.rank() == 0 || op.type.dims[0] != out->round) continue;
        const auto& dims = plan.tensors[static_cast<size_t>(op.id)].result.dims();
        if (dims.empty()) continue;
        int64_t split = 1;
        for (const std::string& axis : dims[0]) split *= plan.mesh.axisSize(axis).value_or(1);
        if (split > out->dataParallel) {
            out->dataParallel = split;
            out->dataParallelAxes = dims[0];
        }
    }
    return out;
}

std::optional<PlanThroughput> planThroughput(const Plan& plan, const Graph& graph, const HardwareSpec& hardware) {
    const double step = plan.stepSeconds();
    const std::optional<PlanBatch> batch = planBatch(plan, graph);
    if (!(step > 0) || !batch) return std::nullopt;
    PlanThroughput t;
    t.devices = plan.nodes * plan.gpusPerNode;
    if (t.devices <= 0) t.devices = plan.mesh.deviceCount();
    t.sequencesPerSecond = static_cast<double>(batch->global()) / step;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Parameter && op.role == ParamRole::Input && op.type.rank() == 2 && !isFloating(op.type.dtype)) {
            t.tokensPerSecond = t.sequencesPerSecond * static_cast<double>(op.type.dims[1]);
            break;
        }
    // The matmuls' FLOPs by element type (a bf16 model's dots run at bf16 peak).
    std::map<DType, double> byType;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Dot && (op.phase == Phase::Forward || op.phase == Phase::Backward))
            byType[graph.op(op.operands[0]).type.dtype] += opFlops(graph, op);
    double peakSeconds = 0;  // the step's model FLOPs at peak on one device
    for (const auto& [dtype, flops] : byType) {
        t.modelFlopsPerStep += flops * static_cast<double>(batch->accumulation);
        if (const double peak = hardware.peakFlopsFor(dtype); peak > 0) peakSeconds += flops * static_cast<double>(batch->accumulation) / peak;
    }
    t.mfu = peakSeconds / (step * static_cast<double>(t.devices));
    return t;
}

namespace {

// 63412.4 -> "63,412"; below 100 with one decimal.
std::string grouped(double v) {
    if (v < 100) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f", v);
        return text;
    }
    std::string digits = std::to_string(std::llround(v));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
    return digits;
}

}  // namespace

std::string throughputText(const PlanThroughput& t) {
    const bool tokens = t.tokensPerSecond > 0;
    const double rate = tokens ? t.tokensPerSecond : t.sequencesPerSecond;
    std::string out = grouped(rate) + (tokens ? " tokens/s" : " sequences/s");
    if (t.devices > 1) out += " (" + grouped(rate / static_cast<double>(t.devices)) + " per GPU)";
    char mfu[96];
    const double f = t.modelFlopsPerStep;
    const char* unit = f >= 1e15 ? "PFLOP" : f >= 1e12 ? "TFLOP" : "GFLOP";
    const double scaled = f >= 1e15 ? f / 1e15 : f >= 1e12 ? f / 1e12 : f / 1e9;
    std::snprintf(mfu, sizeof mfu, " · MFU %.1f%% (%.3g %s of matmuls per step)", t.mfu * 100.0, scaled, unit);
    return out + mfu;
}

std::vector<std::string> tokenSequenceAxes(const Plan& plan, const Graph& graph) {
    std::vector<std::string> axes;
    if (plan.tensors.size() != static_cast<size_t>(graph.size())) return axes;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Parameter && op.role == ParamRole::Input && op.type.rank() >= 2)
            for (const std::string& a : plan.tensors[static_cast<size_t>(op.id)].result.dimAxes(1))
                if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
    return axes;
}

std::string parallelismSummary(const Plan& plan, const Graph& graph, bool withPolicy) {
    const Mesh& mesh = plan.mesh;
    const std::optional<PlanBatch> batch = planBatch(plan, graph);
    const std::vector<std::string> batchAxes = batch ? batch->dataParallelAxes : std::vector<std::string>{};
    // Trainable weight bytes split over each axis.
    std::map<std::string, double> weightShare;
    double weightBytes = 0;
    if (plan.tensors.size() == static_cast<size_t>(graph.size())) {
        for (const Op& op : graph.ops()) {
            if (op.kind != OpKind::Parameter || op.role != ParamRole::Trainable) continue;
            const double bytes = static_cast<double>(op.type.bytes());
            weightBytes += bytes;
            for (const auto& axes : plan.tensors[static_cast<size_t>(op.id)].result.dims())
                for (const std::string& a : axes) weightShare[a] += bytes;
        }
    }
    auto sizeOf = [&](const std::vector<std::string>& axes) {
        int64_t n = 1;
        for (const std::string& a : axes) n *= mesh.axisSize(a).value_or(1);
        return n;
    };
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s;
    };
    const std::vector<std::string> sequenceAxes = tokenSequenceAxes(plan, graph);
    std::vector<std::string> parts;
    std::vector<std::string> dpAxes;
    for (const std::string& a : batchAxes)
        if (mesh.axisSize(a).value_or(1) > 1) dpAxes.push_back(a);
    if (!dpAxes.empty()) {
        // A data-parallel axis that also splits weights (an embedding or head split over it).
        std::vector<std::string> alsoWeights;
        for (const std::string& a : dpAxes) {
            const int pct = weightBytes > 0 ? static_cast<int>(std::lround(weightShare[a] / weightBytes * 100)) : 0;
            if (pct > 0) alsoWeights.push_back(a + " " + std::to_string(pct) + "%");
        }
        parts.push_back("data parallel " + std::to_string(sizeOf(dpAxes)) + " (" + join(dpAxes) +
                        (alsoWeights.empty() ? std::string() : "; weights split too: " + join(alsoWeights)) + ")");
    }
    for (const MeshAxis& axis : mesh.axes()) {
        if (axis.size <= 1 || std::find(dpAxes.begin(), dpAxes.end(), axis.name) != dpAxes.end()) continue;
        const double share = weightBytes > 0 ? weightShare[axis.name] / weightBytes : 0.0;
        const int pct = static_cast<int>(std::lround(share * 100));
        // Tensor parallel when the axis splits most of the weights; else it splits activations
        // (sequence, heads) and at most a few weights.
        if (std::find(sequenceAxes.begin(), sequenceAxes.end(), axis.name) != sequenceAxes.end() && pct < 50)
            parts.push_back("context parallel " + std::to_string(axis.size) + " (" + axis.name + ": the sequence split" +
                            (pct > 0 ? ", and " + std::to_string(pct) + "% of the weights" : std::string()) +
                            (axis.name == kContextParallelAxis ? (plan.policy.contextRing ? "; keys and values in a ring beside the attention"
                                                                                           : "; keys and values all-gathered")
                                                               : std::string()) +
                            ")");
        else if (pct >= 50)
            parts.push_back("tensor parallel " + std::to_string(axis.size) + " (" + axis.name + ", " + std::to_string(pct) + "% of the weights)");
        else
            parts.push_back(axis.name + " " + std::to_string(axis.size) + " splits activations" +
                            (pct > 0 ? " (and " + std::to_string(pct) + "% of the weights)" : std::string()));
    }
    if (!plan.policy.sequenceParallelAxis.empty()) parts.push_back("sequence parallel (" + plan.policy.sequenceParallelAxis + ")");
    if (plan.pipeline)
        parts.push_back("pipeline parallel " + std::to_string(plan.pipeline->stages) + pipelineChunksText(*plan.pipeline) + " (" +
                        std::string(pipeScheduleName(plan.pipeline->schedule)) + ")");
    if (withPolicy) parts.push_back("ZeRO-" + std::to_string(zeroStageOf(plan.policy)));
    if (batch && withPolicy)
        parts.push_back("micro-batch " + std::to_string(batch->microBatch()) + " × " + std::to_string(batch->accumulation) + " round" +
                        (batch->accumulation == 1 ? "" : "s"));
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? " · " : "") + parts[i];
    return out;
}

}  // namespace cfp
