#include "plan/pipeline.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <tuple>

namespace cfp {

char pipeActionLetter(PipeActionKind k) {
    switch (k) {
        case PipeActionKind::Forward: return 'F';
        case PipeActionKind::Backward: return 'B';
        case PipeActionKind::InputGrad: return 'I';
        case PipeActionKind::WeightGrad: return 'W';
        case PipeActionKind::OverlappedForwardBackward: return 'O';
    }
    return 'F';
}

PipeAction PipeAction::forwardPart() const {
    return overlapped() ? PipeAction{PipeActionKind::Forward, stage, microBatch} : *this;
}

PipeAction PipeAction::backwardPart() const {
    return overlapped() ? PipeAction{PipeActionKind::Backward, backwardStage, backwardMicroBatch} : *this;
}

std::string PipeAction::toString() const {
    if (overlapped()) return "(" + forwardPart().toString() + ";" + backwardPart().toString() + ")OVERLAP_F_B";
    return std::to_string(stage) + pipeActionLetter(kind) + std::to_string(microBatch);
}

PipeAction overlappedPair(const PipeAction& forward, const PipeAction& backward) {
    return PipeAction{PipeActionKind::OverlappedForwardBackward, forward.stage, forward.microBatch, backward.stage, backward.microBatch};
}

std::string_view pipeScheduleName(PipeScheduleKind k) {
    switch (k) {
        case PipeScheduleKind::GPipe: return "gpipe";
        case PipeScheduleKind::OneFOneB: return "1f1b";
        case PipeScheduleKind::Interleaved: return "interleaved";
        case PipeScheduleKind::ZeroBubbleH1: return "zb-h1";
        case PipeScheduleKind::ZeroBubbleH2: return "zb-h2";
        case PipeScheduleKind::ZeroBubbleV: return "zb-v";
        case PipeScheduleKind::DualPipeV: return "dualpipe-v";
        case PipeScheduleKind::DualPipe: return "dualpipe";
        case PipeScheduleKind::Custom: return "custom";
        case PipeScheduleKind::Mip: return "mip";
    }
    return "custom";
}

Result<PipeScheduleKind> parsePipeScheduleKind(std::string_view name) {
    for (PipeScheduleKind k : {PipeScheduleKind::GPipe, PipeScheduleKind::OneFOneB, PipeScheduleKind::Interleaved, PipeScheduleKind::ZeroBubbleH1,
                               PipeScheduleKind::ZeroBubbleH2, PipeScheduleKind::ZeroBubbleV, PipeScheduleKind::DualPipeV, PipeScheduleKind::DualPipe,
                               PipeScheduleKind::Mip})
        if (name == pipeScheduleName(k)) return k;
    if (name == "interleaved-1f1b") return PipeScheduleKind::Interleaved;
    return makeError("schedule.unknown", "unknown schedule '" + std::string(name) +
                                             "'; expected gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipe-v, dualpipe or mip");
}

bool plannerPricesSchedule(PipeScheduleKind k) {
    switch (k) {
        case PipeScheduleKind::GPipe:
        case PipeScheduleKind::OneFOneB:
        case PipeScheduleKind::Interleaved:
        case PipeScheduleKind::ZeroBubbleH1:
        case PipeScheduleKind::ZeroBubbleH2:
        case PipeScheduleKind::ZeroBubbleV:
        case PipeScheduleKind::DualPipeV:
        case PipeScheduleKind::Custom:
        case PipeScheduleKind::Mip:
        case PipeScheduleKind::DualPipe: return true;
    }
    return false;
}

Result<PipeScheduleKind> parsePlannedScheduleKind(std::string_view name) {
    auto kind = name == "custom" ? Result<PipeScheduleKind>(PipeScheduleKind::Custom) : parsePipeScheduleKind(name);
    if (!kind) return kind.error();
    if (!plannerPricesSchedule(*kind))
        return makeError("schedule.unsupported", "the planner prices gpipe, 1f1b, interleaved, zb-h1, zb-h2, zb-v, dualpipe-v, dualpipe, mip and "
                                                 "custom (a CSV); " + std::string(name) + " is replayed only by cfp schedule");
    return kind;
}

std::string_view pipePlacementName(PipePlacement p) {
    switch (p) {
        case PipePlacement::Looped: return "looped";
        case PipePlacement::VShape: return "v";
        case PipePlacement::Bidirectional: return "bidirectional";
    }
    return "looped";
}

Result<PipePlacement> parsePipePlacement(std::string_view name) {
    for (PipePlacement p : {PipePlacement::Looped, PipePlacement::VShape, PipePlacement::Bidirectional})
        if (name == pipePlacementName(p)) return p;
    if (name == "vshape") return PipePlacement::VShape;
    return makeError("schedule.unknown", "unknown placement '" + std::string(name) + "'; expected looped, v or bidirectional");
}

PipePlacement pipeSchedulePlacement(PipeScheduleKind k) {
    switch (k) {
        case PipeScheduleKind::ZeroBubbleV:
        case PipeScheduleKind::DualPipeV: return PipePlacement::VShape;
        case PipeScheduleKind::DualPipe: return PipePlacement::Bidirectional;
        default: return PipePlacement::Looped;
    }
}

int32_t pipeRankOf(PipePlacement placement, int32_t ranks, int32_t stage) {
    const int32_t i = stage % ranks;
    if (placement == PipePlacement::Looped) return i;
    return (stage / ranks) % 2 == 0 ? i : ranks - 1 - i;  // v and bidirectional: odd chunks run back up
}

int32_t pipeModelChunks(PipePlacement placement, int32_t ranks, int32_t chunks) {
    return placement == PipePlacement::Bidirectional ? ranks : ranks * chunks;
}

int32_t pipeModelChunkOf(PipePlacement placement, int32_t ranks, int32_t stage) {
    return placement == PipePlacement::Bidirectional ? stage % ranks : stage;
}

int32_t PipeSchedule::rankOf(int32_t stage) const { return pipeRankOf(placement, ranks, stage); }

int32_t PipeSchedule::previousStage(int32_t stage) const {
    if (placement == PipePlacement::Bidirectional && stage % ranks == 0) return -1;
    return stage - 1;
}

int32_t PipeSchedule::nextStage(int32_t stage) const {
    if (placement == PipePlacement::Bidirectional && stage % ranks == ranks - 1) return -1;
    return stage + 1 < stages() ? stage + 1 : -1;
}

bool PipeSchedule::runsOn(int32_t stage, int32_t microBatch) const {
    if (placement != PipePlacement::Bidirectional) return true;
    return (stage < ranks) == (microBatch < microBatches / 2);
}

std::string PipeSchedule::toCsv() const { return pipeActionsCsv(actions); }

std::string pipeActionsCsv(const std::vector<std::vector<PipeAction>>& actions) {
    std::string out;
    for (const auto& rank : actions) {
        for (size_t i = 0; i < rank.size(); ++i) out += (i ? "," : "") + rank[i].toString();
        out += '\n';
    }
    return out;
}

namespace {

Error shape(const std::string& message) { return makeError("schedule.shape", message); }

PipeAction act(PipeActionKind k, int32_t stage, int32_t mb) { return PipeAction{k, stage, mb}; }

// 1F1B on one rank (Narayanan et al. 2021, PipeDream-Flush): p − r − 1 forwards to fill the
// pipeline, then one forward and one backward alternately, then the remaining backwards. With
// `split`, B is I and each rank defers its first r weight gradients to fill the drain (ZB-H1, Qi
// et al. 2023: the same activation memory as 1F1B).
std::vector<PipeAction> oneFOneB(int32_t p, int32_t r, int32_t m, bool split) {
    std::vector<PipeAction> out;
    const int32_t warm = std::min(p - r - 1, m);
    for (int32_t i = 0; i < warm; ++i) out.push_back(act(PipeActionKind::Forward, r, i));
    int32_t nextW = 0;
    auto backward = [&](int32_t mb, bool steady) {
        if (!split) {
            out.push_back(act(PipeActionKind::Backward, r, mb));
            return;
        }
        out.push_back(act(PipeActionKind::InputGrad, r, mb));
        // Steady state: W lags its I by r micro-batches; the drain runs one deferred W after each I.
        if (!steady || mb >= r) out.push_back(act(PipeActionKind::WeightGrad, r, nextW++));
    };
    for (int32_t i = 0; i < m - warm; ++i) {
        out.push_back(act(PipeActionKind::Forward, r, warm + i));
        backward(i, true);
    }
    for (int32_t i = m - warm; i < m; ++i) backward(i, false);
    while (split && nextW < m) out.push_back(act(PipeActionKind::WeightGrad, r, nextW++));
    return out;
}

// Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_interleaving): the k-th
// forward of a rank runs chunk (k mod P·V) / P of micro-batch (k / P·V)·P + k mod P, the k-th
// backward the chunks in reverse; (P − r − 1)·2 + (V − 1)·P warm-up forwards (all of them when
// M = P), then one forward and one backward alternately.
std::vector<PipeAction> interleaved(int32_t p, int32_t v, int32_t r, int32_t m) {
    const int32_t total = m * v;
    auto stageOf = [&](int32_t k, bool forward) {
        const int32_t chunk = (k % (p * v)) / p;
        return (forward ? chunk : v - 1 - chunk) * p + r;
    };
    auto mbOf = [&](int32_t k) { return (k / (p * v)) * p + k % p; };
    const int32_t warm = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
    std::vector<PipeAction> out;
    for (int32_t k = 0; k < warm; ++k) out.push_back(act(PipeActionKind::Forward, stageOf(k, true), mbOf(k)));
    for (int32_t i = 0; i < total - warm; ++i) {
        out.push_back(act(PipeActionKind::Forward, stageOf(warm + i, true), mbOf(warm + i)));
        out.push_back(act(PipeActionKind::Backward, stageOf(i, false), mbOf(i)));
    }
    for (int32_t k = total - warm; k < total; ++k) out.push_back(act(PipeActionKind::Backward, stageOf(k, false), mbOf(k)));
    return out;
}

// ZB-H2 on one rank (Qi et al. 2023, arXiv 2401.10241, the handcrafted ZB-H2): 2(P − r) − 1
// warm-up forwards — what fills rank r until the first I comes back, so up to 2P − 1 micro-batches
// in flight — then, per micro-batch k, its I followed by its W and the next forward while
// k < M − 2P + 1 (I W F). In the last 2P − 1 rounds the W waits: the I is followed by the next
// forward, or, once every forward ran, by the oldest deferred W (I F, then I W), so the I's reach
// rank 0 in rounds of two units instead of three and every rank ends on the W's it deferred — the
// trapezoid of 1F1B becomes a parallelogram.
std::vector<PipeAction> zeroBubbleH2(int32_t p, int32_t r, int32_t m) {
    std::vector<PipeAction> out;
    const int32_t warm = std::min(2 * (p - r) - 1, m), steady = m - 2 * p + 1;
    int32_t nextF = 0, nextW = 0;
    while (nextF < warm) out.push_back(act(PipeActionKind::Forward, r, nextF++));
    for (int32_t k = 0; k < m; ++k) {
        out.push_back(act(PipeActionKind::InputGrad, r, k));
        if (k < steady) out.push_back(act(PipeActionKind::WeightGrad, r, nextW++));
        if (nextF < m) out.push_back(act(PipeActionKind::Forward, r, nextF++));
        else if (k >= steady) out.push_back(act(PipeActionKind::WeightGrad, r, nextW++));
    }
    while (nextW < m) out.push_back(act(PipeActionKind::WeightGrad, r, nextW++));
    return out;
}

// ZB-V on one rank (the zero-bubble repository's handcrafted ZB-V, which PyTorch's
// ScheduleZBVZeroBubble runs; Qi et al. 2024, arXiv 2405.15362): chunk 0 holds stage r, chunk 1
// stage 2P − 1 − r. Warm-up: 2(P − r) − 1 forwards of chunk 0, r pairs of forwards (chunk 1, then
// chunk 0), P − r rounds of chunk 1's F I W; steady: chunk 0's F I W and chunk 1's F I W; drain: r
// rounds of both chunks' I, P − r rounds of chunk 0's I W, then the deferred W's, chunk 1's first.
// Laid out for max(M, 2P − 1) micro-batches, the ones beyond M dropped (as PyTorch does).
std::vector<PipeAction> zeroBubbleV(int32_t p, int32_t r, int32_t m) {
    const int32_t n = std::max(m, 2 * p - 1);
    const int32_t s0 = r, s1 = 2 * p - 1 - r;
    int32_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    std::vector<PipeAction> out;
    auto add = [&](PipeActionKind k, int32_t stage, int32_t mb) {
        if (mb < m) out.push_back(act(k, stage, mb));
    };
    auto fib = [&](int32_t stage, int32_t& f, int32_t& b) {  // F, I and W of one chunk
        add(PipeActionKind::Forward, stage, f++);
        add(PipeActionKind::InputGrad, stage, b);
        add(PipeActionKind::WeightGrad, stage, b++);
    };
    for (int32_t i = 0; i < 2 * (p - r) - 1; ++i) add(PipeActionKind::Forward, s0, f0++);
    for (int32_t i = 0; i < r; ++i) {
        add(PipeActionKind::Forward, s1, f1++);
        add(PipeActionKind::Forward, s0, f0++);
    }
    for (int32_t i = 0; i < p - r; ++i) fib(s1, f1, b1);
    while (f1 < f0 || f0 < n) {
        if (f0 < n) add(PipeActionKind::Forward, s0, f0++);
        add(PipeActionKind::InputGrad, s0, b0);
        add(PipeActionKind::WeightGrad, s0, b0++);
        fib(s1, f1, b1);
    }
    int32_t w0 = b0, w1 = b1;
    for (int32_t i = 0; i < r; ++i) {
        add(PipeActionKind::InputGrad, s0, b0++);
        add(PipeActionKind::InputGrad, s1, b1++);
    }
    for (int32_t i = 0; i < p - r; ++i) {
        add(PipeActionKind::InputGrad, s0, b0++);
        add(PipeActionKind::WeightGrad, s0, w0++);
    }
    while (w1 < b1) add(PipeActionKind::WeightGrad, s1, w1++);
    while (w0 < b0) add(PipeActionKind::WeightGrad, s0, w0++);
    return out;
}

// One rank of DeepSeek's DualPipe (dualpipe.py) or DualPipeV (dualpipev.py, PyTorch's
// ScheduleDualPipeV): `halfRanks` H ranks on a side, this rank `h` of them, N micro-batches per
// phase. Phase 0 and phase 1 are the rank's two stages, each with its own micro-batches in order.
// The eight steps of the original: 2(H − h − 1) F0; h + 1 times F0 F1; H − h − 1 times I1 W F1;
// N − 2H + h + 1 times (F0&B1, F1&B0) — the last rank's first pair not overlapped; H − h − 1 times
// B1, F1&B0; h + 1 times B1 B0, from the middle one on as I (zero bubble); H − h − 1 times W I0;
// the deferred W's, oldest first.
struct DualPhase {
    int32_t stage = 0;
    int32_t firstMicroBatch = 0;
};

std::vector<PipeAction> dualPipe(int32_t halfRanks, int32_t h, int32_t n, DualPhase phase0, DualPhase phase1) {
    const DualPhase phase[2] = {phase0, phase1};
    int32_t f[2] = {0, 0}, b[2] = {0, 0};
    std::vector<PipeAction> out, deferred;  // deferred: the I's whose W is still to run
    auto forward = [&](int32_t k) { return act(PipeActionKind::Forward, phase[k].stage, phase[k].firstMicroBatch + f[k]++); };
    auto backward = [&](int32_t k, PipeActionKind kind) {
        PipeAction a = act(kind, phase[k].stage, phase[k].firstMicroBatch + b[k]++);
        if (kind == PipeActionKind::InputGrad) deferred.push_back(a);
        return a;
    };
    auto weight = [&] {
        if (deferred.empty()) return;  // not reached: the steps defer as many I's as they pop W's
        out.push_back(act(PipeActionKind::WeightGrad, deferred.front().stage, deferred.front().microBatch));
        deferred.erase(deferred.begin());
    };
    auto pair = [&](int32_t k0, int32_t k1) {
        const PipeAction fw = forward(k0);
        out.push_back(overlappedPair(fw, backward(k1, PipeActionKind::Backward)));
    };
    const int32_t rest = halfRanks - h - 1;
    for (int32_t i = 0; i < 2 * rest; ++i) out.push_back(forward(0));
    for (int32_t i = 0; i <= h; ++i) {
        out.push_back(forward(0));
        out.push_back(forward(1));
    }
    for (int32_t i = 0; i < rest; ++i) {
        out.push_back(backward(1, PipeActionKind::InputGrad));
        weight();
        out.push_back(forward(1));
    }
    for (int32_t i = 0; i < n - 2 * halfRanks + h + 1; ++i) {
        if (i == 0 && h == halfRanks - 1) {  // the turn: F0 feeds this rank's own F1
            out.push_back(forward(0));
            out.push_back(backward(1, PipeActionKind::Backward));
        } else {
            pair(0, 1);
        }
        pair(1, 0);
    }
    for (int32_t i = 0; i < rest; ++i) {
        out.push_back(backward(1, PipeActionKind::Backward));
        pair(1, 0);
    }
    bool split = false;
    for (int32_t i = 0; i <= h; ++i) {
        if (i == (h + 1) / 2 && h % 2 == 1) split = true;
        out.push_back(backward(1, split ? PipeActionKind::InputGrad : PipeActionKind::Backward));
        if (i == (h + 1) / 2 && h % 2 == 0) split = true;
        out.push_back(backward(0, split ? PipeActionKind::InputGrad : PipeActionKind::Backward));
    }
    for (int32_t i = 0; i < rest; ++i) {
        weight();
        out.push_back(backward(0, PipeActionKind::InputGrad));
    }
    while (!deferred.empty()) weight();
    return out;
}

// Checks that every stage has F and a backward (B, or I and W) of every micro-batch that runs on
// it exactly once, on the rank that holds it.
Result<void> checkComplete(const PipeSchedule& s) {
    std::map<std::tuple<int32_t, int32_t, char>, int> seen;
    for (size_t r = 0; r < s.actions.size(); ++r)
        for (const PipeAction& whole : s.actions[r]) {
            const std::string line = "line " + std::to_string(r + 1);
            for (const PipeAction& a : whole.overlapped() ? std::vector{whole.forwardPart(), whole.backwardPart()} : std::vector{whole}) {
                if (a.stage < 0 || a.stage >= s.stages() || a.microBatch < 0 || a.microBatch >= s.microBatches)
                    return makeError("schedule.csv", whole.toString() + " names a stage or micro-batch outside the pipeline", line);
                if (!s.runsOn(a.stage, a.microBatch))
                    return makeError("schedule.csv", whole.toString() + ": micro-batch " + std::to_string(a.microBatch) +
                                                         " does not run on stage " + std::to_string(a.stage) + " (bidirectional: micro-batches below " +
                                                         std::to_string(s.microBatches / 2) + " on stages below " + std::to_string(s.ranks) + ")",
                                     line);
                if (s.rankOf(a.stage) != static_cast<int32_t>(r))
                    return makeError("schedule.csv", whole.toString() + ": stage " + std::to_string(a.stage) + " is held by rank " +
                                                         std::to_string(s.rankOf(a.stage)) + " (placement " + std::string(pipePlacementName(s.placement)) + ")",
                                     line);
                if (++seen[{a.stage, a.microBatch, pipeActionLetter(a.kind)}] > 1)
                    return makeError("schedule.csv", a.toString() + " appears twice", line);
            }
        }
    for (int32_t st = 0; st < s.stages(); ++st)
        for (int32_t mb = 0; mb < s.microBatches; ++mb) {
            if (!s.runsOn(st, mb)) continue;
            const std::string what = "stage " + std::to_string(st) + ", micro-batch " + std::to_string(mb);
            const bool full = seen.count({st, mb, 'B'}) > 0, in = seen.count({st, mb, 'I'}) > 0, w = seen.count({st, mb, 'W'}) > 0;
            if (!seen.count({st, mb, 'F'})) return makeError("schedule.csv", what + " has no forward (F)");
            if (full == (in || w) || in != w)
                return makeError("schedule.csv", what + " needs one backward: B, or I and W");
        }
    return {};
}

bool number(std::string_view t, int32_t& v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    return !t.empty() && ec == std::errc() && p == t.data() + t.size();
}

// One action string: "2F0", "1B3", "0I1", "0W2" or "(2F4;1B0)OVERLAP_F_B" (its forward, then its
// full backward, as PyTorch writes them).
bool parseAction(std::string_view cell, PipeAction& a) {
    if (!cell.empty() && cell.front() == '(') {
        const size_t close = cell.find(')'), semi = cell.find(';');
        if (close == std::string_view::npos || semi == std::string_view::npos || semi > close || cell.substr(close + 1) != "OVERLAP_F_B") return false;
        PipeAction f, b;
        if (!parseAction(cell.substr(1, semi - 1), f) || !parseAction(cell.substr(semi + 1, close - semi - 1), b)) return false;
        if (f.kind != PipeActionKind::Forward || b.kind != PipeActionKind::Backward) return false;
        a = overlappedPair(f, b);
        return true;
    }
    const size_t k = cell.find_first_of("FBIW");
    if (k == std::string_view::npos || !number(cell.substr(0, k), a.stage) || !number(cell.substr(k + 1), a.microBatch)) return false;
    a.kind = cell[k] == 'F' ? PipeActionKind::Forward : cell[k] == 'B' ? PipeActionKind::Backward
            : cell[k] == 'I' ? PipeActionKind::InputGrad : PipeActionKind::WeightGrad;
    return true;
}

}  // namespace

Result<PipeSchedule> makeSchedule(PipeScheduleKind kind, int32_t ranks, int32_t chunks, int32_t microBatches) {
    if (ranks < 1 || chunks < 1 || microBatches < 1) return shape("ranks, chunks and micro-batches must be at least 1");
    if (kind == PipeScheduleKind::Mip)
        return makeError("schedule.unknown", "a mip schedule is searched by the schedule optimiser (optimizePipeSchedule), not generated");
    PipeSchedule s;
    s.kind = kind;
    s.placement = pipeSchedulePlacement(kind);
    s.ranks = ranks;
    s.chunks = chunks;
    s.microBatches = microBatches;
    s.actions.resize(static_cast<size_t>(ranks));
    const std::string name(pipeScheduleName(kind));
    if (s.placement != PipePlacement::Looped && chunks != 2)
        return shape(name + " places 2 chunks on every rank (chunks " + std::to_string(chunks) + ")");
    if (s.placement == PipePlacement::Looped && kind != PipeScheduleKind::Interleaved && chunks != 1)
        return shape(name + " runs one stage per rank (chunks " + std::to_string(chunks) + "); interleaved runs several");
    if (kind == PipeScheduleKind::DualPipeV && microBatches < 2 * ranks)
        return shape("dualpipe-v needs at least 2P micro-batches (" + std::to_string(2 * ranks) + "), as DeepSeek's DualPipeV asserts; got " +
                     std::to_string(microBatches));
    if (kind == PipeScheduleKind::DualPipe) {
        if (ranks % 2 != 0) return shape("dualpipe needs an even number of ranks (got " + std::to_string(ranks) + "): rank r mirrors rank P − 1 − r");
        if (microBatches % 2 != 0 || microBatches < 2 * ranks)
            return shape("dualpipe needs an even number of micro-batches, at least 2P (" + std::to_string(2 * ranks) + "), half from each end; got " +
                         std::to_string(microBatches));
    }
    for (int32_t r = 0; r < ranks; ++r) {
        auto& out = s.actions[static_cast<size_t>(r)];
        switch (kind) {
            case PipeScheduleKind::GPipe:
                for (int32_t mb = 0; mb < microBatches; ++mb) out.push_back(act(PipeActionKind::Forward, r, mb));
                for (int32_t mb = 0; mb < microBatches; ++mb) out.push_back(act(PipeActionKind::Backward, r, mb));
                break;
            case PipeScheduleKind::OneFOneB: out = oneFOneB(ranks, r, microBatches, false); break;
            case PipeScheduleKind::ZeroBubbleH1: out = oneFOneB(ranks, r, microBatches, true); break;
            case PipeScheduleKind::ZeroBubbleH2: out = zeroBubbleH2(ranks, r, microBatches); break;
            case PipeScheduleKind::Interleaved:
                if (chunks < 2) return shape("interleaved needs at least 2 chunks per rank");
                if (microBatches % ranks != 0)
                    return shape("interleaved needs the micro-batches (" + std::to_string(microBatches) + ") to be a multiple of the ranks (" +
                                 std::to_string(ranks) + "), as Megatron-LM does");
                out = interleaved(ranks, chunks, r, microBatches);
                break;
            case PipeScheduleKind::ZeroBubbleV: out = zeroBubbleV(ranks, r, microBatches); break;
            case PipeScheduleKind::DualPipeV: out = dualPipe(ranks, r, microBatches, {r, 0}, {2 * ranks - 1 - r, 0}); break;
            case PipeScheduleKind::DualPipe: {
                // Ranks of the first half run the downward micro-batches as phase 0, the others
                // (their mirror images) the upward ones.
                const int32_t half = ranks / 2, n = microBatches / 2;
                const DualPhase down{r, 0}, up{2 * ranks - 1 - r, n};
                out = r < half ? dualPipe(half, r, n, down, up) : dualPipe(half, ranks - 1 - r, n, up, down);
                break;
            }
            case PipeScheduleKind::Custom: return makeError("schedule.unknown", "a custom schedule is read from CSV, not generated");
            case PipeScheduleKind::Mip: break;  // refused above
        }
    }
    return s;
}

Result<PipeSchedule> scheduleFromCsv(std::string_view csv, int32_t ranks, int32_t chunks, PipePlacement placement) {
    PipeSchedule s;
    s.kind = PipeScheduleKind::Custom;
    s.placement = placement;
    s.ranks = ranks;
    s.chunks = chunks;
    if (placement == PipePlacement::Bidirectional && chunks != 2)
        return makeError("schedule.csv", "a bidirectional schedule holds 2 chunks per rank (chunks " + std::to_string(chunks) + ")");
    int32_t maxMb = -1;
    size_t line = 0, pos = 0;
    while (pos < csv.size()) {
        size_t eol = csv.find('\n', pos);
        if (eol == std::string_view::npos) eol = csv.size();
        std::string_view text = csv.substr(pos, eol - pos);
        pos = eol + 1;
        ++line;
        if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
        if (text.empty() && pos >= csv.size()) break;
        std::vector<PipeAction> rank;
        size_t start = 0;
        while (start <= text.size()) {
            const size_t comma = std::min(text.find(',', start), text.size());
            std::string_view cell = text.substr(start, comma - start);
            start = comma + 1;
            while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
            while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
            if (!cell.empty()) {
                PipeAction a;
                if (!parseAction(cell, a))
                    return makeError("schedule.csv", "'" + std::string(cell) + "' is not an action such as 2F0, 1B3, 0I1, 0W2 or (2F4;1B0)OVERLAP_F_B",
                                     "line " + std::to_string(line));
                maxMb = std::max({maxMb, a.microBatch, a.backwardMicroBatch});
                rank.push_back(a);
            }
            if (comma == text.size()) break;
        }
        s.actions.push_back(std::move(rank));
    }
    if (static_cast<int32_t>(s.actions.size()) != ranks)
        return makeError("schedule.csv", "the schedule has " + std::to_string(s.actions.size()) + " lines, one per rank: expected " + std::to_string(ranks));
    s.microBatches = maxMb + 1;
    if (s.microBatches < 1) return makeError("schedule.csv", "the schedule has no actions");
    if (placement == PipePlacement::Bidirectional && s.microBatches % 2 != 0)
        return makeError("schedule.csv", "a bidirectional schedule runs half its micro-batches from each end; it names " + std::to_string(s.microBatches));
    if (auto ok = checkComplete(s); !ok) return ok.error();
    return s;
}

double PipeReplay::bubbleSeconds() const {
    double worst = 0;
    for (size_t r = 0; r < busySeconds.size(); ++r) worst = std::max(worst, seconds - busySeconds[r]);
    return worst;
}

double PipeReplay::bubbleFraction() const { return seconds > 0 ? bubbleSeconds() / seconds : 0.0; }

double PipeReplay::spanBubbleSeconds() const {
    double worst = 0;
    for (size_t r = 0; r < busySeconds.size(); ++r) worst = std::max(worst, endSeconds[r] - startSeconds[r] - busySeconds[r]);
    return worst;
}

Result<PipeReplay> replaySchedule(const PipeSchedule& s, const std::vector<StageTimes>& times, double transferSeconds, PipeOverlap overlap) {
    const int32_t stages = s.stages();
    if (times.size() != 1 && times.size() != static_cast<size_t>(stages))
        return shape("stage times for " + std::to_string(times.size()) + " stages; the pipeline has " + std::to_string(stages));
    auto at = [&](int32_t stage) -> const StageTimes& { return times.size() == 1 ? times[0] : times[static_cast<size_t>(stage)]; };
    const double never = std::numeric_limits<double>::infinity();
    // End time of each (stage, micro-batch) action kind; infinity until placed.
    const size_t cells = static_cast<size_t>(stages) * static_cast<size_t>(s.microBatches);
    std::vector<double> fEnd(cells, never), bEnd(cells, never), iEnd(cells, never);
    auto cell = [&](int32_t stage, int32_t mb) { return static_cast<size_t>(stage) * static_cast<size_t>(s.microBatches) + static_cast<size_t>(mb); };
    const size_t ranks = s.actions.size();
    PipeReplay out;
    out.busySeconds.assign(ranks, 0.0);
    out.startSeconds.assign(ranks, 0.0);
    out.endSeconds.assign(ranks, 0.0);
    out.peakActivation.assign(ranks, 0.0);
    out.peakInFlight.assign(ranks, 0);
    std::vector<size_t> next(ranks, 0);
    std::vector<double> free(ranks, 0.0), held(ranks, 0.0);
    std::vector<int32_t> inFlight(ranks, 0);
    size_t remaining = 0;
    for (const auto& r : s.actions) remaining += r.size();
    auto hop = [&](int32_t a, int32_t b) { return s.rankOf(a) == s.rankOf(b) ? 0.0 : transferSeconds; };
    // When a single action's inputs are there (infinity: not yet).
    auto readyOne = [&](const PipeAction& a) -> double {
        const size_t c = cell(a.stage, a.microBatch);
        switch (a.kind) {
            case PipeActionKind::Forward: {
                const int32_t before = s.previousStage(a.stage);
                return before < 0 ? 0.0 : fEnd[cell(before, a.microBatch)] + hop(before, a.stage);
            }
            case PipeActionKind::Backward:
            case PipeActionKind::InputGrad: {
                const int32_t after = s.nextStage(a.stage);
                if (after < 0) return fEnd[c];
                const size_t up = cell(after, a.microBatch);
                return std::max(fEnd[c], std::min(bEnd[up], iEnd[up]) + hop(after, a.stage));
            }
            case PipeActionKind::WeightGrad: return iEnd[c];
            case PipeActionKind::OverlappedForwardBackward: return never;  // split by the caller
        }
        return never;
    };
    auto duration = [&](const PipeAction& a) {
        const StageTimes& t = at(a.stage);
        switch (a.kind) {
            case PipeActionKind::Forward: return t.forward;
            case PipeActionKind::Backward: return t.inputGrad + t.weightGrad;
            case PipeActionKind::InputGrad: return t.inputGrad;
            case PipeActionKind::WeightGrad: return t.weightGrad;
            case PipeActionKind::OverlappedForwardBackward: break;
        }
        return 0.0;
    };
    while (remaining > 0) {
        bool progress = false;
        for (size_t r = 0; r < ranks; ++r) {
            while (next[r] < s.actions[r].size()) {
                const PipeAction& whole = s.actions[r][next[r]];
                const PipeAction parts[2] = {whole.forwardPart(), whole.backwardPart()};
                const size_t count = whole.overlapped() ? 2 : 1;
                double when = 0, d = 0;
                for (size_t k = 0; k < count; ++k) {
                    when = std::max(when, readyOne(parts[k]));
                    d = k == 0 || overlap == PipeOverlap::Serial ? d + duration(parts[k]) : std::max(d, duration(parts[k]));
                }
                if (when == never) break;
                const double start = std::max(free[r], when), end = start + d;
                // A pair's forward takes its activations before its backward frees its own.
                for (size_t k = 0; k < count; ++k) {
                    const PipeAction& a = parts[k];
                    const StageTimes& t = at(a.stage);
                    const size_t c = cell(a.stage, a.microBatch);
                    if (a.kind == PipeActionKind::Forward) {
                        fEnd[c] = end;
                        held[r] += t.activationBytes;
                        ++inFlight[r];
                        out.peakActivation[r] = std::max(out.peakActivation[r], held[r]);
                        out.peakInFlight[r] = std::max(out.peakInFlight[r], inFlight[r]);
                    } else if (a.kind == PipeActionKind::InputGrad) {
                        iEnd[c] = end;
                    } else {
                        if (a.kind == PipeActionKind::Backward) bEnd[c] = end;
                        held[r] -= t.activationBytes;
                        --inFlight[r];
                    }
                }
                if (next[r] == 0) out.startSeconds[r] = start;
                free[r] = end;
                out.busySeconds[r] += d;
                out.endSeconds[r] = end;
                out.events.push_back({whole, static_cast<int32_t>(r), start, end});
                ++next[r];
                --remaining;
                progress = true;
            }
        }
        if (!progress) {
            std::string waiting;
            for (size_t r = 0; r < ranks && waiting.empty(); ++r)
                if (next[r] < s.actions[r].size()) waiting = "rank " + std::to_string(r) + "'s " + s.actions[r][next[r]].toString();
            return makeError("schedule.deadlock", "the schedule cannot run: " + waiting + " waits for an action that runs after it");
        }
    }
    for (double e : out.endSeconds) out.seconds = std::max(out.seconds, e);
    return out;
}

}  // namespace cfp
