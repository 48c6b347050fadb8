#include "import/row_stacks.h"

#include <algorithm>
#include <string>
#include <vector>

namespace cfp {

namespace {

// A concatenate along dim 0.
bool rowConcat(const Op& op) { return op.kind == OpKind::Concatenate && op.attrs.dimensions.size() == 1 && op.attrs.dimensions[0] == 0; }

// A slice that keeps every dim whole but dim 0, read with stride 1.
bool rowSlice(const Graph& g, const Op& op) {
    if (op.kind != OpKind::Slice || op.operands.size() != 1) return false;
    const std::vector<int64_t>& dims = g.op(op.operands[0]).type.dims;
    const SliceBounds& b = op.attrs.slice;
    if (dims.empty() || b.start.size() != dims.size() || b.limit.size() != dims.size() || b.stride.size() != dims.size()) return false;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (b.stride[d] != 1) return false;
        if (d > 0 && (b.start[d] != 0 || b.limit[d] != dims[d])) return false;
    }
    return true;
}

// Where row `row` of op `op` lives: an op of one row that holds it (whole), or row `row` of an op
// that is neither a stack of concatenates nor a slice of one.
struct RowRef {
    OpId op = kNoOp;
    int64_t row = 0;
    bool whole = false;
};

RowRef rowOf(const Graph& g, OpId id, int64_t row) {
    for (;;) {
        const Op& op = g.op(id);
        if (rowConcat(op)) {
            int64_t offset = 0;
            OpId piece = kNoOp;
            for (OpId p : op.operands) {
                const int64_t d = g.op(p).type.dims[0];
                if (row < offset + d) {
                    piece = p;
                    break;
                }
                offset += d;
            }
            if (piece == kNoOp) return {id, row, false};
            id = piece;
            row -= offset;
            continue;
        }
        if (rowSlice(g, op)) {
            row += op.attrs.slice.start[0];
            id = op.operands[0];
            continue;
        }
        if (!op.type.dims.empty() && op.type.dims[0] == 1) return {id, 0, true};
        return {id, row, false};
    }
}

// The pieces a stack of `rows` rows is made of, resolved (consecutive rows of one source as one
// piece).
struct Piece {
    OpId op = kNoOp;
    int64_t first = 0, last = 0;  // rows [first, last) of op (whole: 0, 1)
    bool whole = false;
};

std::vector<Piece> piecesOf(const Graph& g, OpId stack) {
    std::vector<Piece> out;
    const int64_t rows = g.op(stack).type.dims[0];
    for (int64_t r = 0; r < rows; ++r) {
        const RowRef ref = rowOf(g, stack, r);
        if (!ref.whole && !out.empty() && !out.back().whole && out.back().op == ref.op && out.back().last == ref.row) {
            ++out.back().last;
            continue;
        }
        out.push_back({ref.op, ref.whole ? 0 : ref.row, ref.whole ? 1 : ref.row + 1, ref.whole});
    }
    return out;
}

std::string freshName(const Graph& g, const std::string& base) {
    if (g.find(base) == kNoOp) return base;
    for (int i = 1;; ++i)
        if (std::string n = base + "." + std::to_string(i); g.find(n) == kNoOp) return n;
}

// Reaches an output (or is one).
std::vector<char> liveOps(const Graph& g) {
    std::vector<char> live(static_cast<size_t>(g.size()), 0);
    for (OpId o : g.outputs()) live[static_cast<size_t>(o)] = 1;
    for (size_t i = live.size(); i-- > 0;)
        if (live[i])
            for (OpId in : g.op(static_cast<OpId>(i)).operands) live[static_cast<size_t>(in)] = 1;
    return live;
}

}  // namespace

