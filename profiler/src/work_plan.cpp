#include "profiler/work_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

#include "cost/op_cost.h"
#include "segments/fingerprint.h"
#include "stats/graph_stats.h"

namespace cfp::profiler {

std::string_view workKindName(WorkKind kind) {
    switch (kind) {
        case WorkKind::Gemm: return "gemm";
        case WorkKind::Memory: return "memory";
        case WorkKind::Collective: return "collective";
    }
    return "?";
}

std::string combinationKey(const std::vector<int32_t>& combination) {
    std::string s;
    for (size_t i = 0; i < combination.size(); ++i) s += (i ? "," : "") + std::to_string(combination[i]);
    return s;
}

Result<std::vector<int32_t>> parseCombinationKey(const std::string& key) {
    std::vector<int32_t> out;
    size_t start = 0;
    while (start <= key.size()) {
        const size_t comma = key.find(',', start);
        const std::string part = key.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || !end || *end != '\0' || v < 0 || v > 1'000'000)
            return makeError("profiler.bad_combination", "combination '" + key + "' is not a list of strategy indices like 0,2,1");
        out.push_back(static_cast<int32_t>(v));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

double itemSeconds(const WorkItem& item, const CostModel& model) {
    switch (item.kind) {
        case WorkKind::Gemm: {
            const GemmGrid grid{static_cast<double>(item.gemm.batch), static_cast<double>(item.gemm.m), static_cast<double>(item.gemm.n)};
            return model.kernelSeconds(OpKind::Dot, item.gemm.dtype, item.flops, item.bytes, &grid);
        }
        case WorkKind::Memory: {
            double t = 0;
            for (const WorkItem::Part& p : item.parts) t += model.kernelSeconds(p.kind, p.dtype, p.flops, p.bytes);
            for (int64_t b : item.fusedTensorBytes) t -= model.fusedEdgeSavingSeconds(b);
            return t;
        }
        case WorkKind::Collective:
            return item.axis < 0 ? 0.0 : model.collectiveSeconds(item.collective, static_cast<size_t>(item.axis), item.messageBytes);
    }
    return 0.0;
}

namespace {

int64_t product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
    int64_t p = 1;
    for (int64_t d : which)
        if (d >= 0 && static_cast<size_t>(d) < dims.size()) p *= dims[static_cast<size_t>(d)];
    return p;
}

int64_t productExcept(const std::vector<int64_t>& dims, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    int64_t p = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
        const auto di = static_cast<int64_t>(d);
        if (std::find(a.begin(), a.end(), di) != a.end() || std::find(b.begin(), b.end(), di) != b.end()) continue;
        p *= dims[d];
    }
    return p;
}

std::string shapeText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
    return s + "]";
}

std::string mib(int64_t bytes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

struct UnionFind {
    std::vector<int32_t> parent;
    explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
    int32_t find(int32_t x) {
        while (parent[static_cast<size_t>(x)] != x) {
            parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
            x = parent[static_cast<size_t>(x)];
        }
        return x;
    }
    void unite(int32_t a, int32_t b) {
        a = find(a);
        b = find(b);
        if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
    }
};

}  // namespace

GemmShape dotGemmShape(const Op& dot, const std::vector<std::vector<int64_t>>& operandDims) {
    const auto& d = dot.attrs.dot;
    GemmShape g;
    g.dtype = dot.type.dtype;
    g.batch = product(operandDims.at(0), d.lhsBatch);
    g.k = product(operandDims[0], d.lhsContracting);
    g.m = productExcept(operandDims[0], d.lhsBatch, d.lhsContracting);
    g.n = productExcept(operandDims.at(1), d.rhsBatch, d.rhsContracting);
    return g;
}

struct SegmentCatalog::Impl {
    const Graph* g = nullptr;
    Mesh mesh;
    MemoryPolicy policy;
    std::optional<CostModel> model;
    std::optional<PlanProblem> problem;
    std::vector<TypeInfo> types;
    OpRoles roles;  // sources, uses, results read by backward, gradients only the optimizer reads
};

SegmentCatalog::SegmentCatalog() : m(std::make_unique<Impl>()) {}
SegmentCatalog::SegmentCatalog(SegmentCatalog&&) noexcept = default;
SegmentCatalog& SegmentCatalog::operator=(SegmentCatalog&&) noexcept = default;
SegmentCatalog::~SegmentCatalog() = default;

const Mesh& SegmentCatalog::mesh() const { return m->mesh; }
const CostModel& SegmentCatalog::model() const { return *m->model; }
const AnalysisReport& SegmentCatalog::analysis() const { return m->problem->analysis(); }
const std::vector<SegmentCatalog::TypeInfo>& SegmentCatalog::types() const { return m->types; }

