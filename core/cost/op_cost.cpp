#include "cost/op_cost.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "stats/graph_stats.h"
#include "util/max_flow.h"

namespace cfp {

namespace {

// An op a fused kernel can run (and its backward kernel recompute): elementwise, broadcast, layout
// and reduction ops.
bool fusedInKernel(OpKind k) { return (isFusibleKind(k) && k != OpKind::Iota) || k == OpKind::Reduce; }

bool rowWise(OpKind k) {
    return isElementwise(k) || k == OpKind::Broadcast || k == OpKind::Reduce || k == OpKind::Convert;
}

// Grows `marked` by the ops `eligible` admits that are connected to a marked op, through an operand
// or a consumer of the same dims, until nothing changes (the backward ops of a core).
template <class Eligible>
void growToBackward(const Graph& graph, std::vector<char>& marked, Eligible eligible) {
    for (bool changed = true; changed;) {
        changed = false;
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            for (OpId o : op.operands) {
                const auto ko = static_cast<size_t>(o);
                if (marked[k] == marked[ko] || op.type.dims != graph.op(o).type.dims) continue;
                const size_t next = marked[k] ? ko : k;
                if (eligible(graph.ops()[next])) marked[next] = changed = true;
            }
        }
    }
}

// Attention cores (op_cost.h): marks r.onChip and r.flashRecompute.
void findAttentionCores(const Graph& graph, OpRoles& r, bool flash2) {
    const auto n = static_cast<size_t>(graph.size());
    const std::vector<char> activation = dataDerived(graph);
    auto activationDot = [&](const Op& op) {
        if (op.kind != OpKind::Dot || op.phase != Phase::Forward || op.operands.size() != 2) return false;
        return activation[static_cast<size_t>(op.operands[0])] && activation[static_cast<size_t>(op.operands[1])];
    };
    std::vector<OpId> stack, region;
    std::vector<char> seen(n, 0);
    std::vector<std::vector<int64_t>> coreDims;  // S's dims per core found
    std::vector<FlashMatmul> coreInfo;           // and what its matmuls are priced at
    for (const Op& d2 : graph.ops()) {
        if (!activationDot(d2)) continue;
        for (OpId start : d2.operands) {
            // Row-wise ancestors of the operand, up to a matmul of two activations (D1).
            region.clear();
            stack.assign(1, start);
            OpId d1 = kNoOp;
            bool ok = true;
            while (!stack.empty() && ok) {
                const OpId v = stack.back();
                stack.pop_back();
                const auto k = static_cast<size_t>(v);
                if (seen[k] || r.sourceLike[k]) continue;
                seen[k] = 1;
                region.push_back(v);
                const Op& op = graph.op(v);
                if (activationDot(op)) {
                    if (d1 != kNoOp && d1 != v) ok = false;
                    d1 = v;
                    continue;
                }
                if (op.phase != Phase::Forward || !rowWise(op.kind)) {
                    ok = false;
                    break;
                }
                for (OpId o : op.operands) stack.push_back(o);
            }
            for (OpId v : region) seen[static_cast<size_t>(v)] = 0;
            if (!ok || d1 == kNoOp) continue;
            const std::vector<int64_t>& dims = graph.op(d1).type.dims;
            if (dims != graph.op(start).type.dims) continue;
            FlashMatmul info;
            info.seq = dims.empty() ? 0 : dims.back();
            info.flash2 = flash2;
            info.headDim = 1;
            const Op& qk = graph.op(d1);
            for (int64_t c : qk.attrs.dot.lhsContracting) info.headDim *= graph.op(qk.operands[0]).type.dims[static_cast<size_t>(c)];
            for (OpId v : region) {
                const Op& op = graph.op(v);
                // A mask from positions alone (iota, constants): causal.
                if (op.kind == OpKind::Select && !op.operands.empty() && r.sourceLike[static_cast<size_t>(op.operands[0])]) info.causal = true;
                if (op.type.dims == dims) {
                    r.onChip[static_cast<size_t>(v)] = 1;
                    r.flashRecompute[static_cast<size_t>(v)] = 1;
                }
            }
            coreDims.push_back(dims);
            coreInfo.push_back(info);
        }
    }
    if (coreDims.empty()) return;
    // The backward ops of a core's shape connected to it, through operands or consumers.
    auto coreShaped = [&](const Op& op) {
        if (op.phase != Phase::Backward || r.sourceLike[static_cast<size_t>(op.id)]) return false;
        for (const auto& d : coreDims)
            if (op.type.dims == d) return true;
        return false;
    };
    growToBackward(graph, r.onChip, coreShaped);
    // The core's matmuls, forward and backward: an on-chip result or operand of a core's shape.
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Dot) continue;
        const auto k = static_cast<size_t>(op.id);
        const std::vector<int64_t>* chip = r.onChip[k] ? &op.type.dims : nullptr;
        for (OpId o : op.operands)
            if (!chip && r.onChip[static_cast<size_t>(o)]) chip = &graph.op(o).type.dims;
        if (!chip) continue;
        for (size_t c = 0; c < coreDims.size(); ++c)
            if (coreDims[c] == *chip) {
                r.flash[k] = coreInfo[c];
                r.flash[k].recomputed = r.flashRecompute[k] != 0;
                break;
            }
    }
}

