#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

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

std::string parallelismSummary(const Plan& plan, const Graph& graph) {
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
        if (pct >= 50)
            parts.push_back("tensor parallel " + std::to_string(axis.size) + " (" + axis.name + ", " + std::to_string(pct) + "% of the weights)");
        else
            parts.push_back(axis.name + " " + std::to_string(axis.size) + " splits activations" +
                            (pct > 0 ? " (and " + std::to_string(pct) + "% of the weights)" : std::string()));
    }
    if (!plan.policy.sequenceParallelAxis.empty()) parts.push_back("sequence parallel (" + plan.policy.sequenceParallelAxis + ")");
    if (plan.pipeline)
        parts.push_back("pipeline parallel " + std::to_string(plan.pipeline->stages) +
                        (plan.pipeline->chunksPerRank > 1 ? " × " + std::to_string(plan.pipeline->chunksPerRank) + " chunks" : std::string()) + " (" +
                        std::string(pipeScheduleName(plan.pipeline->schedule)) + ")");
    parts.push_back("ZeRO-" + std::to_string(zeroStageOf(plan.policy)));
    if (batch)
        parts.push_back("micro-batch " + std::to_string(batch->microBatch()) + " × " + std::to_string(batch->accumulation) + " round" +
                        (batch->accumulation == 1 ? "" : "s"));
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? " · " : "") + parts[i];
    return out;
}

}  // namespace cfp