Result<SegmentCatalog> SegmentCatalog::build(const Graph& graph, const HardwareSpec& hardware, const Mesh& mesh,
                                             const CostCalibration& calibration, MemoryPolicy policy) {
    SegmentCatalog c;
    c.m->g = &graph;
    c.m->mesh = mesh;
    policy.recompute = RecomputePolicy::None;
    // The profiler runs every op of a segment as the kernels it executes: attention cores op by
    // op (a fused flash kernel is not profiled yet), so its segments are priced eagerly.
    policy.attention = AttentionKernel::Eager;
    c.m->policy = policy;
    auto model = CostModel::create(hardware, mesh);
    if (!model) return model.error();
    model->setCalibration(calibration);
    c.m->model = std::move(*model);
    auto analysis = analyzeGraph(graph, mesh);
    if (!analysis) return analysis.error();
    ProblemOptions problemOptions;
    problemOptions.policy = policy;
    auto problem = PlanProblem::build(graph, std::move(*analysis), *c.m->model, {}, problemOptions);
    if (!problem) return problem.error();
    c.m->problem = std::move(*problem);

    // Sources and values computed from constants alone, as the evaluator folds them; what the
    // forward keeps, with the policy's loss kernel as the problem prices it.
    c.m->roles = opRoles(graph, policy.attention, policy.crossEntropy, policy.fusion);

    // Types: the representative segment of each, and a signature over what it executes.
    const AnalysisReport& a = c.m->problem->analysis();
    Plan plan0;
    c.m->problem->fillPlan(Assignment(a.blocks.blocks.size()), {}, plan0);
    for (const SegmentType& t : a.cover.types) {
        const Segment& seg = a.cover.segments[static_cast<size_t>(t.firstSegment)];
        TypeInfo info;
        info.type = t.id;
        info.firstBlock = seg.firstBlock;
        info.blockCount = seg.blockCount;
        info.occurrences = t.occurrences;
        info.combinations = t.combinations;
        Fnv1a64 h;
        h.bytes("cfp-segment-v1");
        h.bytes(mesh.toString());
        h.u64(policy.optimizerSharding ? 1 : 0);
        if (policy.fusion != KernelFusion::Compiled) h.bytes("eager kernels");  // other work, other measurements
        for (int b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; ++b) {
            const ParallelBlock& blk = a.blocks.blocks[static_cast<size_t>(b)];
            info.strategyCounts.push_back(static_cast<int>(blk.strategies.size()));
            std::vector<std::string> labels;
            for (const BlockStrategy& s : blk.strategies) labels.push_back(s.label);
            info.labels.push_back(std::move(labels));
            h.i64(static_cast<int64_t>(blk.strategies.size()));
        }
        for (uint64_t f : t.blockFingerprints) h.u64(f);
        // The ops the planner assigns to the segment beyond its members follow from the graph
        // around it: their kinds and types are part of what is executed.
        for (const TensorPlan& tp : plan0.tensors) {
            if (tp.block < seg.firstBlock || tp.block >= seg.firstBlock + seg.blockCount) continue;
            const Op& op = graph.op(tp.op);
            h.u64(static_cast<uint64_t>(op.kind));
            h.u64(static_cast<uint64_t>(op.type.dtype));
            for (int64_t d : op.type.dims) h.i64(d);
            h.i64(static_cast<int64_t>(op.operands.size()));
        }
        info.signature = h.value();
        info.name = "T" + std::to_string(t.id) + " (" + std::to_string(seg.blockCount) + (seg.blockCount == 1 ? " block" : " blocks") +
                    ", x" + std::to_string(t.occurrences) + ")";
        c.m->types.push_back(std::move(info));
    }
    return c;
}

std::vector<int32_t> SegmentCatalog::combination(int type, int64_t index) const {
    const TypeInfo& t = m->types.at(static_cast<size_t>(type));
    std::vector<int32_t> out(t.strategyCounts.size(), 0);
    for (size_t i = out.size(); i-- > 0;) {
        const int64_t radix = std::max(1, t.strategyCounts[i]);
        out[i] = static_cast<int32_t>(index % radix);
        index /= radix;
    }
    return out;
}

std::string SegmentCatalog::label(int type, const std::vector<int32_t>& combination) const {
    const TypeInfo& t = m->types.at(static_cast<size_t>(type));
    std::string s;
    for (size_t i = 0; i < combination.size() && i < t.labels.size(); ++i) {
        const auto& l = t.labels[i];
        const auto k = static_cast<size_t>(combination[i]);
        s += (i ? " | " : "") + (k < l.size() ? l[k] : std::string("?"));
    }
    return s;
}

