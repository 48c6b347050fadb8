#include "segments/fingerprint.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>

namespace cfp {

namespace {

// Integers through to_chars: locale-independent, unlike streams and printf.
void appendInt(std::string& out, int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void appendHex64(std::string& out, uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    char buf[16];
    for (int i = 15; i >= 0; --i) {
        buf[i] = kDigits[v & 0xfU];
        v >>= 4;
    }
    out.append(buf, sizeof buf);
}

void appendList(std::string& out, std::string_view tag, const std::vector<int64_t>& v) {
    out += ' ';
    out += tag;
    out += '{';
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        appendInt(out, v[i]);
    }
    out += '}';
}

void appendType(std::string& out, const TensorType& t) {
    out += dtypeName(t.dtype);
    out += '[';
    for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) out += ',';
        appendInt(out, t.dims[i]);
    }
    out += ']';
}

// Literal values as bit patterns: exact, and printf's rounding of doubles cannot differ between
// platforms. NaNs are folded to one pattern because their payloads carry no meaning here.
void appendLiteral(std::string& out, const std::vector<double>& values) {
    out += " lit{";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ',';
        double v = values[i];
        if (v != v) v = std::numeric_limits<double>::quiet_NaN();
        uint64_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        appendHex64(out, bits);
    }
    out += '}';
}

void appendAttrs(std::string& out, const Op& op) {
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::Broadcast:
        case OpKind::Transpose:
        case OpKind::Concatenate:
        case OpKind::Iota:
            appendList(out, "dims", a.dimensions);
            break;
        case OpKind::Reduce:
            appendList(out, "dims", a.dimensions);
            out += " reduce=";
            out += reduceKindName(a.reduceKind);
            break;
        case OpKind::Dot:
            appendList(out, "lb", a.dot.lhsBatch);
            appendList(out, "rb", a.dot.rhsBatch);
            appendList(out, "lc", a.dot.lhsContracting);
            appendList(out, "rc", a.dot.rhsContracting);
            break;
        case OpKind::Slice:
            appendList(out, "start", a.slice.start);
            appendList(out, "limit", a.slice.limit);
            appendList(out, "stride", a.slice.stride);
            break;
        case OpKind::Gather:
            appendList(out, "offset", a.gather.offsetDims);
            appendList(out, "collapsed", a.gather.collapsedSliceDims);
            appendList(out, "startmap", a.gather.startIndexMap);
            out += " ivd=";
            appendInt(out, a.gather.indexVectorDim);
            appendList(out, "sizes", a.gather.sliceSizes);
            break;
        case OpKind::Scatter:
            appendList(out, "window", a.scatter.updateWindowDims);
            appendList(out, "inserted", a.scatter.insertedWindowDims);
            appendList(out, "todims", a.scatter.scatterDimsToOperandDims);
            out += " ivd=";
            appendInt(out, a.scatter.indexVectorDim);
            out += " combine=";
            out += reduceKindName(a.reduceKind);
            break;
        case OpKind::Compare:
            out += " dir=";
            out += comparisonName(a.comparison);
            break;
        case OpKind::Constant:
            appendLiteral(out, a.literal);
            break;
        case OpKind::CustomCall:
            // Length-prefixed so that no target name can imitate the following fields.
            out += " target=";
            appendInt(out, static_cast<int64_t>(a.target.size()));
            out += ':';
            out += a.target;
            break;
        default:
            // Elementwise ops, parameter, reshape, convert: everything is in kind and type.
            break;
    }
}

Error badBlock(std::string message, std::string where) {
    return makeError("segments.bad_block", std::move(message), std::move(where));
}

Status checkMembers(const Graph& graph, const BlockView& block, const std::string& where) {
    for (size_t i = 0; i < block.members.size(); ++i) {
        OpId id = block.members[i];
        if (id < 0 || id >= graph.size())
            return badBlock("member op id " + std::to_string(id) + " is not an op of the graph", where);
        if (i > 0 && block.members[i - 1] >= id)
            return badBlock("members must be strictly increasing op ids (" + std::to_string(block.members[i - 1]) +
                                " then " + std::to_string(id) + ")",
                            where);
    }
    return {};
}

int32_t memberIndex(const BlockView& block, OpId id) {
    auto it = std::lower_bound(block.members.begin(), block.members.end(), id);
    if (it == block.members.end() || *it != id) return -1;
    return static_cast<int32_t>(it - block.members.begin());
}

