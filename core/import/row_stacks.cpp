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

// A run of rows of a stack: an op of one row (whole), or rows [first, last) of an op that is
// neither a stack of concatenates nor a slice of one.
struct Piece {
    OpId op = kNoOp;
    int64_t first = 0, last = 0;  // whole: 0, 1
    bool whole = false;
    int64_t rows() const { return last - first; }
};

// Appends `p` to `out`, merged with the last piece where they are consecutive rows of one op.
void append(std::vector<Piece>& out, const Piece& p) {
    if (!p.whole && !out.empty() && !out.back().whole && out.back().op == p.op && out.back().last == p.first) {
        out.back().last = p.last;
        return;
    }
    out.push_back(p);
}

// Rows [first, last) of a stack made of `pieces`.
std::vector<Piece> rowsOf(const std::vector<Piece>& pieces, int64_t first, int64_t last) {
    std::vector<Piece> out;
    int64_t at = 0;
    for (const Piece& p : pieces) {
        const int64_t lo = std::max(first, at), hi = std::min(last, at + p.rows());
        if (lo < hi) append(out, p.whole ? p : Piece{p.op, p.first + (lo - at), p.first + (hi - at), false});
        at += p.rows();
        if (at >= last) break;
    }
    return out;
}

std::string freshName(const Graph& g, const std::string& base) {
    if (g.find(base) == kNoOp) return base;
    for (int i = 1;; ++i)
        if (std::string n = base + "." + std::to_string(i); g.find(n) == kNoOp) return n;
}

// `op` with its operands (and provenance) as `map` renames them.
Op remapped(const Op& op, const std::vector<OpId>& map) {
    Op copy = op;
    for (OpId& o : copy.operands) o = map[static_cast<size_t>(o)];
    copy.derivedFrom = op.derivedFrom == kNoOp ? kNoOp : map[static_cast<size_t>(op.derivedFrom)];
    return copy;
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
    // Each stack's pieces (memo), for concatenates along dim 0 and slices of dim 0, kept until
    // their last user is done: a loop of L iterations costs O(L) per stack, not O(L²).
    std::vector<std::vector<Piece>> memo(n);
    std::vector<char> known(n, 0);
    std::vector<size_t> lastUser(n, 0);
    for (const Op& op : g.ops())
        for (OpId o : op.operands) lastUser[static_cast<size_t>(o)] = static_cast<size_t>(op.id);
    auto piecesOfOperand = [&](OpId p) -> std::vector<Piece> {
        const auto kp = static_cast<size_t>(p);
        if (known[kp]) return memo[kp];
        const Op& op = g.op(p);
        if (op.type.dims[0] == 1) return {Piece{p, 0, 1, true}};
        return {Piece{p, 0, op.type.dims[0], false}};
    };
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
    // Rows [first, last) of `source` (an op of `g`) as a slice made like `like` (its name and
    // scope) for the op at `k`; the source itself when that is all of it.
    auto sliceOf = [&](OpId source, int64_t first, int64_t last, const Op& like, const std::string& name, size_t k) -> Result<OpId> {
        const Op& src = g.op(source);
        if (first == 0 && last == src.type.dims[0]) return map[static_cast<size_t>(source)];
        Op s = like;
        s.kind = OpKind::Slice;
        s.name = freshName(out, name);
        s.operands = {map[static_cast<size_t>(source)]};
        s.type = src.type;
        s.type.dims[0] = last - first;
        s.attrs = OpAttrs{};
        s.attrs.slice.start.assign(src.type.dims.size(), 0);
        s.attrs.slice.limit = src.type.dims;
        s.attrs.slice.stride.assign(src.type.dims.size(), 1);
        s.attrs.slice.start[0] = first;
        s.attrs.slice.limit[0] = last;
        s.derivedFrom = kNoOp;
        return emit(std::move(s), k);
    };
    for (const Op& op : g.ops()) {
        const auto k = static_cast<size_t>(op.id);
        // The memos this op's operands no longer need after it.
        struct Release {
            const Op& op;
            std::vector<std::vector<Piece>>& memo;
            const std::vector<size_t>& lastUser;
            ~Release() {
                for (OpId o : op.operands)
                    if (lastUser[static_cast<size_t>(o)] == static_cast<size_t>(op.id)) std::vector<Piece>().swap(memo[static_cast<size_t>(o)]);
            }
        } release{op, memo, lastUser};
        if (rowConcat(op)) {
            std::vector<Piece> pieces;
            for (OpId p : op.operands)
                for (const Piece& piece : piecesOfOperand(p)) append(pieces, piece);
            memo[k] = pieces;
            known[k] = 1;
            bool stacked = false;
            for (OpId p : op.operands)
                if (rowConcat(g.op(p)) || rowSlice(g, g.op(p))) stacked = true;
            if (stacked) {
                std::vector<OpId> operands;
                for (const Piece& p : pieces) {
                    if (p.whole) {
                        operands.push_back(map[static_cast<size_t>(p.op)]);
                        continue;
                    }
                    auto s = sliceOf(p.op, p.first, p.last, op, op.name + ".rows" + std::to_string(p.first) + "_" + std::to_string(p.last), k);
                    if (!s) return s.error();
                    operands.push_back(*s);
                }
                if (operands.size() == 1) {
                    map[k] = operands[0];
                    continue;
                }
                Op c = remapped(op, map);
                c.operands = std::move(operands);
                auto id = emit(std::move(c), k);
                if (!id) return id.error();
                map[k] = *id;
                continue;
            }
        } else if (rowSlice(g, op)) {
            const int64_t first = op.attrs.slice.start[0], last = op.attrs.slice.limit[0];
            memo[k] = rowsOf(piecesOfOperand(op.operands[0]), first, last);
            known[k] = 1;
            const std::vector<Piece>& own = memo[k];
            // A one-row read of a stack an earlier op wrote: that op, or its row of the stack's source.
            if (op.type.dims[0] == 1 && own.size() == 1 && known[static_cast<size_t>(op.operands[0])]) {
                const Piece& p = own.front();
                const bool moved = p.op != op.operands[0] || p.first != first;
                if (moved) {
                    ++resolved;
                    if (p.whole) {
                        map[k] = map[static_cast<size_t>(p.op)];
                        continue;
                    }
                    auto s = sliceOf(p.op, p.first, p.last, op, op.name, k);
                    if (!s) return s.error();
                    map[k] = *s;
                    continue;
                }
            }
        }
        auto id = emit(remapped(op, map), k);
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
        auto id = kept.add(remapped(op, remap));
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
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Trainable || op.type.rank() < 2 || op.type.dims[0] < 2) continue;
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
    for (const Op& op : g.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (split[k]) {
            for (int64_t r = 0; r < op.type.dims[0]; ++r) {
                Op p = op;
                p.name = op.name + "[" + std::to_string(r) + "]";
                p.type.dims[0] = 1;
                p.operands.clear();
                auto id = out.add(std::move(p));
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
                auto id = out.add(std::move(c));
                if (!id) return id.error();
                map[k] = *id;
            }
            continue;
        }
        if (rowSlice(g, op) && op.type.dims[0] == 1 && split[static_cast<size_t>(op.operands[0])]) {
            map[k] = rowsOf[static_cast<size_t>(op.operands[0])][static_cast<size_t>(op.attrs.slice.start[0])];
            continue;
        }
        auto id = out.add(remapped(op, map));
        if (!id) return id.error();
        map[k] = *id;
    }
    for (OpId o : g.outputs()) CFP_TRY(out.addOutput(map[static_cast<size_t>(o)]));
    g = std::move(out);
    return names;
}

}  // namespace cfp
