#include "plan/unaligned.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "cost/cost_model.h"
#include "cost/op_cost.h"

namespace cfp {

std::optional<UnalignedGemms> planUnalignedGemms(const Plan& plan, const Graph& graph, const HardwareSpec& hardware) {
    if (!(hardware.gemmUnalignedEfficiency > 0) || plan.tensors.size() != static_cast<size_t>(graph.size())) return std::nullopt;
    auto model = CostModel::create(hardware, plan.mesh);
    HardwareSpec plain = hardware;
    plain.gemmUnalignedEfficiency = 0;
    auto aligned = CostModel::create(plain, plan.mesh);
    if (!model || !aligned) return std::nullopt;
    UnalignedGemms u;
    u.stepSeconds = plan.stepSeconds();
    std::set<int64_t> dims;
    const double rounds = static_cast<double>(std::max<int64_t>(1, plan.policy.accumulation));
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Dot || op.operands.size() != 2 || (op.phase != Phase::Forward && op.phase != Phase::Backward)) continue;
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        if (t.operands.size() != 2) continue;
        const std::vector<int64_t> result = shardDims(op.type, t.result, plan.mesh);
        const std::vector<int64_t> lhs = shardDims(graph.op(op.operands[0]).type, t.operands[0], plan.mesh);
        const std::optional<GemmGrid> grid = gemmGridOf(graph, op, result);
        if (!grid) continue;
        double k = 1;
        for (int64_t c : op.attrs.dot.lhsContracting) k *= static_cast<double>(lhs.at(static_cast<size_t>(c)));
        const double flops = 2.0 * grid->batch * grid->m * grid->n * k;
        const std::vector<int64_t> odd = gemmUnalignedDims(*grid, flops, op.type.dtype);
        if (odd.empty()) continue;
        u.vector = gemmAlignment(op.type.dtype);
        u.dtype = op.type.dtype;
        dims.insert(odd.begin(), odd.end());
        double bytes = static_cast<double>(shardBytes(op.type, t.result, plan.mesh));
        for (size_t i = 0; i < 2; ++i) bytes += static_cast<double>(shardBytes(graph.op(op.operands[i]).type, t.operands[i], plan.mesh));
        ++u.kernels;
        u.seconds += rounds * model->kernelSeconds(OpKind::Dot, op.type.dtype, flops, bytes, &*grid);
        u.alignedSeconds += rounds * aligned->kernelSeconds(OpKind::Dot, op.type.dtype, flops, bytes, &*grid);
    }
    if (u.kernels == 0) return std::nullopt;
    u.dims.assign(dims.begin(), dims.end());
    return u;
}

std::string unalignedGemmsText(const UnalignedGemms& u) {
    std::string dims;
    for (size_t i = 0; i < u.dims.size(); ++i) dims += (i ? (i + 1 == u.dims.size() ? " and " : ", ") : "") + std::to_string(u.dims[i]);
    const int64_t first = u.dims.empty() ? 0 : u.dims.front();
    const int64_t padded = (first + 127) / 128 * 128;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%lld GEMM%s per round %s a dimension of %s, not a multiple of %lld %s values: %.1f ms of the %.1f ms step; "
                  "padded to a multiple of 128 (%lld) about %.1f ms",
                  static_cast<long long>(u.kernels), u.kernels == 1 ? "" : "s", u.kernels == 1 ? "has" : "have", dims.c_str(),
                  static_cast<long long>(u.vector), std::string(dtypeName(u.dtype)).c_str(), u.seconds * 1e3, u.stepSeconds * 1e3, static_cast<long long>(padded), u.alignedSeconds * 1e3);
    return buf;
}

}  // namespace cfp