std::string canonicalTextUnchecked(const Graph& graph, const BlockView& block) {
    std::string out;
    out.reserve(64 + 96 * block.members.size());
    out += "block ";
    appendInt(out, static_cast<int64_t>(block.members.size()));
    out += " members\n";
    std::vector<OpId> externals;  // distinct external producers, by first appearance
    for (size_t i = 0; i < block.members.size(); ++i) {
        const Op& op = graph.op(block.members[i]);
        out += 'm';
        appendInt(out, static_cast<int64_t>(i));
        out += ' ';
        out += opKindName(op.kind);
        out += ' ';
        appendType(out, op.type);
        out += ' ';
        out += phaseName(op.phase);
        if (op.kind == OpKind::Parameter || op.role != ParamRole::None) {
            out += " role=";
            out += paramRoleName(op.role);
        }
        appendAttrs(out, op);
        out += " (";
        for (size_t s = 0; s < op.operands.size(); ++s) {
            if (s) out += ", ";
            OpId src = op.operands[s];
            int32_t local = memberIndex(block, src);
            if (local >= 0) {
                out += 'm';
                appendInt(out, local);
                continue;
            }
            auto it = std::find(externals.begin(), externals.end(), src);
            auto k = static_cast<int64_t>(it - externals.begin());
            if (it == externals.end()) externals.push_back(src);
            const Op& p = graph.op(src);
            out += 'x';
            appendInt(out, k);
            out += ':';
            out += opKindName(p.kind);
            out += ':';
            appendType(out, p.type);
        }
        out += ')';
        if (op.derivedFrom != kNoOp) {
            int32_t local = memberIndex(block, op.derivedFrom);
            out += " d=";
            if (local >= 0) {
                out += 'm';
                appendInt(out, local);
            } else {
                out += 'x';
            }
            out += '/';
            appendInt(out, op.derivedOperand);
        }
        out += '\n';
    }
    return out;
}

}  // namespace

uint64_t fnv1a64(std::string_view data) {
    Fnv1a64 h;
    h.bytes(data);
    return h.value();
}

std::string fingerprintHex(uint64_t fingerprint) {
    std::string out = "0x";
    appendHex64(out, fingerprint);
    return out;
}

Result<std::string> canonicalBlockText(const Graph& graph, const BlockView& block) {
    CFP_TRY(checkMembers(graph, block, "block"));
    return canonicalTextUnchecked(graph, block);
}

Result<uint64_t> blockFingerprint(const Graph& graph, const BlockView& block) {
    CFP_TRY(checkMembers(graph, block, "block"));
    return fnv1a64(canonicalTextUnchecked(graph, block));
}

std::string_view layerScope(std::string_view scope) {
    size_t begin = 0;
    while (begin < scope.size()) {
        size_t end = scope.find('.', begin);
        if (end == std::string_view::npos) end = scope.size();
        const std::string_view part = scope.substr(begin, end - begin);
        if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return scope.substr(0, end);
        begin = end + 1;
    }
    return {};
}

Result<std::vector<BlockSignature>> blockSignatures(const Graph& graph, std::span<const BlockView> blocks) {
    const auto n = static_cast<size_t>(graph.size());
    std::vector<int32_t> blockOf(n, -1);
    std::vector<int32_t> localOf(n, -1);
    for (size_t b = 0; b < blocks.size(); ++b) {
        const std::string where = "blocks/" + std::to_string(b);
        CFP_TRY(checkMembers(graph, blocks[b], where));
        if (blocks[b].strategyCount < 1)
            return badBlock("strategy count " + std::to_string(blocks[b].strategyCount) + " is below 1", where);
        for (size_t i = 0; i < blocks[b].members.size(); ++i) {
            auto id = static_cast<size_t>(blocks[b].members[i]);
            if (blockOf[id] >= 0)
                return badBlock("op " + graph.op(blocks[b].members[i]).name + " is also a member of block " +
                                    std::to_string(blockOf[id]),
                                where);
            blockOf[id] = static_cast<int32_t>(b);
            localOf[id] = static_cast<int32_t>(i);
        }
    }

    std::vector<BlockSignature> out(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
        BlockSignature& sig = out[b];
        sig.fingerprint = fnv1a64(canonicalTextUnchecked(graph, blocks[b]));
        sig.strategyCount = blocks[b].strategyCount;
        for (size_t i = 0; i < blocks[b].members.size(); ++i) {
            const Op& op = graph.op(blocks[b].members[i]);
            for (size_t s = 0; s < op.operands.size(); ++s) {
                auto src = static_cast<size_t>(op.operands[s]);
                int32_t pb = blockOf[src];
                if (pb < 0 || pb == static_cast<int32_t>(b)) continue;
                sig.incoming.push_back(CrossBlockEdge{pb - static_cast<int32_t>(b), localOf[src],
                                                      static_cast<int32_t>(i), static_cast<int32_t>(s)});
            }
        }
        std::sort(sig.incoming.begin(), sig.incoming.end());
        // The layer most members belong to. Shared precomputations (a causal mask, RoPE tables)
        // that land in the first layer's block have no layer and do not outvote it.
        std::map<std::string_view, int64_t> votes;
        for (OpId m : blocks[b].members) {
            const std::string_view layer = layerScope(graph.op(m).scope);
            if (!layer.empty()) ++votes[layer];
        }
        int64_t most = 0;
        for (const auto& [layer, count] : votes)  // ascending: ties keep the smaller string
            if (count > most) {
                most = count;
                sig.layer = std::string(layer);
            }
    }
    return out;
}

}  // namespace cfp