// Saved activations of fused kernels (op_cost.h, "Saved for backward"): the least bytes of forward
// results to keep so that every forward value a backward op reads is kept or recomputable from
// kept ones by fusible ops. A minimum vertex cut: each forward tensor v is an edge in(v) → out(v)
// of capacity bytes(v); a fusible v hangs from its operands (out(u) → in(v)), anything else from
// the source; a value read by a backward op hangs the sink (out(v) → sink), and a value a GEMM or
// another non-fusible backward kernel reads hangs from the source as well (it must be kept itself).
std::vector<char> fusedSavedSet(const Graph& graph, const OpRoles& r, const std::vector<char>& readByBackward) {
    const auto n = static_cast<size_t>(graph.size());
    auto node = [&](OpId v) {
        const auto k = static_cast<size_t>(v);
        return graph.op(v).phase == Phase::Forward && !r.sourceLike[k] && !r.onChip[k];
    };
    std::vector<char> keptByKernel(n, 0);  // read by a backward op that cannot recompute it
    for (const Op& op : graph.ops()) {
        if (op.phase != Phase::Backward) continue;
        const bool recomputes = fusedInKernel(op.kind) && !r.onChip[static_cast<size_t>(op.id)];
        if (!recomputes)
            for (OpId o : op.operands) keptByKernel[static_cast<size_t>(o)] = 1;
    }
    std::vector<int32_t> index(n, -1);
    int32_t nodes = 0;
    for (const Op& op : graph.ops())
        if (node(op.id)) index[static_cast<size_t>(op.id)] = nodes++;
    MaxFlow flow(2 * nodes + 2);
    const int32_t source = 2 * nodes, sink = 2 * nodes + 1;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (index[k] < 0) continue;
        const int32_t in = 2 * index[k], out = in + 1;
        flow.addEdge(in, out, op.type.bytes());
        bool recomputable = fusedInKernel(op.kind);
        for (OpId o : op.operands)
            if (!r.sourceLike[static_cast<size_t>(o)] && index[static_cast<size_t>(o)] < 0) recomputable = false;
        if (recomputable && !keptByKernel[k]) {
            for (OpId o : op.operands)
                if (index[static_cast<size_t>(o)] >= 0) flow.addEdge(2 * index[static_cast<size_t>(o)] + 1, in, MaxFlow::kInfinity);
        } else {
            flow.addEdge(source, in, MaxFlow::kInfinity);
        }
        if (readByBackward[k]) flow.addEdge(out, sink, MaxFlow::kInfinity);
    }
    flow.run(source, sink);
    std::vector<char> saved(n, 0);
    for (size_t k = 0; k < n; ++k)
        if (index[k] >= 0) saved[k] = flow.sourceSide(2 * index[k]) && !flow.sourceSide(2 * index[k] + 1);
    return saved;
}

