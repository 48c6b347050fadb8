#include "profiler/kernel_suite.h"

#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "cost/op_cost.h"
#include "plan/planner.h"
#include "plan/step_sim.h"
#include "profiler/calibration.h"
#include "stats/graph_stats.h"

namespace cfp::profiler {

std::string_view kernelGroupName(KernelGroup group) {
    switch (group) {
        case KernelGroup::Gemm: return "gemm";
        case KernelGroup::Memory: return "memory";
        case KernelGroup::Attention: return "attention";
    }
    return "?";
}

namespace {

std::string mibText(int64_t bytes) {
    char buf[48];
    if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0)
        std::snprintf(buf, sizeof buf, "%lld GiB", static_cast<long long>(bytes >> 30));
    else
        std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes >> 20));
    return buf;
}

std::string gemmText(const GemmShape& g) {
    std::string s = g.batch > 1 ? std::to_string(g.batch) + " x " : "";
    return s + std::to_string(g.m) + "x" + std::to_string(g.k) + " . " + std::to_string(g.k) + "x" + std::to_string(g.n);
}

// The attention core of layer `unit` under flash attention: its ops (on chip, or reading an
// on-chip value) and the shape of its Q·Kᵀ, its mask as the cost model reads it (OpRoles::flash).
struct Core {
    std::vector<char> member;
    AttentionShape shape;
    bool found = false;
};

Core attentionCore(const Graph& graph, const OpRoles& roles, const std::vector<int32_t>& units, int32_t unit) {
    Core c;
    c.member.assign(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (units[k] != unit || op.phase == Phase::Optimizer) continue;
        bool in = roles.onChip[k] != 0;
        for (OpId o : op.operands) in = in || roles.onChip[static_cast<size_t>(o)] != 0;
        if (!in) continue;
        c.member[k] = 1;
        // Q·Kᵀ: the forward matmul whose result is on chip and whose operands are not.
        if (!c.found && op.phase == Phase::Forward && op.kind == OpKind::Dot && roles.onChip[k] && op.operands.size() == 2 &&
            !roles.onChip[static_cast<size_t>(op.operands[0])] && !roles.onChip[static_cast<size_t>(op.operands[1])]) {
            const auto& d = op.attrs.dot;
            const auto& lhs = graph.op(op.operands[0]).type.dims;
            const auto& rhs = graph.op(op.operands[1]).type.dims;
            const GemmShape g = dotGemmShape(op, {lhs, rhs});
            c.shape.batch = d.lhsBatch.empty() ? 1 : lhs[static_cast<size_t>(d.lhsBatch.front())];
            c.shape.heads = c.shape.batch > 0 ? g.batch / c.shape.batch : 1;
            c.shape.seq = g.m;
            c.shape.keySeq = g.n;
            c.shape.headDim = g.k;
            c.shape.causal = roles.flash[k].causal;
            c.shape.dtype = op.type.dtype;
            c.found = true;
        }
    }
    return c;
}

}  // namespace