double SegmentCatalog::predictSeconds(const SegmentWorkPlan& plan, const CostModel& model) const {
    double t = 0;
    for (const WorkItem& item : plan.items) t += itemSeconds(item, model);
    return t;
}

Result<SegmentWorkPlan> SegmentCatalog::workPlan(int type, const std::vector<int32_t>& combination) const {
    if (type < 0 || static_cast<size_t>(type) >= m->types.size())
        return makeError("profiler.bad_combination", "no segment type T" + std::to_string(type));
    const TypeInfo& info = m->types[static_cast<size_t>(type)];
    if (combination.size() != static_cast<size_t>(info.blockCount))
        return makeError("profiler.bad_combination", "segment type T" + std::to_string(type) + " has " + std::to_string(info.blockCount) +
                                                         " blocks, the combination " + std::to_string(combination.size()));
    for (size_t i = 0; i < combination.size(); ++i)
        if (combination[i] < 0 || combination[i] >= info.strategyCounts[i])
            return makeError("profiler.bad_combination", "block " + std::to_string(i) + " of T" + std::to_string(type) + " has no strategy " +
                                                             std::to_string(combination[i]));
    const Graph& graph = *m->g;
    const Mesh& mesh = m->mesh;
    const CostModel& model = *m->model;
    // Recomputation is off in the catalog's problem: a block's choice is its strategy.
    Assignment assignment(analysis().blocks.blocks.size());
    for (int i = 0; i < info.blockCount; ++i) assignment[static_cast<size_t>(info.firstBlock + i)].strategy = combination[static_cast<size_t>(i)];
    Plan plan;
    m->problem->fillPlan(assignment, {}, plan);

    SegmentWorkPlan w;
    w.segmentType = type;
    w.segmentSignature = info.signature;
    w.combination = combination;
    w.combinationKey = combinationKey(combination);
    w.label = label(type, combination);
    w.mesh = mesh.toString();

    const auto n = static_cast<size_t>(graph.size());
    // Optimizer-state sharding: the 1/r of the work an optimizer op does (cost/op_cost.h).
    const MemoryPolicy& policy = m->policy;
    const OpRoles& roles = m->roles;
    const MeshSizes& sizes = model.sizes();
    auto replicas = [&](const TensorSharding& sh) { return axesProduct(replicaMask(sh, mesh), sizes); };
    auto zeroSplit = [&](const Op& op) -> int64_t {
        return optimizerWorkSplit(op, roles.sourceLike[static_cast<size_t>(op.id)], replicas(plan.tensors[static_cast<size_t>(op.id)].result),
                                  policy);
    };
    auto inSegment = [&](OpId op) {
        const int32_t b = plan.tensors[static_cast<size_t>(op)].block;
        return b >= info.firstBlock && b < info.firstBlock + info.blockCount;
    };
    // A collective of op's own (cost/op_cost.h) as a work item; `what` names it in the item's name.
    auto collectiveItem = [&](const OpCollective& c, const Op& op, const std::string& what) {
        WorkItem item;
        item.kind = WorkKind::Collective;
        item.collective = c.kind;
        item.axis = static_cast<int>(c.axis);
        item.axisName = mesh.axes()[c.axis].name;
        item.axisSize = sizes.size[c.axis];
        item.messageBytes = c.bytes;
        item.dtype = op.type.dtype;
        item.ops = {op.id};
        item.name = std::string(collectiveKindName(c.kind)) + " over " + item.axisName + " (" + what + ", " + mib(c.bytes) + ")";
        item.predictedSeconds = itemSeconds(item, model);
        return item;
    };
    std::vector<OpId> ops;
    for (const Op& op : graph.ops())
        if (inSegment(op.id)) ops.push_back(op.id);

    // Fused groups among the segment's memory-bound ops (cost_model.h "Fusion").
    UnionFind groups(n);
    std::vector<std::vector<int64_t>> fusedBytes(n);  // per consumer op: bytes of each fused operand edge
    for (OpId v : ops) {
        const Op& op = graph.op(v);
        const TensorPlan& t = plan.tensors[static_cast<size_t>(v)];
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            if (!inSegment(u)) continue;
            const Op& producer = graph.op(u);
            const TensorSharding& have = plan.tensors[static_cast<size_t>(u)].result;
            if (have == t.operands[i] && fusesUnder(policy, roles.eagerFused, producer, op) && roles.uses[static_cast<size_t>(u)] == 1 &&
                !roles.sourceLike[static_cast<size_t>(u)] && !roles.view[static_cast<size_t>(u)] && !roles.view[static_cast<size_t>(v)]) {
                groups.unite(static_cast<int32_t>(u), static_cast<int32_t>(v));
                fusedBytes[static_cast<size_t>(v)].push_back(shardBytes(producer.type, have, mesh) / zeroSplit(op));
            }
        }
    }
    // Last op of each group: where the group's kernel is emitted.
    std::map<int32_t, OpId> groupLast;
    for (OpId v : ops)
        if (!roles.sourceLike[static_cast<size_t>(v)] && !roles.view[static_cast<size_t>(v)] && graph.op(v).kind != OpKind::Dot)
            groupLast[groups.find(static_cast<int32_t>(v))] = v;
    std::map<int32_t, WorkItem> open;  // groups being collected
    std::vector<WorkItem> weightGathers;  // optimizer-state sharding: updated weights, at the end

    for (OpId v : ops) {
        const Op& op = graph.op(v);
        const auto k = static_cast<size_t>(v);
        const TensorPlan& t = plan.tensors[k];
        // Resharding on edges from the segment's own ops.
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            if (!inSegment(u)) {
                ++w.boundaryEdges;
                continue;
            }
            const TensorSharding& have = plan.tensors[static_cast<size_t>(u)].result;
            if (have == t.operands[i]) continue;
            const Op& producer = graph.op(u);
            auto rp = planReshard(have, t.operands[i], mesh, producer.type);
            if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
            for (const CollectiveStep& s : rp->steps) {
                if (s.kind == CollectiveKind::LocalSlice || s.axisSize <= 1) continue;
                WorkItem item;
                item.kind = WorkKind::Collective;
                item.collective = s.kind;
                item.axis = static_cast<int>(mesh.axisIndex(s.axis).value_or(-1));
                item.axisName = s.axis;
                item.axisSize = s.axisSize;
                item.messageBytes = s.messageBytes;
                item.reshard = true;
                item.dtype = producer.type.dtype;
                item.ops = {v};
                item.name = std::string(collectiveKindName(s.kind)) + " over " + s.axis + " (" + producer.name + " -> " + op.name +
                            ", " + mib(s.messageBytes) + ")";
                item.predictedSeconds = itemSeconds(item, model);
                w.items.push_back(std::move(item));
            }
        }
        // The updated weight is all-gathered back from its 1/r pieces, after the step's other work
        // (optimizer-state sharding).
        forEachWeightGather(sizes, op, replicaMask(t.result, mesh), shardBytes(op.type, t.result, mesh), policy, [&](const OpCollective& c) {
            if (sizes.size[c.axis] > 1) weightGathers.push_back(collectiveItem(c, op, "updated " + op.name));
        });
        if (roles.sourceLike[k] || roles.view[k]) continue;  // an eager view: no kernel (cost/op_cost.h)
        ++w.ops;
        const auto z = zeroSplit(op);
        // Local flops and bytes, as the evaluator counts them.
        std::vector<std::string> axesUsed(t.ownCollectiveAxes.begin(), t.ownCollectiveAxes.end());
        auto addAxes = [&](const TensorSharding& s) {
            for (const auto& axes : s.dims())
                for (const auto& a : axes)
                    if (std::find(axesUsed.begin(), axesUsed.end(), a) == axesUsed.end()) axesUsed.push_back(a);
        };
        addAxes(t.result);
        const int64_t resultBytes = shardBytes(op.type, t.result, mesh);
        double bytes = static_cast<double>(resultBytes);
        int64_t operandBytes = 0;
        std::vector<std::vector<int64_t>> operandDims;
        std::vector<TensorType> operandTypes;
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const TensorType& type = graph.op(op.operands[i]).type;
            addAxes(t.operands[i]);
            const int64_t b = shardBytes(type, t.operands[i], mesh);
            bytes += static_cast<double>(b);
            operandBytes += b;
            operandDims.push_back(shardDims(type, t.operands[i], mesh));
            operandTypes.push_back(type);
        }
        double split = static_cast<double>(z);
        for (const auto& a : axesUsed) split *= static_cast<double>(mesh.axisSize(a).value_or(1));
        const double flops = opFlops(graph, op) / split;
        bytes /= static_cast<double>(z);
        const std::vector<int64_t> resultDims = shardDims(op.type, t.result, mesh);

        if (op.kind == OpKind::Dot && operandDims.size() == 2) {
            WorkItem item;
            item.kind = WorkKind::Gemm;
            item.ops = {v};
            item.flops = flops;
            item.bytes = bytes;
            item.gemm = dotGemmShape(op, operandDims);
            item.dtype = op.type.dtype;
            item.opSignature = opCostSignature(op, operandDims, operandTypes, resultDims);
            item.name = op.name + " dot " + std::string(dtypeName(op.type.dtype)) + " " + shapeText(operandDims[0]) + "." +
                        shapeText(operandDims[1]);
            item.predictedSeconds = itemSeconds(item, model);
            w.items.push_back(std::move(item));
        } else {
            const int32_t root = groups.find(static_cast<int32_t>(v));
            WorkItem& item = open[root];
            item.kind = WorkKind::Memory;
            item.ops.push_back(v);
            item.dtype = op.type.dtype;
            item.parts.push_back({op.kind, op.type.dtype, flops, bytes});
            item.flops += flops;
            item.readBytes += operandBytes / z;
            item.writeBytes += resultBytes / z;
            for (int64_t fb : fusedBytes[k]) {
                item.fusedTensorBytes.push_back(fb);
                item.readBytes -= fb;   // the consumer reads it from registers
                item.writeBytes -= fb;  // the producer never writes it
            }
            if (groupLast[root] == v) {
                item.bytes = static_cast<double>(item.readBytes + item.writeBytes);
                std::string kinds;
                std::vector<OpKind> seen;
                for (const WorkItem::Part& p : item.parts)
                    if (std::find(seen.begin(), seen.end(), p.kind) == seen.end()) {
                        seen.push_back(p.kind);
                        kinds += (kinds.empty() ? "" : "+") + std::string(opKindName(p.kind));
                    }
                item.name = item.ops.size() == 1 ? op.name + " " + kinds
                                                 : "fused " + kinds + " (" + std::to_string(item.ops.size()) + " ops, last " + op.name + ")";
                item.predictedSeconds = itemSeconds(item, model);
                w.items.push_back(std::move(item));
                open.erase(root);
            }
        }
        // The op's own all-reduce over each partial axis (message: its local result), or — a
        // gradient only the sharded optimizer reads — a reduce-scatter per axis, in mesh order,
        // each over what is left of the buffer.
        uint32_t partialMask = 0;
        for (const std::string& axis : t.ownCollectiveAxes)
            if (auto a = mesh.axisIndex(axis)) partialMask |= 1u << *a;
        forEachOwnCollective(sizes, partialMask, resultBytes, ownScatterMask(partialMask, scattersOwnResult(roles.gradToOptimizer[k], policy), -1, false),
                             [&](const OpCollective& c) { w.items.push_back(collectiveItem(c, op, op.name)); });
    }
    for (WorkItem& item : weightGathers) w.items.push_back(std::move(item));

    // Memory: the evaluator's per-device accounting restricted to the segment's ops.
    for (OpId v : ops) {
        const Op& op = graph.op(v);
        const int64_t own = shardBytes(op.type, plan.tensors[static_cast<size_t>(v)].result, mesh);
        if (op.kind == OpKind::Parameter) {
            w.persistentBytes += parameterMemory(op, own, replicas(plan.tensors[static_cast<size_t>(v)].result), policy).total();
            continue;
        }
        if (roles.sourceLike[static_cast<size_t>(v)]) continue;
        if (op.phase == Phase::Forward && roles.readByBackward[static_cast<size_t>(v)]) w.persistentBytes += own;
    }
    for (const WorkItem& item : w.items) {
        int64_t b = 0;
        switch (item.kind) {
            case WorkKind::Gemm: b = item.gemm.bytes(); break;
            case WorkKind::Memory: b = item.readBytes + item.writeBytes; break;
            case WorkKind::Collective: {
                const int64_t shard = item.messageBytes / std::max<int64_t>(1, item.axisSize);
                switch (item.collective) {
                    case CollectiveKind::AllReduce: b = item.messageBytes; break;
                    case CollectiveKind::AllGather:
                    case CollectiveKind::ReduceScatter: b = item.messageBytes + shard; break;
                    case CollectiveKind::AllToAll: b = 2 * shard; break;
                    case CollectiveKind::LocalSlice: break;
                }
                break;
            }
        }
        w.workspaceBytes = std::max(w.workspaceBytes, b);
        w.predictedSeconds += item.predictedSeconds;
        if (item.kind == WorkKind::Collective) w.predictedCommSeconds += item.predictedSeconds;
    }
    return w;
}

}  // namespace cfp::profiler