// Cross-entropy cores (op_cost.h): under InPlace and Eager, the core's values take no HBM of their
// own, the exponential's operand is kept for the backward instead of the logits, and the logits'
// gradient is materialised (under Eager with the kernel's buffers: workPerElement).
// Under eager kernels a fused cross-entropy is still one kernel: its core's values take no HBM, the
// logits are kept, its edges fuse (OpRoles::eagerFused).
void applyCrossEntropyCores(const Graph& graph, OpRoles& r, CrossEntropyKernel kernel, KernelFusion fusion) {
    if (kernel == CrossEntropyKernel::Fused && fusion == KernelFusion::Compiled) return;
    const bool fusedKernel = kernel == CrossEntropyKernel::Fused;
    const auto n = static_cast<size_t>(graph.size());
    std::vector<std::vector<OpId>> readers(n);
    for (const Op& op : graph.ops())
        for (OpId o : op.operands) readers[static_cast<size_t>(o)].push_back(op.id);
    // Forward values whose forward readers are all row-wise ops leading only to row-wise ops.
    std::vector<char> lossOnly(n, 0);
    for (size_t i = n; i-- > 0;) {
        bool only = true;
        for (OpId c : readers[i]) {
            const Op& reader = graph.op(c);
            if (reader.phase == Phase::Forward) only = only && rowWise(reader.kind) && lossOnly[static_cast<size_t>(c)];
        }
        lossOnly[i] = only;
    }
    std::vector<OpId> stack;
    for (const Op& l : graph.ops()) {
        const auto kl = static_cast<size_t>(l.id);
        if (l.kind != OpKind::Dot || l.phase != Phase::Forward || r.onChip[kl] || r.sourceLike[kl] || !lossOnly[kl] || readers[kl].empty())
            continue;
        // The forward descendants of L's shape, and an exponential among them.
        std::vector<OpId> region;
        std::vector<char> seen(n, 0);
        OpId exp = kNoOp;
        stack.assign(1, l.id);
        while (!stack.empty()) {
            const OpId v = stack.back();
            stack.pop_back();
            for (OpId c : readers[static_cast<size_t>(v)]) {
                const Op& op = graph.op(c);
                if (op.phase != Phase::Forward || seen[static_cast<size_t>(c)]) continue;
                seen[static_cast<size_t>(c)] = 1;
                stack.push_back(c);
                if (op.type.dims != l.type.dims) continue;
                region.push_back(c);
                if (op.kind == OpKind::Exponential && exp == kNoOp) exp = c;
            }
        }
        if (exp == kNoOp) continue;
        std::vector<char> core(n, 0);
        for (OpId v : region) core[static_cast<size_t>(v)] = 1;
        // The backward ops of L's shape connected to the core, through operands or consumers.
        growToBackward(graph, core, [&](const Op& op) {
            return op.phase == Phase::Backward && !r.sourceLike[static_cast<size_t>(op.id)] && op.type.dims == l.type.dims;
        });
        bool trained = false;  // a forward-only graph keeps nothing for a backward
        for (size_t k = 0; k < n; ++k) trained = trained || (core[k] && graph.ops()[k].phase == Phase::Backward);
        if (!trained) continue;
        for (size_t k = 0; k < n; ++k)
            if (core[k]) {
                r.unmaterialized[k] = 1;
                r.workPerElement[k] = 0;
                if (graph.ops()[k].phase == Phase::Forward) r.readByBackward[k] = 0;
                // A library kernel (or a few): its edges fuse under eager kernels too, and its
                // ops are not views of their own.
                r.eagerFused[k] = 1;
                r.view[k] = 0;
            }
        const auto logitBytes = static_cast<int32_t>(dtypeBytes(l.type.dtype));
        if (fusedKernel) {  // eager kernels around a fused loss: the logits kept, the gradient written
            r.readByBackward[kl] = 1;
            for (size_t k = 0; k < n; ++k) {
                if (!core[k] || graph.ops()[k].phase != Phase::Backward) continue;
                bool exits = false;
                for (OpId c : readers[k]) exits = exits || !core[static_cast<size_t>(c)];
                if (exits) {
                    r.unmaterialized[k] = 0;
                    r.workPerElement[k] = -1;  // its operands and result, as under compiled kernels
                }
            }
            continue;
        }
        r.readByBackward[kl] = 0;
        const Op& e = graph.op(exp);
        const OpId kept = core[static_cast<size_t>(e.operands[0])] ? e.operands[0] : exp;
        r.readByBackward[static_cast<size_t>(kept)] = 1;
        r.unmaterialized[static_cast<size_t>(kept)] = 0;
        const auto keptBytes = static_cast<int32_t>(dtypeBytes(graph.op(kept).type.dtype));
        // Beside the kept buffer (the activations count it) the forward holds the logits, and under
        // Eager the f32 copy that log_softmax reads.
        r.workPerElement[static_cast<size_t>(kept)] = logitBytes + (kernel == CrossEntropyKernel::Eager ? keptBytes : 0);
        for (size_t k = 0; k < n; ++k) {
            if (!core[k] || graph.ops()[k].phase != Phase::Backward) continue;
            bool exits = false;
            for (OpId c : readers[k])  // read by a kernel outside the core (a reduction of it is inside)
                exits = exits || (!core[static_cast<size_t>(c)] && !fusedInKernel(graph.op(c).kind));
            if (!exits) continue;
            r.unmaterialized[k] = 0;
            r.workPerElement[k] = kernel == CrossEntropyKernel::Eager ? 2 * keptBytes : logitBytes;
        }
    }
}

// Eager views (op_cost.h): per op, whether it is a view, in op order (operands first).
std::vector<char> eagerViews(const Graph& graph, const OpRoles& r) {
    const auto n = static_cast<size_t>(graph.size());
    std::vector<char> view(n, 0), contiguous(n, 1);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.phase == Phase::Optimizer || r.sourceLike[k] || r.onChip[k] || op.operands.empty()) continue;
        const bool strided = op.kind == OpKind::Broadcast || op.kind == OpKind::Transpose || op.kind == OpKind::Slice;
        if (strided || (op.kind == OpKind::Reshape && contiguous[static_cast<size_t>(op.operands[0])])) {
            view[k] = 1;
            contiguous[k] = !strided;
        }
    }
    return view;
}

}  // namespace

bool fusesUnder(const MemoryPolicy& policy, const std::vector<char>& eagerFused, const Op& producer, const Op& consumer) {
    if (!fusesInto(producer.kind, consumer.kind)) return false;
    return policy.fusion == KernelFusion::Compiled ||
           (eagerFused[static_cast<size_t>(producer.id)] && eagerFused[static_cast<size_t>(consumer.id)]);
}

