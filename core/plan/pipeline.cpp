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
    }
    return 'F';
}

std::string PipeAction::toString() const { return std::to_string(stage) + pipeActionLetter(kind) + std::to_string(microBatch); }

std::string_view pipeScheduleName(PipeScheduleKind k) {
    switch (k) {
        case PipeScheduleKind::GPipe: return "gpipe";
        case PipeScheduleKind::OneFOneB: return "1f1b";
        case PipeScheduleKind::Interleaved: return "interleaved";
        case PipeScheduleKind::ZeroBubbleH1: return "zb-h1";
        case PipeScheduleKind::Custom: return "custom";
    }
    return "custom";
}

Result<PipeScheduleKind> parsePipeScheduleKind(std::string_view name) {
    for (PipeScheduleKind k : {PipeScheduleKind::GPipe, PipeScheduleKind::OneFOneB, PipeScheduleKind::Interleaved, PipeScheduleKind::ZeroBubbleH1})
        if (name == pipeScheduleName(k)) return k;
    if (name == "interleaved-1f1b") return PipeScheduleKind::Interleaved;
    return makeError("schedule.unknown", "unknown schedule '" + std::string(name) + "'; expected gpipe, 1f1b, interleaved or zb-h1");
}

std::string PipeSchedule::toCsv() const {
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

// Checks that every stage has F and a backward (B, or I and W) of every micro-batch exactly once,
// on the rank that holds it.
Result<void> checkComplete(const PipeSchedule& s) {
    std::map<std::tuple<int32_t, int32_t, char>, int> seen;
    for (size_t r = 0; r < s.actions.size(); ++r)
        for (const PipeAction& a : s.actions[r]) {
            if (a.stage < 0 || a.stage >= s.stages() || a.microBatch < 0 || a.microBatch >= s.microBatches)
                return makeError("schedule.csv", a.toString() + " names a stage or micro-batch outside the pipeline", "line " + std::to_string(r + 1));
            if (s.rankOf(a.stage) != static_cast<int32_t>(r))
                return makeError("schedule.csv", a.toString() + ": stage " + std::to_string(a.stage) + " is held by rank " + std::to_string(s.rankOf(a.stage)),
                                 "line " + std::to_string(r + 1));
            if (++seen[{a.stage, a.microBatch, pipeActionLetter(a.kind)}] > 1)
                return makeError("schedule.csv", a.toString() + " appears twice", "line " + std::to_string(r + 1));
        }
    for (int32_t st = 0; st < s.stages(); ++st)
        for (int32_t mb = 0; mb < s.microBatches; ++mb) {
            const std::string what = "stage " + std::to_string(st) + ", micro-batch " + std::to_string(mb);
            const bool full = seen.count({st, mb, 'B'}) > 0, in = seen.count({st, mb, 'I'}) > 0, w = seen.count({st, mb, 'W'}) > 0;
            if (!seen.count({st, mb, 'F'})) return makeError("schedule.csv", what + " has no forward (F)");
            if (full == (in || w) || in != w)
                return makeError("schedule.csv", what + " needs one backward: B, or I and W");
        }
    return {};
}

}  // namespace

Result<PipeSchedule> makeSchedule(PipeScheduleKind kind, int32_t ranks, int32_t chunks, int32_t microBatches) {
    if (ranks < 1 || chunks < 1 || microBatches < 1) return shape("ranks, chunks and micro-batches must be at least 1");
    PipeSchedule s;
    s.kind = kind;
    s.ranks = ranks;
    s.chunks = chunks;
    s.microBatches = microBatches;
    s.actions.resize(static_cast<size_t>(ranks));
    if (kind != PipeScheduleKind::Interleaved && chunks != 1)
        return shape(std::string(pipeScheduleName(kind)) + " runs one stage per rank (chunks " + std::to_string(chunks) + "); interleaved runs several");
    for (int32_t r = 0; r < ranks; ++r) {
        auto& out = s.actions[static_cast<size_t>(r)];
        switch (kind) {
            case PipeScheduleKind::GPipe:
                for (int32_t mb = 0; mb < microBatches; ++mb) out.push_back(act(PipeActionKind::Forward, r, mb));
                for (int32_t mb = 0; mb < microBatches; ++mb) out.push_back(act(PipeActionKind::Backward, r, mb));
                break;
            case PipeScheduleKind::OneFOneB: out = oneFOneB(ranks, r, microBatches, false); break;
            case PipeScheduleKind::ZeroBubbleH1: out = oneFOneB(ranks, r, microBatches, true); break;
            case PipeScheduleKind::Interleaved:
                if (chunks < 2) return shape("interleaved needs at least 2 chunks per rank");
                if (microBatches % ranks != 0)
                    return shape("interleaved needs the micro-batches (" + std::to_string(microBatches) + ") to be a multiple of the ranks (" +
                                 std::to_string(ranks) + "), as Megatron-LM does");
                out = interleaved(ranks, chunks, r, microBatches);
                break;
            case PipeScheduleKind::Custom: return makeError("schedule.unknown", "a custom schedule is read from CSV, not generated");
        }
    }
    return s;
}