Result<int64_t> resolveRowStacks(Graph& g, PhaseHints& hints) {
    const auto n = static_cast<size_t>(g.size());
    // Only where a stack is built from a stack (an unrolled loop's updates).
    bool chained = false;
    for (const Op& op : g.ops()) {
        if (!rowConcat(op)) continue;
        for (OpId p : op.operands) {
            const Op& piece = g.op(p);
            if (rowConcat(piece) || (rowSlice(g, piece) && rowConcat(g.op(piece.operands[0])))) chained = true;
        }
    }
    if (!chained) return int64_t{0};
    const std::vector<char> wasLive = liveOps(g);
    Graph out(g.name());
    std::vector<OpId> map(n, kNoOp);
    PhaseHints outHints;
    int64_t resolved = 0;
    auto hintOf = [&](size_t k) { return k < hints.size() ? hints[k] : int8_t{-1}; };
    auto emit = [&](Op op, size_t from) -> Result<OpId> {
        auto id = out.add(std::move(op));
        if (!id) return id.error();
        outHints.push_back(hintOf(from));
        return *id;
    };
    // A one-row-range slice of `source` (an op of `g`) for the op at `k`.
    auto sliceOf = [&](OpId source, int64_t first, int64_t last, const std::string& name, size_t k) -> Result<OpId> {
        const Op& src = g.op(source);
        if (first == 0 && last == src.type.dims[0]) return map[static_cast<size_t>(source)];
        Op s;
        s.kind = OpKind::Slice;
        s.name = freshName(out, name);
        s.operands = {map[static_cast<size_t>(source)]};
        s.type = src.type;
        s.type.dims[0] = last - first;
        s.attrs.slice.start.assign(src.type.dims.size(), 0);
        s.attrs.slice.limit = src.type.dims;
        s.attrs.slice.stride.assign(src.type.dims.size(), 1);
        s.attrs.slice.start[0] = first;
        s.attrs.slice.limit[0] = last;
        return emit(std::move(s), k);
    };
    for (const Op& op : g.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (rowSlice(g, op) && op.type.dims[0] == 1) {
            const RowRef ref = rowOf(g, op.operands[0], op.attrs.slice.start[0]);
            if (ref.op != op.operands[0]) ++resolved;
            if (ref.whole) {
                map[k] = map[static_cast<size_t>(ref.op)];
                continue;
            }
            auto s = sliceOf(ref.op, ref.row, ref.row + 1, op.name, k);
            if (!s) return s.error();
            map[k] = *s;
            continue;
        }
        if (rowConcat(op)) {
            bool stacked = false;
            for (OpId p : op.operands)
                if (rowConcat(g.op(p)) || rowSlice(g, g.op(p))) stacked = true;
            if (stacked) {
                const std::vector<Piece> pieces = piecesOf(g, op.id);
                std::vector<OpId> operands;
                for (const Piece& p : pieces) {
                    if (p.whole) {
                        operands.push_back(map[static_cast<size_t>(p.op)]);
                        continue;
                    }
                    auto s = sliceOf(p.op, p.first, p.last, op.name + ".rows" + std::to_string(p.first) + "_" + std::to_string(p.last), k);
                    if (!s) return s.error();
                    operands.push_back(*s);
                }
                if (operands.size() == 1) {
                    map[k] = operands[0];
                    continue;
                }
                Op c = op;
                c.operands = std::move(operands);
                c.derivedFrom = op.derivedFrom == kNoOp ? kNoOp : map[static_cast<size_t>(op.derivedFrom)];
                auto id = emit(std::move(c), k);
                if (!id) return id.error();
                map[k] = *id;
                continue;
            }
        }
        Op copy = op;
        for (OpId& o : copy.operands) o = map[static_cast<size_t>(o)];
        copy.derivedFrom = op.derivedFrom == kNoOp ? kNoOp : map[static_cast<size_t>(op.derivedFrom)];
        auto id = emit(std::move(copy), k);
        if (!id) return id.error();
        map[k] = *id;
    }
    for (OpId o : g.outputs()) CFP_TRY(out.addOutput(map[static_cast<size_t>(o)]));
    if (resolved == 0) return int64_t{0};
    // Drop what the rewrite left without a use: the intermediate stacks and their slices. Kept:
    // what reaches an output, the parameters, ops that had no use before (as the importer made
    // them), and what those read.
    std::vector<char> keep = liveOps(out);
    for (size_t k = 0; k < n; ++k)
        if (map[k] != kNoOp && (!wasLive[k] || g.op(static_cast<OpId>(k)).kind == OpKind::Parameter)) keep[static_cast<size_t>(map[k])] = 1;
    for (size_t i = keep.size(); i-- > 0;)
        if (keep[i])
            for (OpId in : out.op(static_cast<OpId>(i)).operands) keep[static_cast<size_t>(in)] = 1;
    Graph kept(out.name());
    PhaseHints keptHints;
    std::vector<OpId> remap(static_cast<size_t>(out.size()), kNoOp);
    for (const Op& op : out.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (!keep[k]) continue;
        Op copy = op;
        for (OpId& o : copy.operands) o = remap[static_cast<size_t>(o)];
        copy.derivedFrom = op.derivedFrom == kNoOp ? kNoOp : remap[static_cast<size_t>(op.derivedFrom)];
        auto id = kept.add(std::move(copy));
        if (!id) return id.error();
        remap[k] = *id;
        keptHints.push_back(outHints[k]);
    }
    for (OpId o : out.outputs()) CFP_TRY(kept.addOutput(remap[static_cast<size_t>(o)]));
    g = std::move(kept);
    hints = std::move(keptHints);
    return resolved;
}