OpRoles opRoles(const Graph& graph, AttentionKernel attention, CrossEntropyKernel crossEntropy, KernelFusion fusion) {
    const auto n = static_cast<size_t>(graph.size());
    OpRoles r;
    r.sourceLike.assign(n, 0);
    r.gradToOptimizer.assign(n, 0);
    r.readByBackward.assign(n, 0);
    r.uses.assign(n, 0);
    std::vector<int32_t> optimizerUses(n, 0);
    for (const Op& op : graph.ops()) {
        bool c = op.kind == OpKind::Constant || op.kind == OpKind::Iota || op.kind == OpKind::Parameter;
        if (!c && !op.operands.empty()) {
            c = true;
            for (OpId o : op.operands) c = c && r.sourceLike[static_cast<size_t>(o)] && graph.op(o).kind != OpKind::Parameter;
        }
        r.sourceLike[static_cast<size_t>(op.id)] = c;
        for (OpId o : op.operands) {
            const auto k = static_cast<size_t>(o);
            ++r.uses[k];
            if (op.phase == Phase::Backward) r.readByBackward[k] = 1;
            if (op.phase == Phase::Optimizer) ++optimizerUses[k];
        }
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        r.gradToOptimizer[k] = op.phase == Phase::Backward && r.uses[k] > 0 && optimizerUses[k] == r.uses[k];
    }
    // Contributions, consumers first: every use by the optimizer or by a backward add that is one.
    r.gradContribution = r.gradToOptimizer;
    {
        std::vector<int32_t> contributingUses(n, 0);
        for (size_t i = n; i-- > 0;) {
            const Op& op = graph.ops()[i];
            if (op.phase == Phase::Backward && !r.gradContribution[i])
                r.gradContribution[i] = r.uses[i] > 0 && contributingUses[i] + optimizerUses[i] == r.uses[i];
            if (op.phase == Phase::Backward && op.kind == OpKind::Add && r.gradContribution[i])
                for (OpId o : op.operands) ++contributingUses[static_cast<size_t>(o)];
        }
    }
    r.onChip.assign(n, 0);
    r.flashRecompute.assign(n, 0);
    r.flash.assign(n, FlashMatmul{});
    if (fusedAttention(attention)) findAttentionCores(graph, r, attention == AttentionKernel::Flash2);
    // Forward results: what fused kernels keep. Others (backward results read by backward ops)
    // keep the plain flag; no consumer reads it for them.
    const bool fused = fusion == KernelFusion::Compiled;
    r.view = fused ? std::vector<char>(n, 0) : eagerViews(graph, r);
    if (fused) {
        const std::vector<char> saved = fusedSavedSet(graph, r, r.readByBackward);
        for (const Op& op : graph.ops())
            if (op.phase == Phase::Forward && !r.sourceLike[static_cast<size_t>(op.id)])
                r.readByBackward[static_cast<size_t>(op.id)] = saved[static_cast<size_t>(op.id)];
    } else {
        // Autograd keeps what backward ops read (a view: the value it views), less on-chip values.
        std::vector<char> kept(n, 0);
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (op.phase != Phase::Forward || r.sourceLike[k] || r.onChip[k] || !r.readByBackward[k]) continue;
            size_t base = k;
            while (r.view[base]) base = static_cast<size_t>(graph.ops()[base].operands[0]);
            if (graph.ops()[base].phase == Phase::Forward && !r.sourceLike[base] && !r.onChip[base]) kept[base] = 1;
        }
        for (const Op& op : graph.ops())
            if (op.phase == Phase::Forward && !r.sourceLike[static_cast<size_t>(op.id)])
                r.readByBackward[static_cast<size_t>(op.id)] = kept[static_cast<size_t>(op.id)];
    }
    // Values inside fused chains (op_cost.h, "Working sets").
    r.unmaterialized = r.onChip;
    // Every reader is a fusible op of the same phase, or a fusible backward op that recomputes a
    // forward value not kept for backward (it never reaches HBM in either pass).
    std::vector<char> fusedUse(n, 1);
    for (const Op& op : graph.ops()) {
        const bool fusibleReader = fusedInKernel(op.kind) && !r.onChip[static_cast<size_t>(op.id)];
        for (OpId o : op.operands) {
            const Phase from = graph.op(o).phase;
            const bool recomputedThere = from == Phase::Forward && op.phase == Phase::Backward;
            if (!fusibleReader || (from != op.phase && !recomputedThere)) fusedUse[static_cast<size_t>(o)] = 0;
        }
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (fused && fusedInKernel(op.kind) && r.uses[k] > 0 && fusedUse[k] && !r.sourceLike[k] &&
            !(op.phase == Phase::Forward && r.readByBackward[k]))
            r.unmaterialized[k] = 1;
        // Values computed from constants and iota alone are folded into their readers.
        if (r.sourceLike[k] && op.kind != OpKind::Parameter) r.unmaterialized[k] = 1;
        if (r.view[k]) r.unmaterialized[k] = 1;
    }
    r.workPerElement.assign(n, -1);
    r.eagerFused.assign(n, 0);
    for (const Op& op : graph.ops()) r.eagerFused[static_cast<size_t>(op.id)] = op.phase == Phase::Optimizer;
    applyCrossEntropyCores(graph, r, crossEntropy, fusion);
    return r;
}

std::vector<char> dataDerived(const Graph& graph) {
    std::vector<char> data(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops()) {
        bool a = op.kind == OpKind::Parameter && op.role == ParamRole::Input;
        for (OpId o : op.operands) a = a || data[static_cast<size_t>(o)];
        data[static_cast<size_t>(op.id)] = a;
    }
    return data;
}