Result<PipeSchedule> scheduleFromCsv(std::string_view csv, int32_t ranks, int32_t chunks) {
    PipeSchedule s;
    s.kind = PipeScheduleKind::Custom;
    s.ranks = ranks;
    s.chunks = chunks;
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
                const size_t k = cell.find_first_of("FBIW");
                PipeAction a;
                auto num = [](std::string_view t, int32_t& v) {
                    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
                    return !t.empty() && ec == std::errc() && p == t.data() + t.size();
                };
                if (k == std::string_view::npos || !num(cell.substr(0, k), a.stage) || !num(cell.substr(k + 1), a.microBatch))
                    return makeError("schedule.csv", "'" + std::string(cell) + "' is not an action such as 2F0, 1B3, 0I1 or 0W2", "line " + std::to_string(line));
                a.kind = cell[k] == 'F' ? PipeActionKind::Forward : cell[k] == 'B' ? PipeActionKind::Backward
                        : cell[k] == 'I' ? PipeActionKind::InputGrad : PipeActionKind::WeightGrad;
                maxMb = std::max(maxMb, a.microBatch);
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
    if (auto ok = checkComplete(s); !ok) return ok.error();
    return s;
}

double PipeReplay::bubbleSeconds() const {
    double worst = 0;
    for (size_t r = 0; r < busySeconds.size(); ++r) worst = std::max(worst, seconds - busySeconds[r]);
    return worst;
}

double PipeReplay::bubbleFraction() const { return seconds > 0 ? bubbleSeconds() / seconds : 0.0; }

Result<PipeReplay> replaySchedule(const PipeSchedule& s, const std::vector<StageTimes>& times, double transferSeconds) {
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
    out.endSeconds.assign(ranks, 0.0);
    out.peakActivation.assign(ranks, 0.0);
    out.peakInFlight.assign(ranks, 0);
    std::vector<size_t> next(ranks, 0);
    std::vector<double> free(ranks, 0.0), held(ranks, 0.0);
    std::vector<int32_t> inFlight(ranks, 0);
    size_t remaining = 0;
    for (const auto& r : s.actions) remaining += r.size();
    auto hop = [&](int32_t a, int32_t b) { return s.rankOf(a) == s.rankOf(b) ? 0.0 : transferSeconds; };
    // When an action's inputs are there (infinity: not yet).
    auto ready = [&](const PipeAction& a) -> double {
        const size_t c = cell(a.stage, a.microBatch);
        switch (a.kind) {
            case PipeActionKind::Forward:
                return a.stage == 0 ? 0.0 : fEnd[cell(a.stage - 1, a.microBatch)] + hop(a.stage - 1, a.stage);
            case PipeActionKind::Backward:
            case PipeActionKind::InputGrad: {
                if (a.stage == stages - 1) return fEnd[c];
                const size_t up = cell(a.stage + 1, a.microBatch);
                return std::max(fEnd[c], std::min(bEnd[up], iEnd[up]) + hop(a.stage + 1, a.stage));
            }
            case PipeActionKind::WeightGrad: return iEnd[c];
        }
        return never;
    };
    while (remaining > 0) {
        bool progress = false;
        for (size_t r = 0; r < ranks; ++r) {
            while (next[r] < s.actions[r].size()) {
                const PipeAction& a = s.actions[r][next[r]];
                const double when = ready(a);
                if (when == never) break;
                const StageTimes& t = at(a.stage);
                const double d = a.kind == PipeActionKind::Forward ? t.forward
                                 : a.kind == PipeActionKind::Backward ? t.inputGrad + t.weightGrad
                                 : a.kind == PipeActionKind::InputGrad ? t.inputGrad
                                                                       : t.weightGrad;
                const double start = std::max(free[r], when), end = start + d;
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
                free[r] = end;
                out.busySeconds[r] += d;
                out.endSeconds[r] = end;
                out.events.push_back({a, static_cast<int32_t>(r), start, end});
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