Result<std::vector<std::string>> splitStackedParameters(Graph& g) {
    const auto n = static_cast<size_t>(g.size());
    const auto users = g.users();
    std::vector<char> split(n, 0);
    std::vector<std::string> names;
    for (const Op& op : g.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.kind != OpKind::Parameter || op.type.rank() < 2 || op.type.dims[0] < 2) continue;
        // Every row read on its own (each layer its weights).
        std::vector<char> read(static_cast<size_t>(op.type.dims[0]), 0);
        for (OpId u : users[k]) {
            const Op& s = g.op(u);
            if (rowSlice(g, s) && s.type.dims[0] == 1) read[static_cast<size_t>(s.attrs.slice.start[0])] = 1;
        }
        if (std::find(read.begin(), read.end(), 0) != read.end()) continue;
        split[k] = 1;
        names.push_back(op.name);
    }
    if (names.empty()) return names;
    Graph out(g.name());
    std::vector<OpId> map(n, kNoOp);
    std::vector<std::vector<OpId>> rowsOf(n);
    auto add = [&](Op op) -> Result<OpId> { return out.add(std::move(op)); };
    for (const Op& op : g.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (split[k]) {
            for (int64_t r = 0; r < op.type.dims[0]; ++r) {
                Op p = op;
                p.name = op.name + "[" + std::to_string(r) + "]";
                p.type.dims[0] = 1;
                p.operands.clear();
                auto id = add(std::move(p));
                if (!id) return id.error();
                rowsOf[k].push_back(*id);
            }
            // The whole stack, for its other uses (made where one exists): the rows concatenated,
            // in the phase of its first such use.
            bool whole = std::find(g.outputs().begin(), g.outputs().end(), op.id) != g.outputs().end();
            Phase phase = op.phase;
            for (OpId u : users[k]) {
                const Op& s = g.op(u);
                if (rowSlice(g, s) && s.type.dims[0] == 1) continue;
                if (!whole) phase = s.phase;
                whole = true;
            }
            if (whole) {
                Op c;
                c.kind = OpKind::Concatenate;
                c.name = op.name;
                c.type = op.type;
                c.phase = phase;
                c.scope = op.scope;
                c.attrs.dimensions = {0};
                c.operands = rowsOf[k];
                auto id = add(std::move(c));
                if (!id) return id.error();
                map[k] = *id;
            }
            continue;
        }
        if (rowSlice(g, op) && op.type.dims[0] == 1 && split[static_cast<size_t>(op.operands[0])]) {
            map[k] = rowsOf[static_cast<size_t>(op.operands[0])][static_cast<size_t>(op.attrs.slice.start[0])];
            continue;
        }
        Op copy = op;
        for (OpId& o : copy.operands) o = map[static_cast<size_t>(o)];
        copy.derivedFrom = op.derivedFrom == kNoOp ? kNoOp : map[static_cast<size_t>(op.derivedFrom)];
        auto id = add(std::move(copy));
        if (!id) return id.error();
        map[k] = *id;
    }
    for (OpId o : g.outputs()) CFP_TRY(out.addOutput(map[static_cast<size_t>(o)]));
    g = std::move(out);
    return names;
}

}  // namespace cfp