int32_t layerCount(const std::vector<int32_t>& units) {
    int32_t layers = 0;
    for (int32_t l : units) layers = std::max(layers, l + 1);
    return layers;
}

int32_t layerCount(const Graph& graph) { return layerCount(layerUnits(graph)); }

std::vector<int32_t> layerUnits(const Graph& graph) {
    std::vector<int32_t> unit(static_cast<size_t>(graph.size()), -1);
    std::unordered_map<std::string, int32_t> ids;
    for (const Op& op : graph.ops()) {
        const std::string& scope = op.scope;
        size_t at = 0;
        while (at < scope.size()) {
            size_t end = scope.find('.', at);
            if (end == std::string::npos) end = scope.size();
            const bool numeric = end > at && std::all_of(scope.begin() + static_cast<std::ptrdiff_t>(at), scope.begin() + static_cast<std::ptrdiff_t>(end),
                                                         [](char c) { return c >= '0' && c <= '9'; });
            if (numeric && at > 0) {
                auto [it, inserted] = ids.try_emplace(scope.substr(0, end), static_cast<int32_t>(ids.size()));
                unit[static_cast<size_t>(op.id)] = it->second;
                break;
            }
            at = end + 1;
        }
    }
    return unit;
}

std::vector<char> selectiveOpsKept(const Graph& graph, const std::vector<char>& sourceLike, const std::vector<char>& onChip,
                                   const std::vector<int32_t>& layers) {
    const std::vector<char> activation = dataDerived(graph);
    std::vector<char> kept(static_cast<size_t>(graph.size()), 0);
    std::unordered_map<int32_t, int64_t> linears;  // layer → linear matmuls seen
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.phase != Phase::Forward || op.kind != OpKind::Dot || layers[k] < 0 || sourceLike[k]) continue;
        bool linear = false, attention = false;
        for (OpId o : op.operands) {
            linear = linear || !activation[static_cast<size_t>(o)];
            attention = attention || onChip[static_cast<size_t>(o)];
        }
        if (attention) kept[k] = 1;
        else if (linear && linears[layers[k]]++ % 2 == 0) kept[k] = 1;
    }
    return kept;
}

std::vector<char> sequenceParallelOps(const Graph& graph) {
    std::vector<char> ops = dataDerived(graph);
    // A manual (shard_map) region's ops are each device's work as written: not split further.
    const std::vector<char> manual = manualRegionOps(graph);
    for (const Op& op : graph.ops())
        if (op.phase == Phase::Optimizer || !fusedInKernel(op.kind) || manual[static_cast<size_t>(op.id)])
            ops[static_cast<size_t>(op.id)] = 0;
    return ops;
}

std::optional<int> sequenceParallelAxisIndex(const MemoryPolicy& policy, const Mesh& mesh) {
    if (policy.sequenceParallelAxis.empty()) return -1;
    const auto a = mesh.axisIndex(policy.sequenceParallelAxis);
    if (!a) return std::nullopt;
    return static_cast<int>(*a);
}

int64_t sequenceParallelSplit(int axis, const MeshSizes& sizes, bool candidate, uint32_t mask) {
    if (axis < 0 || !candidate || (mask & (1u << axis))) return 1;
    return sizes.size[static_cast<size_t>(axis)];
}

std::vector<char> sequenceParallelScatters(const Graph& graph, const std::vector<char>& spOps) {
    const std::vector<char> data = dataDerived(graph);
    std::vector<char> out(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops())
        if (spOps[static_cast<size_t>(op.id)])
            for (OpId o : op.operands) out[static_cast<size_t>(o)] = data[static_cast<size_t>(o)];
    return out;
}

std::vector<OpId> sequenceParallelGatherers(const Graph& graph, const std::vector<char>& spOps) {
    std::vector<OpId> out(static_cast<size_t>(graph.size()), kNoOp);
    for (const Op& op : graph.ops()) {  // op order: the first consumer sets it
        if (spOps[static_cast<size_t>(op.id)]) continue;
        for (OpId o : op.operands)
            if (out[static_cast<size_t>(o)] == kNoOp) out[static_cast<size_t>(o)] = op.id;
    }
    return out;
}

bool sequenceParallelPiece(int axis, int64_t split, uint32_t partialMask, bool scatters) {
    return axis >= 0 && (split > 1 || (scatters && (partialMask & (1u << axis))));
}

bool sequenceParallelGathers(bool uPiece, const Op& v, size_t slot, OpId u, OpId gatherer, bool vCandidate, int64_t vSplit) {
    if (!uPiece || (v.id != gatherer && !(vCandidate && vSplit == 1))) return false;
    for (size_t i = 0; i < slot; ++i)
        if (v.operands[i] == u) return false;
    return true;
}

CollectiveStep sequenceParallelGatherStep(const TensorSharding& held, const Mesh& mesh, size_t axis, int64_t localBytes) {
    CollectiveStep step;
    step.kind = CollectiveKind::AllGather;
    step.axis = mesh.axes()[axis].name;
    step.axisSize = mesh.axes()[axis].size;
    step.messageBytes = localBytes;
    step.sendBytesPerDevice = step.axisSize > 0 ? localBytes / step.axisSize * (step.axisSize - 1) : 0;
    step.before = held;
    step.after = held;
    return step;
}