Result<std::vector<KernelCase>> kernelSuite(const Graph& graph, const HardwareSpec& hardware, const KernelSuiteOptions& options) {
    // One device: the graph's whole micro-batch, nothing split.
    HardwareSpec one = hardware;
    one.gpusPerNode = 1;
    const Cluster cluster{one, 1};
    auto parsed = parseMesh("dp=1", 1);
    if (!parsed) return parsed.error();
    auto mesh = assignLinkClasses(*parsed, 1);
    if (!mesh) return mesh.error();
    auto model = CostModel::create(one, *mesh);
    if (!model) return model.error();

    std::vector<KernelCase> out;
    const std::vector<int32_t> units = layerUnits(graph);
    const int32_t firstUnit = layerCount(units) > 0 ? 0 : -1;
    const OpRoles flash = opRoles(graph, AttentionKernel::Flash);

    // GEMMs: the first layer's and those outside the layers, each distinct shape once.
    std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int>> seen;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.kind != OpKind::Dot || op.operands.size() != 2 || op.phase == Phase::Optimizer) continue;
        if (units[k] != firstUnit && units[k] != -1) continue;
        const GemmShape g = dotGemmShape(op, {graph.op(op.operands[0]).type.dims, graph.op(op.operands[1]).type.dims});
        if (!seen.insert({g.batch, g.m, g.n, g.k, static_cast<int>(g.dtype)}).second) continue;
        bool attention = flash.onChip[k] != 0;
        for (OpId o : op.operands) attention = attention || flash.onChip[static_cast<size_t>(o)] != 0;
        KernelCase c;
        c.group = KernelGroup::Gemm;
        c.name = (op.scope.empty() ? op.name : op.scope) + " (" + std::string(phaseName(op.phase)) +
                 (attention ? ", attention as eager kernels" : "") + ")";
        c.gemm = g;
        c.shape = gemmText(g);
        c.reference = "matmul";
        c.work = gemmProbe(g, *model);
        c.work.combinationKey = c.work.label = "kernels:" + c.work.items.front().name;
        c.predictedSeconds = c.work.predictedSeconds;
        c.flops = g.flops();
        c.bytes = static_cast<double>(g.bytes());
        out.push_back(std::move(c));
    }
    if (out.empty()) return makeError("kernels.no_dots", "the graph '" + graph.name() + "' has no matmul to compare");

    // Streaming kernels.
    for (int64_t bytes : options.copyBytes) {
        KernelCase c;
        c.group = KernelGroup::Memory;
        c.name = "copy " + mibText(bytes) + " (read and write half each)";
        c.shape = std::to_string(bytes) + " B";
        c.reference = "copy";
        c.copyBytes = bytes;
        c.work = memoryProbe(bytes, *model);
        c.work.combinationKey = c.work.label = "kernels:" + c.work.items.front().name;
        c.predictedSeconds = c.work.predictedSeconds;
        c.bytes = static_cast<double>(bytes);
        out.push_back(std::move(c));
    }

    // The first layer's attention core as one fused kernel per direction, from the evaluator's
    // tasks of a one-device plan under each fused kernel (flash: the GPU's default; flash2).
    const Core core = attentionCore(graph, flash, units, firstUnit);
    for (AttentionKernel kernel : {AttentionKernel::Flash, AttentionKernel::Flash2}) {
        if (!core.found) break;
        RunConfig config;
        config.tp = 1;
        config.dp = 1;
        config.zero = 0;
        config.recompute = RecomputeMode::None;
        config.overlap = "off";
        PlannerOptions o;
        o.policy.attention = kernel;
        o.policy.accumulation = 1;
        auto planned = planConfigured(graph, cluster, config, o);
        if (!planned) return planned.error().withContext("kernels: the one-device plan");
        double forward = 0, backward = 0, flopsForward = 0, flopsBackward = 0;
        for (const SimTask& t : planned->evaluation.tasks) {
            if (t.kind != SimTaskKind::Compute || t.op == kNoOp || !core.member[static_cast<size_t>(t.op)]) continue;
            const Op& op = graph.op(t.op);
            const auto k = static_cast<size_t>(t.op);
            const double flops = op.kind == OpKind::Dot ? opFlops(graph, op) : 0.0;
            if (op.phase != Phase::Forward || t.again) {
                backward += t.seconds;
                flopsBackward += flops;
            } else if (flash.flashRecompute[k]) {
                // The task holds both runs (evaluator: kernelRepeats); the second is the backward's,
                // at the backward kernel's efficiency where the hardware has fused-attention curves.
                FlashMatmul matmul = flash.flash[k];  // the roles of Flash2 differ in this flag alone
                matmul.flash2 = kernel == AttentionKernel::Flash2;
                const auto first = op.kind == OpKind::Dot ? model->flashMatmulSeconds(op.type.dtype, flops, matmul, false) : std::nullopt;
                const double once = first ? *first : t.seconds / 2;
                forward += once;
                backward += t.seconds - once;
                flopsForward += flops;
                flopsBackward += flops;
            } else {
                forward += t.seconds;
                flopsForward += flops;
            }
        }
        const AttentionShape& a = core.shape;
        char shape[128];
        std::snprintf(shape, sizeof shape, "b%lld h%lld s%lld d%lld%s", static_cast<long long>(a.batch), static_cast<long long>(a.heads),
                      static_cast<long long>(a.seq), static_cast<long long>(a.headDim), a.causal ? " causal" : "");
        for (bool fwd : {true, false}) {
            KernelCase c;
            c.group = KernelGroup::Attention;
            c.name = "attention core, " + std::string(attentionKernelName(kernel)) + " (" +
                     std::string(fwd ? "forward" : "backward, scores recomputed") + ")";
            c.shape = shape;
            c.reference = fwd ? "sdpa_forward" : "sdpa_backward";
            c.backend = kernel == AttentionKernel::Flash2 ? "flash" : "cudnn";
            c.attention = a;
            c.predictedSeconds = fwd ? forward : backward;
            c.flops = fwd ? flopsForward : flopsBackward;
            out.push_back(std::move(c));
        }
    }
    return out;
}

}  // namespace cfp::profiler