uint32_t ownScatterMask(uint32_t partialMask, bool scattersOwn, int spAxis, bool spScatters) {
    if (scattersOwn) return partialMask;
    return spAxis >= 0 && spScatters ? partialMask & (1u << spAxis) : 0;
}

int64_t savedActivationBytes(const Graph& graph, const OpRoles& roles) {
    int64_t bytes = 0;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.phase == Phase::Forward && !roles.sourceLike[k] && roles.readByBackward[k]) bytes += op.type.bytes();
    }
    return bytes;
}

uint32_t replicaMask(const CompactSharding& sharding, const MeshSizes& sizes) {
    uint32_t m = 0;
    for (int a = 0; a < sizes.rank; ++a)
        if (sharding.dimOf[static_cast<size_t>(a)] < 0) m |= 1u << a;
    return m;
}

uint32_t replicaMask(const TensorSharding& sharding, const Mesh& mesh) {
    uint32_t m = 0;
    for (size_t a = 0; a < mesh.axes().size(); ++a)
        if (sharding.use(mesh.axes()[a].name).kind != AxisUse::Kind::Dim) m |= 1u << a;
    return m;
}

int64_t axesProduct(uint32_t mask, const MeshSizes& sizes) {
    int64_t r = 1;
    for (int a = 0; a < sizes.rank; ++a)
        if (mask & (1u << a)) r *= sizes.size[static_cast<size_t>(a)];
    return r;
}

int64_t optimizerWorkSplit(const Op& op, bool sourceLike, int64_t replicas, const MemoryPolicy& policy) {
    if (!policy.optimizerSharding || op.phase != Phase::Optimizer || sourceLike) return 1;
    return replicas;
}

std::optional<GemmGrid> gemmGridOf(const Graph& graph, const Op& op, const std::vector<int64_t>& localResultDims) {
    if (op.kind != OpKind::Dot || op.operands.size() != 2) return std::nullopt;
    const size_t batch = op.attrs.dot.lhsBatch.size();
    const auto lhsRank = static_cast<size_t>(graph.op(op.operands[0]).type.rank());
    if (lhsRank < batch + op.attrs.dot.lhsContracting.size()) return std::nullopt;
    const size_t lhsFree = lhsRank - batch - op.attrs.dot.lhsContracting.size();
    if (localResultDims.size() < batch + lhsFree) return std::nullopt;
    GemmGrid g;
    for (size_t i = 0; i < localResultDims.size(); ++i) {
        const auto d = static_cast<double>(localResultDims[i]);
        (i < batch ? g.batch : i < batch + lhsFree ? g.m : g.n) *= d;
    }
    return g;
}

double opKernelSeconds(const CostModel& model, const Op& op, double opFlops, uint32_t axesUsed, double localBytes, int64_t zeroSplit,
                       bool onChip, const GemmGrid* grid, const FlashMatmul* flash) {
    const MeshSizes& sizes = model.sizes();
    double split = static_cast<double>(zeroSplit);
    for (int a = 0; a < sizes.rank; ++a)
        if (axesUsed & (1u << a)) split *= static_cast<double>(sizes.size[static_cast<size_t>(a)]);
    if (flash && flash->seq > 0 && op.kind == OpKind::Dot) {
        const double local = opFlops / split;
        if (auto t = model.flashMatmulSeconds(op.type.dtype, local, *flash, op.phase != Phase::Forward)) {
            double run = *t;
            if (flash->recomputed) run = 0.5 * (run + *model.flashMatmulSeconds(op.type.dtype, local, *flash, true));
            if (onChip) return run;
            return std::max(run, model.hbmSeconds(localBytes / static_cast<double>(zeroSplit))) + model.launchSeconds();
        }
    }
    if (onChip) return model.onChipSeconds(op.kind, op.type.dtype, opFlops / split);
    return model.kernelSeconds(op.kind, op.type.dtype, opFlops / split, localBytes / static_cast<double>(zeroSplit), grid);
}

double kernelRepeats(const Op& op, const MemoryPolicy& policy, bool flashRecompute) {
    if (op.phase == Phase::Optimizer || op.kind == OpKind::Parameter) return 1.0;
    return static_cast<double>(policy.accumulation) * (flashRecompute ? 2.0 : 1.0);
}

double ownCollectiveRepeats(const Op& op, bool gradToOptimizer, const MemoryPolicy& policy) {
    // ZeRO-2/3 hold only 1/r of a gradient: it is reduce-scattered every round.
    return gradToOptimizer && zeroStageOf(policy) < 2 ? 1.0 : kernelRepeats(op, policy);
}

void CommCost::add(const CostModel& model, size_t axis, double seconds) {
    total += seconds;
    if (intraNodeAxis(model, axis)) intra += seconds;
    if (model.contextAxis() == static_cast<int>(axis)) context += seconds;
}

double coalescedSeconds(const CostModel& model, const OpCollective& o, const MemoryPolicy& policy) {
    const int64_t bucket = policy.bucketBytes > 0 ? policy.bucketBytes : kDefaultBucketBytes;
    if (o.bytes >= bucket) return model.collectiveSeconds(o.kind, o.axis, o.bytes);
    return model.collectiveSeconds(o.kind, o.axis, bucket) * (static_cast<double>(o.bytes) / static_cast<double>(bucket));
}

double overlappedCharge(const CostModel& model, const CommCost& c, double cover, bool overlapped) {
    if (!overlapped) return c.total;
    const double s = model.hardware().overlapSlowdown;
    auto channel = [&](double seconds) {
        const double hidden = std::min(seconds, std::max(0.0, cover));
        return seconds - hidden + s * hidden;
    };
    return channel(c.intra) + channel(c.total - c.intra);
}

std::vector<double> overlapCover(const Graph& graph, const OpRoles& roles, const CostModel& model, const MemoryPolicy& policy) {
    const auto n = static_cast<size_t>(graph.size());
    std::vector<double> cover(n, 0.0);
    if (!policy.overlapGradReduce && !policy.overlapParamGather) return cover;
    const MeshSizes& sizes = model.sizes();
    double devices = 1;
    for (int a = 0; a < sizes.rank; ++a) devices *= static_cast<double>(sizes.size[static_cast<size_t>(a)]);
    // Per pool (a layer, or the ops outside layers: the last): forward and backward compute of one
    // round at the ideal split, and the bytes of the weights gathered and gradients reduced.
    const std::vector<int32_t> unit = layerUnits(graph);
    const auto pools = static_cast<size_t>(layerCount(unit)) + 1;
    auto poolOf = [&](size_t k) { return unit[k] >= 0 ? static_cast<size_t>(unit[k]) : pools - 1; };
    std::vector<double> forward(pools, 0.0), backward(pools, 0.0), weightBytes(pools, 0.0), gradBytes(pools, 0.0);
    const int zero = zeroStageOf(policy);
    auto gathered = [&](const Op& op) {
        return policy.overlapParamGather && policy.optimizerSharding && op.kind == OpKind::Parameter && op.role == ParamRole::Trainable;
    };
    auto reduced = [&](size_t k) { return policy.overlapGradReduce && roles.gradContribution[k]; };
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const size_t p = poolOf(k);
        if (gathered(op)) weightBytes[p] += static_cast<double>(op.type.bytes());
        if (reduced(k)) gradBytes[p] += static_cast<double>(op.type.bytes());
        if (roles.sourceLike[k] || roles.view[k] || (op.phase != Phase::Forward && op.phase != Phase::Backward)) continue;
        const double flops = opFlops(graph, op) / devices;
        double seconds = 0;
        const std::optional<double> fused = roles.flash[k].seq > 0 && op.kind == OpKind::Dot
                                                ? model.flashMatmulSeconds(op.type.dtype, flops, roles.flash[k], op.phase != Phase::Forward)
                                                : std::nullopt;
        if (fused) {
            seconds = *fused;
        } else if (roles.onChip[k]) {
            seconds = model.onChipSeconds(op.kind, op.type.dtype, flops);
        } else {
            double bytes = static_cast<double>(op.type.bytes());
            for (OpId o : op.operands)
                if (!roles.onChip[static_cast<size_t>(o)]) bytes += static_cast<double>(graph.op(o).type.bytes());
            seconds = model.kernelSeconds(op.kind, op.type.dtype, flops, bytes / devices);
        }
        (op.phase == Phase::Forward ? forward : backward)[p] += seconds;
    }
    const double rounds = static_cast<double>(std::max<int64_t>(1, policy.accumulation));
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const size_t p = poolOf(k);
        const double bytes = static_cast<double>(op.type.bytes());
        if (gathered(op) && weightBytes[p] > 0) {
            const double under = zero >= 3 ? rounds * (forward[p] + 0.5 * backward[p]) : forward[p];
            cover[k] = under * bytes / weightBytes[p];
        } else if (reduced(k) && gradBytes[p] > 0) {
            const double under = zero >= 3 ? rounds * 0.5 * backward[p] : zero == 2 ? rounds * backward[p] : backward[p];
            cover[k] = under * bytes / gradBytes[p];
        }
    }
    return cover;
}

CommCost ownCollectiveCost(const CostModel& model, uint32_t partialMask, int64_t localResultBytes, uint32_t scatterMask,
                           const MemoryPolicy* coalesced) {
    CommCost c;
    forEachOwnCollective(model.sizes(), partialMask, localResultBytes, scatterMask, [&](const OpCollective& o) {
        c.add(model, o.axis, coalesced ? coalescedSeconds(model, o, *coalesced) : model.collectiveSeconds(o.kind, o.axis, o.bytes));
    });
    return c;
}

CommCost reshardCost(const CostModel& model, const ReshardPlan& plan) {
    CommCost c;
    for (const CollectiveStep& step : plan.steps)
        if (auto a = model.mesh().axisIndex(step.axis)) c.add(model, *a, model.collectiveSeconds(step.kind, *a, step.messageBytes));
    return c;
}

double chargedComm(const CostModel& model, const Op& op, const MemoryPolicy& policy, const CommCost& c, double gemm, bool attention) {
    const bool tp = communicatesBeside(op, policy);
    const bool ring = attention && policy.contextRing && model.contextAxis() >= 0;
    if (!tp && !ring) return c.total;
    double beside = tp ? c.intra : 0.0;
    // The context axis's part, unless the intra-node part already holds it.
    if (ring && !(tp && intraNodeAxis(model, static_cast<size_t>(model.contextAxis())))) beside += c.context;
    return c.total - beside + besideGemmCharge(model, beside, gemm);
}

bool attentionMatmul(const Op& op, const std::vector<char>& onChip) {
    if (op.kind != OpKind::Dot) return false;
    if (onChip[static_cast<size_t>(op.id)]) return true;
    for (OpId u : op.operands)
        if (onChip[static_cast<size_t>(u)]) return true;
    return false;
}

std::vector<char> contextRingMatmuls(const Graph& graph, const std::vector<char>& onChip, const MemoryPolicy& policy, const CostModel& model) {
    std::vector<char> out(static_cast<size_t>(graph.size()), 0);
    if (policy.contextRing && model.contextAxis() >= 0)
        for (const Op& op : graph.ops()) out[static_cast<size_t>(op.id)] = attentionMatmul(op, onChip) ? 1 : 0;
    return out;
}

bool runsBeside(const CostModel& model, const Op& op, const MemoryPolicy& policy, size_t axis, bool attention) {
    if (communicatesBeside(op, policy) && intraNodeAxis(model, axis)) return true;
    return attention && policy.contextRing && model.contextAxis() == static_cast<int>(axis);
}

double runsPerStep(const Op& op, const MemoryPolicy& policy) {
    return op.phase == Phase::Optimizer ? 1.0 : static_cast<double>(std::max<int64_t>(1, policy.accumulation));
}

bool communicatesBeside(const Op& op, const MemoryPolicy& policy) { return policy.overlapTensorParallel && op.kind == OpKind::Dot; }

double besideGemmCharge(const CostModel& model, double beside, double gemm) {
    const double hidden = std::min(beside, std::max(0.0, gemm));
    return beside - hidden + model.hardware().overlapSlowdown * hidden;
}

bool intraNodeAxis(const CostModel& model, size_t axis) {
    const auto& a = model.mesh().axes().at(axis);
    return !(a.link && *a.link == LinkClass::InterNode);
}

double weightGatherRepeats(const MemoryPolicy& policy) {
    return zeroStageOf(policy) >= 3 ? 2.0 * static_cast<double>(policy.accumulation) : 1.0;
}

double ownCollectiveSeconds(const CostModel& model, uint32_t partialMask, int64_t localResultBytes, uint32_t scatterMask) {
    double t = 0;
    forEachOwnCollective(model.sizes(), partialMask, localResultBytes, scatterMask,
                         [&](const OpCollective& c) { t += model.collectiveSeconds(c.kind, c.axis, c.bytes); });
    return t;
}

CommCost weightGatherCost(const CostModel& model, const Op& param, uint32_t replicaAxes, int64_t localBytes, const MemoryPolicy& policy) {
    CommCost c;
    forEachWeightGather(model.sizes(), param, replicaAxes, localBytes, policy,
                        [&](const OpCollective& o) {
                            c.add(model, o.axis, policy.overlapParamGather ? coalescedSeconds(model, o, policy) : model.collectiveSeconds(o.kind, o.axis, o.bytes));
                        });
    return c.times(weightGatherRepeats(policy));
}
std::vector<char> stepResidentWeights(const Graph& graph, const MemoryPolicy& policy) {
    if (zeroStageOf(policy) < 3) return {};
    const std::vector<int32_t> unit = layerUnits(graph);
    if (std::none_of(unit.begin(), unit.end(), [](int32_t u) { return u >= 0; })) return {};
    std::vector<char> resident(unit.size(), 0);
    for (const Op& op : graph.ops())
        resident[static_cast<size_t>(op.id)] = op.kind == OpKind::Parameter && op.role == ParamRole::Trainable && unit[static_cast<size_t>(op.id)] < 0;
    return resident;
}

MemoryBreakdown parameterMemory(const Op& param, int64_t localBytes, int64_t replicas, const MemoryPolicy& policy, bool resident) {
    MemoryBreakdown m;
    switch (param.role) {
        case ParamRole::Trainable: {
            const int stage = zeroStageOf(policy);
            const int64_t r = replicas < 1 ? 1 : replicas;
            m.weights = stage >= 3 ? (localBytes + r - 1) / r + (resident ? localBytes : 0) : localBytes;
            m.gradients = stage >= 2 ? (localBytes + r - 1) / r : localBytes;
            break;
        }
        case ParamRole::OptimizerState: {
            const int64_t r = policy.optimizerSharding ? replicas : 1;
            m.optimizer = (localBytes + r - 1) / r;
            break;
        }
        default: m.activations = localBytes; break;
    }
    if (policy.pipelineStages > 1) {
        const int64_t p = policy.pipelineStages;
        m.weights = (m.weights + p - 1) / p;
        m.gradients = (m.gradients + p - 1) / p;
        m.optimizer = (m.optimizer + p - 1) / p;
    }
    return m;
}

}  // namespace cfp
