#include "plan/pipeline_mip.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#ifdef CFP_HAVE_CBC
#include <coin/Cbc_C_Interface.h>

#include "util/child_process.h"
#endif

namespace cfp {

const char* pipeMipStatusName(PipeMipStatus s) {
    switch (s) {
        case PipeMipStatus::Optimal: return "optimal";
        case PipeMipStatus::TimeLimit: return "time_limit";
        case PipeMipStatus::Cancelled: return "cancelled";
    }
    return "?";
}

#ifdef CFP_HAVE_CBC
bool pipeMipSolverAvailable() { return true; }
#else
bool pipeMipSolverAvailable() { return false; }
#endif

namespace {

constexpr int kF = 0, kI = 1, kW = 2;
constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kNoLower = -1e30;  // a row without a lower side, as CBC reads it
constexpr int64_t kMaxCounts = 400000;

Error shapeError(const std::string& message) { return makeError("schedule.shape", message); }

// The pipeline's stages and their first-in-first-out chains: chain 3s + k holds kind k (F, I, W)
// of the micro-batches that run on stage s, in order.
struct Instance {
    PipeSchedule shape;  // placement, ranks, chunks, micro-batches; no actions
    int32_t stages = 0;
    std::vector<int32_t> first, count;  // per stage: its first micro-batch, how many run on it
    std::vector<std::array<double, 3>> seconds;  // per stage: F, I, W
    double transfer = 0;

    int32_t chains() const { return 3 * stages; }
    int32_t rankOfChain(int32_t c) const { return shape.rankOf(c / 3); }
    double hop(int32_t a, int32_t b, double t) const { return shape.rankOf(a) == shape.rankOf(b) ? 0.0 : t; }
};

// Per chain and item: a start time.
using Starts = std::vector<std::vector<double>>;

Starts earliestStarts(const Instance& in, const std::vector<std::array<double, 3>>& d, double transfer) {
    Starts est(static_cast<size_t>(in.chains()));
    for (int32_t c = 0; c < in.chains(); ++c) est[static_cast<size_t>(c)].assign(static_cast<size_t>(in.count[static_cast<size_t>(c / 3)]), 0.0);
    auto e = [&](int32_t s, int k) -> std::vector<double>& { return est[static_cast<size_t>(3 * s + k)]; };
    auto du = [&](int32_t s, int k) { return d[static_cast<size_t>(s)][static_cast<size_t>(k)]; };
    // previousStage(s) < s < nextStage(s): forwards in stage order, input gradients in reverse.
    for (int32_t s = 0; s < in.stages; ++s) {
        const int32_t prev = in.shape.previousStage(s);
        for (size_t i = 0; i < e(s, kF).size(); ++i) {
            double t = i > 0 ? e(s, kF)[i - 1] + du(s, kF) : 0.0;
            if (prev >= 0) t = std::max(t, e(prev, kF)[i] + du(prev, kF) + in.hop(prev, s, transfer));
            e(s, kF)[i] = t;
        }
    }
    for (int32_t s = in.stages - 1; s >= 0; --s) {
        const int32_t next = in.shape.nextStage(s);
        for (size_t i = 0; i < e(s, kI).size(); ++i) {
            double t = std::max(i > 0 ? e(s, kI)[i - 1] + du(s, kI) : 0.0, e(s, kF)[i] + du(s, kF));
            if (next >= 0) t = std::max(t, e(next, kI)[i] + du(next, kI) + in.hop(next, s, transfer));
            e(s, kI)[i] = t;
        }
        for (size_t i = 0; i < e(s, kW).size(); ++i)
            e(s, kW)[i] = std::max(i > 0 ? e(s, kW)[i - 1] + du(s, kW) : 0.0, e(s, kI)[i] + du(s, kI));
    }
    return est;
}

// No schedule ends before any rank has run all its work from the earliest start of its actions,
// nor before any action can end.
double lowerBound(const Instance& in, const std::vector<std::array<double, 3>>& d, double transfer) {
    const Starts est = earliestStarts(in, d, transfer);
    std::vector<double> begin(static_cast<size_t>(in.shape.ranks), kNever), work(static_cast<size_t>(in.shape.ranks), 0.0);
    double bound = 0;
    for (int32_t c = 0; c < in.chains(); ++c) {
        const auto& e = est[static_cast<size_t>(c)];
        if (e.empty()) continue;
        const double dur = d[static_cast<size_t>(c / 3)][static_cast<size_t>(c % 3)];
        const auto r = static_cast<size_t>(in.rankOfChain(c));
        begin[r] = std::min(begin[r], e.front());
        work[r] += dur * static_cast<double>(e.size());
        bound = std::max(bound, e.back() + dur);
    }
    for (size_t r = 0; r < begin.size(); ++r)
        if (begin[r] < kNever) bound = std::max(bound, begin[r] + work[r]);
    return bound;
}

// The most stages of one micro-batch's path that a rank holds.
int32_t footprint(const PipeSchedule& shape, int32_t rank) {
    int32_t most = 0;
    for (int32_t start = 0; start < shape.stages(); ++start) {
        if (shape.previousStage(start) >= 0) continue;  // a path starts here
        int32_t n = 0;
        for (int32_t s = start; s >= 0; s = shape.nextStage(s)) n += shape.rankOf(s) == rank ? 1 : 0;
        most = std::max(most, n);
    }
    return most;
}

// A full backward as I then W, an overlapped pair as F, I, W: what the MIP can express, with the
// same order of memory events and, replayed, a makespan no longer than the original's.
PipeSchedule splitBackward(const PipeSchedule& s) {
    PipeSchedule out = s;
    for (auto& rank : out.actions) {
        std::vector<PipeAction> split;
        for (const PipeAction& whole : rank) {
            for (const PipeAction& a : whole.overlapped() ? std::vector{whole.forwardPart(), whole.backwardPart()} : std::vector{whole}) {
                if (a.kind == PipeActionKind::Backward) {
                    split.push_back(PipeAction{PipeActionKind::InputGrad, a.stage, a.microBatch});
                    split.push_back(PipeAction{PipeActionKind::WeightGrad, a.stage, a.microBatch});
                } else {
                    split.push_back(a);
                }
            }
        }
        rank = std::move(split);
    }
    return out;
}

int32_t peakOf(const PipeReplay& r) { return r.peakInFlight.empty() ? 0 : *std::max_element(r.peakInFlight.begin(), r.peakInFlight.end()); }

// Which action a greedy list schedule runs first among those that can start at the same time.
enum class GreedyOrder : uint8_t { InputFirst, ForwardFirst };

// A greedy list schedule under a memory limit. A micro-batch enters the pipeline (its first
// forward runs) only when every rank can reserve a stage activation for each of its stages there
// on top of what it holds and has reserved; its W on a rank gives one back. So no rank ever holds
// more than `limit`, and every micro-batch that entered can finish: no deadlock. Each step runs
// the action that can start first; ties by `order`, then W last, the earlier micro-batch, the
// lower stage.
Result<PipeSchedule> greedySchedule(const Instance& in, int32_t limit, GreedyOrder order) {
    const PipeSchedule& sh = in.shape;
    const auto ranks = static_cast<size_t>(sh.ranks);
    // Per stage that starts a path: the stages of that path on each rank.
    std::vector<std::vector<int32_t>> needs(static_cast<size_t>(in.stages));
    for (int32_t start = 0; start < in.stages; ++start) {
        if (sh.previousStage(start) >= 0) continue;
        auto& n = needs[static_cast<size_t>(start)];
        n.assign(ranks, 0);
        for (int32_t st = start; st >= 0; st = sh.nextStage(st)) ++n[static_cast<size_t>(sh.rankOf(st))];
        for (int32_t x : n)
            if (x > limit) return makeError("schedule.memory_limit", "the memory limit admits no micro-batch");
    }
    std::vector<std::vector<double>> end(static_cast<size_t>(in.chains()));
    for (int32_t c = 0; c < in.chains(); ++c) end[static_cast<size_t>(c)].assign(static_cast<size_t>(in.count[static_cast<size_t>(c / 3)]), kNever);
    std::vector<size_t> head(static_cast<size_t>(in.chains()), 0);
    std::vector<double> free(ranks, 0.0);
    std::vector<int32_t> reserved(ranks, 0);
    size_t remaining = 0;
    for (int32_t st = 0; st < in.stages; ++st) remaining += 3 * static_cast<size_t>(in.count[static_cast<size_t>(st)]);
    PipeSchedule out = sh;
    out.actions.assign(ranks, {});
    auto endOf = [&](int32_t st, int k, size_t i) { return end[static_cast<size_t>(3 * st + k)][i]; };
    auto admits = [&](int32_t start) {
        const auto& n = needs[static_cast<size_t>(start)];
        for (size_t r = 0; r < ranks; ++r)
            if (reserved[r] + n[r] > limit) return false;
        return true;
    };
    auto key = [&](int32_t c) {
        const int k = c % 3;
        const int first = order == GreedyOrder::InputFirst ? kI : kF;
        return std::tuple(k == first ? 0 : k == kW ? 2 : 1, in.first[static_cast<size_t>(c / 3)] + static_cast<int32_t>(head[static_cast<size_t>(c)]), c / 3);
    };
    while (remaining > 0) {
        int32_t best = -1;
        double bestStart = kNever;
        for (int32_t c = 0; c < in.chains(); ++c) {
            const int32_t st = c / 3, k = c % 3;
            const size_t i = head[static_cast<size_t>(c)];
            if (i >= end[static_cast<size_t>(c)].size()) continue;
            double ready = 0;
            if (k == kF) {
                const int32_t prev = sh.previousStage(st);
                if (prev >= 0) ready = endOf(prev, kF, i) + in.hop(prev, st, in.transfer);
                else if (!admits(st)) ready = kNever;
            } else if (k == kI) {
                const int32_t next = sh.nextStage(st);
                ready = endOf(st, kF, i);
                if (next >= 0) ready = std::max(ready, endOf(next, kI, i) + in.hop(next, st, in.transfer));
            } else {
                ready = endOf(st, kI, i);
            }
            if (ready == kNever) continue;
            const double start = std::max(ready, free[static_cast<size_t>(sh.rankOf(st))]);
            if (start < bestStart || (start == bestStart && key(c) < key(best))) {
                bestStart = start;
                best = c;
            }
        }
        if (best < 0) return makeError("schedule.internal", "the greedy schedule found no action to run");
        const int32_t st = best / 3, k = best % 3;
        const size_t i = head[static_cast<size_t>(best)]++;
        const auto r = static_cast<size_t>(sh.rankOf(st));
        const double e = bestStart + in.seconds[static_cast<size_t>(st)][static_cast<size_t>(k)];
        end[static_cast<size_t>(best)][i] = e;
        free[r] = e;
        if (k == kF && sh.previousStage(st) < 0)
            for (size_t q = 0; q < ranks; ++q) reserved[q] += needs[static_cast<size_t>(st)][q];
        if (k == kW) --reserved[r];
        const auto kind = k == kF ? PipeActionKind::Forward : k == kI ? PipeActionKind::InputGrad : PipeActionKind::WeightGrad;
        out.actions[r].push_back(PipeAction{kind, st, in.first[static_cast<size_t>(st)] + static_cast<int32_t>(i)});
        --remaining;
    }
    return out;
}

std::vector<PipeScheduleKind> generatorsFor(PipePlacement p, int32_t chunks) {
    switch (p) {
        case PipePlacement::Looped:
            if (chunks == 1) return {PipeScheduleKind::ZeroBubbleH2, PipeScheduleKind::ZeroBubbleH1, PipeScheduleKind::OneFOneB, PipeScheduleKind::GPipe};
            return {PipeScheduleKind::Interleaved};
        case PipePlacement::VShape: return chunks == 2 ? std::vector{PipeScheduleKind::ZeroBubbleV, PipeScheduleKind::DualPipeV} : std::vector<PipeScheduleKind>{};
        case PipePlacement::Bidirectional: return {PipeScheduleKind::DualPipe};
    }
    return {};
}

struct Candidate {
    std::string name;
    PipeSchedule schedule;  // backward split
    PipeReplay replay;
    int32_t peak = 0;
};

#ifdef CFP_HAVE_CBC

Starts latestStarts(const Instance& in, const std::vector<std::array<double, 3>>& d, double transfer, double horizon) {
    Starts lst(static_cast<size_t>(in.chains()));
    for (int32_t c = 0; c < in.chains(); ++c) lst[static_cast<size_t>(c)].assign(static_cast<size_t>(in.count[static_cast<size_t>(c / 3)]), 0.0);
    auto l = [&](int32_t s, int k) -> std::vector<double>& { return lst[static_cast<size_t>(3 * s + k)]; };
    auto du = [&](int32_t s, int k) { return d[static_cast<size_t>(s)][static_cast<size_t>(k)]; };
    for (int32_t s = 0; s < in.stages; ++s) {
        const size_t n = l(s, kW).size();
        for (size_t i = n; i-- > 0;) l(s, kW)[i] = std::min(i + 1 < n ? l(s, kW)[i + 1] - du(s, kW) : kNever, horizon - du(s, kW));
    }
    // I(prev) waits for I(s): input gradients in stage order; F(next) waits for F(s): forwards in reverse.
    for (int32_t s = 0; s < in.stages; ++s) {
        const int32_t prev = in.shape.previousStage(s);
        const size_t n = l(s, kI).size();
        for (size_t i = n; i-- > 0;) {
            double t = std::min(i + 1 < n ? l(s, kI)[i + 1] - du(s, kI) : kNever, l(s, kW)[i] - du(s, kI));
            if (prev >= 0) t = std::min(t, l(prev, kI)[i] - du(s, kI) - in.hop(s, prev, transfer));
            l(s, kI)[i] = t;
        }
    }
    for (int32_t s = in.stages - 1; s >= 0; --s) {
        const int32_t next = in.shape.nextStage(s);
        const size_t n = l(s, kF).size();
        for (size_t i = n; i-- > 0;) {
            double t = std::min(i + 1 < n ? l(s, kF)[i + 1] - du(s, kF) : kNever, l(s, kI)[i] - du(s, kF));
            if (next >= 0) t = std::min(t, l(next, kF)[i] - du(s, kF) - in.hop(s, next, transfer));
            l(s, kF)[i] = t;
        }
    }
    return lst;
}

// Per chain, the start of each item (sorted: the chains run first-in-first-out) in a replay.
Starts chainStarts(const Instance& in, const PipeReplay& r) {
    Starts out(static_cast<size_t>(in.chains()));
    for (const PipeEvent& e : r.events) {
        const PipeAction& a = e.action;
        const int k = a.kind == PipeActionKind::Forward ? kF : a.kind == PipeActionKind::InputGrad ? kI : kW;
        out[static_cast<size_t>(3 * a.stage + k)].push_back(e.start);
    }
    for (auto& c : out) std::sort(c.begin(), c.end());
    return out;
}

// The schedule whose actions start at `starts` (per chain, first-in-first-out), per rank in start order.
PipeSchedule scheduleFromStarts(const Instance& in, const Starts& starts) {
    PipeSchedule out = in.shape;
    out.kind = PipeScheduleKind::Mip;
    out.actions.assign(static_cast<size_t>(in.shape.ranks), {});
    std::vector<std::vector<std::pair<double, PipeAction>>> timed(static_cast<size_t>(in.shape.ranks));
    for (int32_t c = 0; c < in.chains(); ++c) {
        const int32_t s = c / 3, k = c % 3;
        const auto kind = k == kF ? PipeActionKind::Forward : k == kI ? PipeActionKind::InputGrad : PipeActionKind::WeightGrad;
        const auto& st = starts[static_cast<size_t>(c)];
        for (size_t i = 0; i < st.size(); ++i)
            timed[static_cast<size_t>(in.shape.rankOf(s))].push_back({st[i], PipeAction{kind, s, in.first[static_cast<size_t>(s)] + static_cast<int32_t>(i)}});
    }
    for (size_t r = 0; r < timed.size(); ++r) {
        std::stable_sort(timed[r].begin(), timed[r].end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [t, a] : timed[r]) out.actions[r].push_back(a);
    }
    return out;
}

struct Grid {
    double unit = 1;
    bool exact = true;
};

// The largest unit min/k (k ≤ 64) that divides every duration, within maxSlots units of the
// horizon; otherwise an approximate grid of at most maxSlots units (durations rounded up).
Grid chooseGrid(const std::vector<double>& values, double horizon, int32_t maxSlots) {
    double smallest = kNever;
    for (double v : values)
        if (v > 0) smallest = std::min(smallest, v);
    for (int k = 1; k <= 64; ++k) {
        const double q = smallest / k;
        if (horizon / q > maxSlots) break;
        bool whole = true;
        for (double v : values) whole = whole && std::abs(v / q - std::round(v / q)) <= 1e-6 * std::max(1.0, v / q);
        if (whole) return Grid{q, true};
    }
    return Grid{std::max(smallest / 8, horizon / maxSlots), false};
}

double toUnits(double v, const Grid& g, double least) {
    const double u = g.exact ? std::round(v / g.unit) : std::ceil(v / g.unit - 1e-9);
    return std::max(u, least);
}

// The model in CBC's column-major form.
struct Mip {
    int32_t horizon = 0;  // T units
    int32_t chains = 0;
    int zColumn = 0, peakColumn = -1;
    std::vector<double> lower, upper, cost;
    std::vector<char> integer;
    std::vector<double> rowLower, rowUpper;
    std::vector<std::tuple<int, int, double>> entries;  // (column, row, value)

    int count(int32_t c, int32_t t) const { return c * horizon + t; }
    int z(int32_t t) const { return zColumn + t - 1; }  // t = 1 … T − 1
    int addRow(double lo, double hi) {
        rowLower.push_back(lo);
        rowUpper.push_back(hi);
        return static_cast<int>(rowLower.size()) - 1;
    }
    void add(int row, int column, double v) { entries.emplace_back(column, row, v); }
};

struct CbcAnswer {
    bool optimal = false, haveSolution = false, infeasible = false;
    double objective = 0, bound = -kNever;
    std::vector<double> values;
};

CbcAnswer solveWithCbc(const Mip& m, const std::vector<double>& start, double seconds, bool integralObjective) {
    std::vector<std::tuple<int, int, double>> entries = m.entries;
    std::sort(entries.begin(), entries.end());
    const int columns = static_cast<int>(m.cost.size());
    std::vector<CoinBigIndex> colStart(static_cast<size_t>(columns) + 1, 0);
    std::vector<int> index;
    std::vector<double> value;
    index.reserve(entries.size());
    value.reserve(entries.size());
    for (const auto& [c, r, v] : entries) {
        ++colStart[static_cast<size_t>(c) + 1];
        index.push_back(r);
        value.push_back(v);
    }
    for (size_t c = 0; c < static_cast<size_t>(columns); ++c) colStart[c + 1] += colStart[c];
    Cbc_Model* model = Cbc_newModel();
    Cbc_loadProblem(model, columns, static_cast<int>(m.rowLower.size()), colStart.data(), index.data(), value.data(), m.lower.data(), m.upper.data(),
                    m.cost.data(), m.rowLower.data(), m.rowUpper.data());
    for (int c = 0; c < columns; ++c)
        if (m.integer[static_cast<size_t>(c)]) Cbc_setInteger(model, c);
    Cbc_setLogLevel(model, 0);
    Cbc_setMaximumSeconds(model, seconds);
    Cbc_setParameter(model, "timeMode", "elapsed");  // wall time: CPU time lags it on a busy machine
    if (integralObjective) Cbc_setAllowableGap(model, 0.5);  // whole units: a gap below 1 is optimal
    if (!start.empty()) {
        std::vector<int> all(static_cast<size_t>(columns));
        for (int c = 0; c < columns; ++c) all[static_cast<size_t>(c)] = c;
        Cbc_setMIPStartI(model, columns, all.data(), start.data());
    }
    Cbc_solve(model);
    CbcAnswer out;
    out.optimal = Cbc_isProvenOptimal(model) != 0;
    out.infeasible = Cbc_isProvenInfeasible(model) != 0;
    out.bound = Cbc_getBestPossibleObjValue(model);
    if (const double* sol = Cbc_bestSolution(model)) {
        out.haveSolution = true;
        out.objective = Cbc_getObjValue(model);
        out.values.assign(sol, sol + columns);
        if (out.optimal) out.bound = out.objective;
    }
    Cbc_deleteModel(model);
    return out;
}

std::string encode(const CbcAnswer& a) {
    std::string bytes(1, static_cast<char>((a.optimal ? 1 : 0) | (a.haveSolution ? 2 : 0) | (a.infeasible ? 4 : 0)));
    const uint64_t n = a.values.size();
    bytes.append(reinterpret_cast<const char*>(&a.objective), sizeof(double));
    bytes.append(reinterpret_cast<const char*>(&a.bound), sizeof(double));
    bytes.append(reinterpret_cast<const char*>(&n), sizeof n);
    bytes.append(reinterpret_cast<const char*>(a.values.data()), n * sizeof(double));
    return bytes;
}

bool decode(const std::string& bytes, CbcAnswer& a) {
    const size_t head = 1 + 2 * sizeof(double) + sizeof(uint64_t);
    if (bytes.size() < head) return false;
    uint64_t n = 0;
    std::memcpy(&a.objective, bytes.data() + 1, sizeof(double));
    std::memcpy(&a.bound, bytes.data() + 1 + sizeof(double), sizeof(double));
    std::memcpy(&n, bytes.data() + 1 + 2 * sizeof(double), sizeof n);
    if (bytes.size() != head + n * sizeof(double)) return false;
    a.values.resize(n);
    if (n > 0) std::memcpy(a.values.data(), bytes.data() + head, n * sizeof(double));
    a.optimal = bytes[0] & 1;
    a.haveSolution = bytes[0] & 2;
    a.infeasible = bytes[0] & 4;
    return true;
}

// The model for schedules that end by `horizon` units; nothing when the precedences alone leave
// an action no time (no such schedule).
struct Units {
    std::vector<std::array<double, 3>> d;  // per stage: F, I, W in units
    int32_t hop = 0;
    double lower = 0;  // the lower bound in units
};

std::optional<Mip> buildMip(const Instance& in, const Units& u, int32_t horizon, int32_t limit, double weightUnits) {
    const int32_t T = horizon;
    Mip m;
    m.horizon = T;
    m.chains = in.chains();
    const Starts est = earliestStarts(in, u.d, u.hop), lst = latestStarts(in, u.d, u.hop, T);
    for (int32_t c = 0; c < in.chains(); ++c) {
        const auto& e = est[static_cast<size_t>(c)];
        const auto& l = lst[static_cast<size_t>(c)];
        for (int32_t t = 0; t < T; ++t) {
            const double lo = static_cast<double>(std::upper_bound(l.begin(), l.end(), t + 1e-9) - l.begin());
            const double hi = static_cast<double>(std::upper_bound(e.begin(), e.end(), t + 1e-9) - e.begin());
            if (lo > hi) return std::nullopt;
            m.lower.push_back(lo);
            m.upper.push_back(hi);
            m.cost.push_back(0.0);
            m.integer.push_back(1);
        }
    }
    m.zColumn = static_cast<int>(m.cost.size());
    for (int32_t t = 1; t < T; ++t) {
        m.lower.push_back(0.0);
        m.upper.push_back(t < u.lower ? 0.0 : 1.0);
        m.cost.push_back(-1.0);
        m.integer.push_back(1);
    }
    if (weightUnits > 0) {
        m.peakColumn = static_cast<int>(m.cost.size());
        m.lower.push_back(0.0);
        m.upper.push_back(limit);
        m.cost.push_back(weightUnits);
        m.integer.push_back(0);
    }
    auto du = [&](int32_t c) { return static_cast<int32_t>(u.d[static_cast<size_t>(c / 3)][static_cast<size_t>(c % 3)]); };
    auto precede = [&](int32_t c, int32_t before, int32_t delay) {  // N[c][t] ≤ N[before][t − delay]
        for (int32_t t = delay; t < T; ++t) {
            const int row = m.addRow(kNoLower, 0.0);
            m.add(row, m.count(c, t), 1.0);
            m.add(row, m.count(before, t - delay), -1.0);
        }
    };
    for (int32_t c = 0; c < in.chains(); ++c)
        for (int32_t t = 1; t < T; ++t) {
            const int row = m.addRow(kNoLower, 0.0);
            m.add(row, m.count(c, t - 1), 1.0);
            m.add(row, m.count(c, t), -1.0);
        }
    for (int32_t s = 0; s < in.stages; ++s) {
        const int32_t prev = in.shape.previousStage(s), next = in.shape.nextStage(s);
        auto hopTo = [&](int32_t a) { return in.shape.rankOf(a) == in.shape.rankOf(s) ? 0 : u.hop; };
        if (prev >= 0) precede(3 * s + kF, 3 * prev + kF, du(3 * prev + kF) + hopTo(prev));
        precede(3 * s + kI, 3 * s + kF, du(3 * s + kF));
        if (next >= 0) precede(3 * s + kI, 3 * next + kI, du(3 * next + kI) + hopTo(next));
        precede(3 * s + kW, 3 * s + kI, du(3 * s + kI));
    }
    for (int32_t r = 0; r < in.shape.ranks; ++r)
        for (int32_t t = 0; t < T; ++t) {
            const int busy = m.addRow(kNoLower, 1.0);
            const int held = weightUnits > 0 ? m.addRow(kNoLower, 0.0) : m.addRow(kNoLower, limit);
            if (weightUnits > 0) m.add(held, m.peakColumn, -1.0);
            for (int32_t c = 0; c < in.chains(); ++c) {
                if (in.rankOfChain(c) != r) continue;
                m.add(busy, m.count(c, t), 1.0);
                if (t - du(c) >= 0) m.add(busy, m.count(c, t - du(c)), -1.0);
                if (c % 3 == kF) m.add(held, m.count(c, t), 1.0);
                if (c % 3 == kW) m.add(held, m.count(c, t), -1.0);
            }
        }
    for (int32_t t = 1; t < T; ++t) {
        for (int32_t s = 0; s < in.stages; ++s) {
            const int32_t c = 3 * s + kW, at = t - du(c);
            if (in.count[static_cast<size_t>(s)] == 0) continue;
            if (at < 0) {
                m.upper[static_cast<size_t>(m.z(t))] = 0.0;
                continue;
            }
            const int row = m.addRow(kNoLower, 0.0);
            m.add(row, m.z(t), in.count[static_cast<size_t>(s)]);
            m.add(row, m.count(c, at), -1.0);
        }
        if (t + 1 < T) {
            const int row = m.addRow(kNoLower, 0.0);
            m.add(row, m.z(t), 1.0);
            m.add(row, m.z(t + 1), -1.0);
        }
    }
    return m;
}

// The counts of a schedule (its chains' starts in units) as values of the model's columns.
std::vector<double> startValues(const Mip& m, const Instance& in, const Starts& starts, double peak) {
    std::vector<double> v(m.cost.size(), 0.0);
    for (int32_t c = 0; c < in.chains(); ++c) {
        const auto& st = starts[static_cast<size_t>(c)];
        for (int32_t t = 0; t < m.horizon; ++t)
            v[static_cast<size_t>(m.count(c, t))] = static_cast<double>(std::upper_bound(st.begin(), st.end(), t + 1e-9) - st.begin());
    }
    // z = 0 throughout: the schedule is taken to end at the horizon.
    if (m.peakColumn >= 0) v[static_cast<size_t>(m.peakColumn)] = peak;
    return v;
}

// The chains' starts of a solution; nothing where it leaves an action unstarted.
std::optional<Starts> solutionStarts(const Mip& m, const Instance& in, const std::vector<double>& values) {
    Starts found(static_cast<size_t>(in.chains()));
    for (int32_t c = 0; c < in.chains(); ++c) {
        const auto n = static_cast<size_t>(in.count[static_cast<size_t>(c / 3)]);
        auto& st = found[static_cast<size_t>(c)];
        for (int32_t t = 0; t < m.horizon && st.size() < n; ++t) {
            const auto started = static_cast<size_t>(std::max<int64_t>(0, std::llround(values[static_cast<size_t>(m.count(c, t))])));
            while (st.size() < std::min(started, n)) st.push_back(t);
        }
        if (st.size() != n) return std::nullopt;
    }
    return found;
}

#endif

}  // namespace

int32_t minimumPipeMemoryLimit(PipePlacement placement, int32_t ranks, int32_t chunks) {
    PipeSchedule sh;
    sh.placement = placement;
    sh.ranks = std::max(ranks, 1);
    sh.chunks = std::max(chunks, 1);
    int32_t most = 1;
    for (int32_t r = 0; r < sh.ranks; ++r) most = std::max(most, footprint(sh, r));
    return most;
}

Result<PipeMipResult> optimizePipeSchedule(const PipeMipRequest& req, const PipeMipOptions& options) {
    const auto began = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(); };
    const int32_t P = req.ranks, V = req.chunks, M = req.microBatches;
    if (P < 1 || V < 1 || M < 1) return shapeError("ranks, chunks and micro-batches must be at least 1");
    if (static_cast<int64_t>(P) * V > 4096 || M > 100000) return shapeError("at most 4096 stages and 100000 micro-batches");
    if (req.placement == PipePlacement::Bidirectional && (V != 2 || M % 2 != 0))
        return shapeError("a bidirectional pipeline holds 2 chunks per rank and runs an even number of micro-batches, half from each end");
    Instance in;
    in.shape.kind = PipeScheduleKind::Mip;
    in.shape.placement = req.placement;
    in.shape.ranks = P;
    in.shape.chunks = V;
    in.shape.microBatches = M;
    in.stages = P * V;
    in.transfer = req.transferSeconds;
    if (!std::isfinite(req.transferSeconds) || req.transferSeconds < 0) return shapeError("the transfer time must be a number ≥ 0");
    if (req.times.size() != 1 && req.times.size() != static_cast<size_t>(in.stages))
        return shapeError("stage times for " + std::to_string(req.times.size()) + " stages; the pipeline has " + std::to_string(in.stages));
    for (int32_t s = 0; s < in.stages; ++s) {
        const StageTimes& t = req.times.size() == 1 ? req.times[0] : req.times[static_cast<size_t>(s)];
        for (double v : {t.forward, t.inputGrad, t.weightGrad})
            if (!std::isfinite(v) || v <= 0)
                return shapeError("the schedule optimiser needs F, I and W > 0 on every stage (stage " + std::to_string(s) + ")");
        in.seconds.push_back({t.forward, t.inputGrad, t.weightGrad});
        int32_t first = -1, n = 0;
        for (int32_t mb = 0; mb < M; ++mb)
            if (in.shape.runsOn(s, mb)) {
                if (first < 0) first = mb;
                ++n;
            }
        in.first.push_back(std::max(first, 0));
        in.count.push_back(n);
    }
    const int32_t minimum = minimumPipeMemoryLimit(req.placement, P, V);
    if (req.memoryLimit && *req.memoryLimit < minimum)
        return makeError("schedule.memory_limit", "no schedule keeps to " + std::to_string(*req.memoryLimit) +
                                                      " stage activations per rank: one micro-batch's path holds " + std::to_string(minimum) +
                                                      " stages on a rank (" + std::string(pipePlacementName(req.placement)) + ", " +
                                                      std::to_string(V) + (V == 1 ? " chunk" : " chunks") + " per rank)");
    const std::vector<StageTimes> times = req.times;

    // The generated schedules, backward split, and the default limit.
    std::vector<Candidate> candidates;
    for (PipeScheduleKind k : generatorsFor(req.placement, V)) {
        auto s = makeSchedule(k, P, V, M);
        if (!s) continue;
        PipeSchedule split = splitBackward(*s);
        auto r = replaySchedule(split, times, req.transferSeconds);
        if (!r) return r.error();
        candidates.push_back(Candidate{std::string(pipeScheduleName(k)), std::move(split), *r, peakOf(*r)});
    }
    PipeMipResult result;
    if (req.memoryLimit) {
        result.memoryLimit = *req.memoryLimit;
        result.memoryLimitFrom = "given";
    } else {
        const char* reference = req.placement == PipePlacement::VShape ? "dualpipe-v" : req.placement == PipePlacement::Bidirectional ? "dualpipe" : "";
        const Candidate* ref = nullptr;
        for (const Candidate& c : candidates)
            if (c.name == reference) ref = &c;
        for (const Candidate& c : candidates)
            if (!ref || (ref->name != reference && c.replay.seconds < ref->replay.seconds)) ref = &c;
        if (ref) {
            result.memoryLimit = ref->peak;
            result.memoryLimitFrom = ref->name;
        } else {  // no generator: P micro-batches in flight, as 1F1B's first rank
            result.memoryLimit = P * minimum;
            result.memoryLimitFrom = "P micro-batches";
        }
    }
    const int32_t limit = result.memoryLimit;
    for (const GreedyOrder order : {GreedyOrder::InputFirst, GreedyOrder::ForwardFirst}) {
        auto greedy = greedySchedule(in, limit, order);
        if (!greedy) return greedy.error();
        auto r = replaySchedule(*greedy, times, req.transferSeconds);
        if (!r) return r.error();
        candidates.push_back(Candidate{"greedy", std::move(*greedy), *r, peakOf(*r)});
    }
    const double weight = req.memoryWeightSeconds;
    auto objective = [&](const PipeReplay& r) { return r.seconds + weight * peakOf(r); };
    // The best objective; of equal ones (within rounding) the one that holds the fewest stages.
    const Candidate* warm = nullptr;
    for (const Candidate& c : candidates) {
        if (c.peak > limit) continue;
        const double a = objective(c.replay), b = warm ? objective(warm->replay) : 0.0;
        const double eps = 1e-9 * std::max(1.0, std::abs(b));
        if (!warm || a < b - eps || (a <= b + eps && c.peak < warm->peak)) warm = &c;
    }
    if (!warm) return makeError("schedule.internal", "no warm start keeps to the memory limit");
    result.warmStart = warm->name;
    result.warmStartSeconds = warm->replay.seconds;
    result.warmStartPeak = warm->peak;
    result.schedule = warm->schedule;
    result.schedule.kind = PipeScheduleKind::Mip;
    result.replay = warm->replay;
    result.objectiveSeconds = objective(warm->replay);
    result.mipMakespanSeconds = warm->replay.seconds;
    result.boundSeconds = lowerBound(in, in.seconds, req.transferSeconds) + weight * minimum;

#ifndef CFP_HAVE_CBC
    (void)options;
    (void)elapsed;
    return makeError("schedule.no_mip_solver", "this build has no MIP solver for the schedule optimiser (install coinor-libcbc-dev and rebuild)");
#else
    auto finish = [&](PipeMipStatus status) {
        result.status = status;
        if (result.objectiveSeconds <= result.boundSeconds + 1e-9 * std::max(1.0, result.boundSeconds)) {
            result.boundSeconds = result.objectiveSeconds;
            result.status = PipeMipStatus::Optimal;
        }
        result.solveSeconds = elapsed();
        return result;
    };
    if (options.cancel && options.cancel->load()) return finish(PipeMipStatus::Cancelled);

    // The time grid.
    std::vector<double> values;
    for (const auto& s : in.seconds) values.insert(values.end(), s.begin(), s.end());
    if (req.transferSeconds > 0) values.push_back(req.transferSeconds);
    const Grid grid = chooseGrid(values, warm->replay.seconds, std::max(options.maxSlots, 16));
    result.unitSeconds = grid.unit;
    result.exactGrid = grid.exact;
    std::vector<std::array<double, 3>> d(in.seconds.size());
    std::vector<StageTimes> unitTimes;
    for (size_t s = 0; s < d.size(); ++s) {
        for (int k = 0; k < 3; ++k) d[s][static_cast<size_t>(k)] = toUnits(in.seconds[s][static_cast<size_t>(k)], grid, 1.0);
        unitTimes.push_back(StageTimes{d[s][0], d[s][1], d[s][2], 1.0});
    }
    Units units;
    units.d = d;
    units.hop = static_cast<int32_t>(toUnits(req.transferSeconds, grid, 0.0));
    auto warmUnits = replaySchedule(warm->schedule, unitTimes, units.hop);
    if (!warmUnits) return warmUnits.error();
    const auto T0 = static_cast<int32_t>(std::llround(warmUnits->seconds));
    units.lower = std::ceil(lowerBound(in, d, units.hop) - 1e-9);
    if (objective(warm->replay) <= result.boundSeconds + 1e-9 * std::max(1.0, result.boundSeconds)) return finish(PipeMipStatus::Optimal);
    if (static_cast<int64_t>(in.chains()) * T0 > kMaxCounts)
        return makeError("schedule.too_large", "the schedule optimiser's model would have " + std::to_string(static_cast<int64_t>(in.chains()) * T0) +
                                                   " counts (" + std::to_string(in.chains()) + " chains × " + std::to_string(T0) +
                                                   " time units); at most " + std::to_string(kMaxCounts) + ": fewer stages or micro-batches");
    const double weightUnits = weight / grid.unit;

    // Three kinds of model, each holding only the schedules that end by its horizon:
    //   proving    the horizon is the lower bound, so the counts' windows are narrow and CBC soon
    //              shows that nothing ends by it (the bound rises a unit) or finds a schedule that
    //              does (optimal); a short time each, until one stalls;
    //   windows    a large-neighbourhood search: the best schedule's counts fixed before a window
    //              of time and after it shifted a unit earlier, the horizon a unit shorter. CBC
    //              has only the window's counts to place: feasible, the schedule is a unit shorter.
    //              Windows slide over the schedule and widen after a pass without a gain;
    //   improving  the whole model at the best schedule's makespan, started from that schedule,
    //              with the rest of the time (when the windows have grown to the whole schedule).
    // With a memory weight the objective is not the makespan: one improving model.
    enum class Phase : uint8_t { Proving, Windows, Improving };
    Phase phase = weight > 0 ? Phase::Improving : Phase::Proving;
    int32_t best = T0;                                // units: the best schedule's makespan
    auto proven = static_cast<int32_t>(units.lower);  // no schedule ends before
    Starts bestStarts = chainStarts(in, *warmUnits);
    int32_t bestPeak = warm->peak;
    int32_t width = std::max<int32_t>(8, 2 * static_cast<int32_t>(std::ceil(units.lower / std::max(1, in.shape.ranks * V))));
    int32_t windowAt = 0;
    bool gainedThisPass = false, timedOut = false, cancelled = false, weightedOptimal = false;
    auto countOf = [](const Starts& st, int32_t c, int32_t t) {
        const auto& v = st[static_cast<size_t>(c)];
        return static_cast<double>(std::upper_bound(v.begin(), v.end(), t + 1e-9) - v.begin());
    };
    while ((weight > 0 || proven < best) && !timedOut && !cancelled && !weightedOptimal) {
        const double left = options.timeLimitSeconds - elapsed();
        if (left <= 0.05) {
            timedOut = true;
            break;
        }
        if (phase == Phase::Windows && windowAt >= best - 1) {  // a pass ends
            if (!gainedThisPass) width = width * 3 / 2;
            if (width >= best - 1) phase = Phase::Improving;
            windowAt = 0;
            gainedThisPass = false;
            continue;
        }
        const int32_t horizon = phase == Phase::Proving ? proven : phase == Phase::Windows ? best - 1 : best;
        std::optional<Mip> m = buildMip(in, units, horizon, limit, weightUnits);
        if (!m) {  // the precedences alone leave no room
            if (phase == Phase::Windows) phase = Phase::Improving;  // nor for a shorter schedule: proven below
            proven = std::max(proven, horizon + 1);
            continue;
        }
        const int32_t from = windowAt, to = windowAt + width;  // the window: units [from, to) of the best schedule
        if (phase == Phase::Windows) {
            windowAt += std::max(1, width / 2);
            bool fits = true;
            for (int32_t c = 0; c < in.chains() && fits; ++c)
                for (int32_t t = 0; t < horizon && fits; ++t) {
                    if (t >= from && t < to - 1) continue;
                    const double v = t < from ? countOf(bestStarts, c, t) : countOf(bestStarts, c, t + 1);
                    const auto k = static_cast<size_t>(m->count(c, t));
                    fits = v >= m->lower[k] && v <= m->upper[k];
                    m->lower[k] = m->upper[k] = v;
                }
            if (!fits) continue;
        }
        result.columns = static_cast<int64_t>(m->cost.size());
        result.integerColumns = static_cast<int64_t>(std::count(m->integer.begin(), m->integer.end(), 1));
        result.rows = static_cast<int64_t>(m->rowLower.size());
        const std::vector<double> start = phase == Phase::Improving ? startValues(*m, in, bestStarts, bestPeak) : std::vector<double>{};
        // CBC's own limit a little shorter than the child's, so it returns its best before a kill.
        const double budget = phase == Phase::Improving ? left : std::min(left, std::max(1.0, 0.05 * options.timeLimitSeconds));
        const double cbcSeconds = std::max(0.05, 0.95 * budget - 0.05);
        result.solverRan = true;
        const ChildRun child = runInChildProcess([&] { return encode(solveWithCbc(*m, start, cbcSeconds, weight == 0)); }, budget + 1.0 + 0.05 * budget,
                                                 options.cancel);
        CbcAnswer answer;
        const bool answered = child.outcome == ChildOutcome::Finished && decode(child.bytes, answer);
        if (child.outcome == ChildOutcome::Cancelled) {
            cancelled = true;
            break;
        }
        const bool stuck = !answered || (!answer.haveSolution && !answer.infeasible) || (answer.haveSolution && !answer.optimal);
        if (phase == Phase::Proving && stuck) phase = Phase::Windows;
        else if (phase == Phase::Improving && stuck) timedOut = true;
        if (!answered) continue;
        // CBC's objective is the makespan less the horizon (+ weight·peak); the bound of a model
        // holds for the schedules it holds: all that end by the horizon but in the windows phase.
        const double boundUnits = answer.bound + horizon;
        if (phase != Phase::Windows && weight == 0 && !std::isnan(answer.bound))
            proven = std::max(proven, static_cast<int32_t>(std::ceil(std::min(boundUnits, horizon + 1.0) - 1e-6)));
        if (weight > 0 && std::isfinite(answer.bound) && grid.exact) result.boundSeconds = std::max(result.boundSeconds, (boundUnits - 1e-6) * grid.unit);
        if (answer.infeasible && phase == Phase::Proving) proven = std::max(proven, horizon + 1);
        if (!answer.haveSolution) continue;
        auto found = solutionStarts(*m, in, answer.values);
        if (!found) return makeError("schedule.internal", "the MIP's solution leaves an action unstarted");
        double zSum = 0;
        for (int32_t t = 1; t < horizon; ++t) zSum += static_cast<double>(std::llround(answer.values[static_cast<size_t>(m->z(t))]));
        PipeSchedule schedule = scheduleFromStarts(in, *found);
        auto replay = replaySchedule(schedule, times, req.transferSeconds);
        if (!replay) return makeError("schedule.internal", "the MIP's schedule does not replay: " + replay.error().message);
        if (peakOf(*replay) > limit)
            return makeError("schedule.internal", "the MIP's schedule holds " + std::to_string(peakOf(*replay)) + " stage activations on a rank, over the limit " +
                                                      std::to_string(limit));
        const auto makespan = static_cast<int32_t>(std::llround(horizon - zSum));
        if (objective(*replay) < result.objectiveSeconds - 1e-9 * std::max(1.0, result.objectiveSeconds)) {
            result.schedule = schedule;
            result.replay = std::move(*replay);
            result.objectiveSeconds = objective(result.replay);
            result.mipMakespanSeconds = makespan * grid.unit;
            result.improved = true;
        }
        // The search goes on from the schedule replayed on the grid: as soon as possible in the
        // MIP's order, which closes any slack CBC left (a model not solved to the end may have some).
        auto compact = replaySchedule(schedule, unitTimes, units.hop);
        if (!compact) return makeError("schedule.internal", "the MIP's schedule does not replay on its grid: " + compact.error().message);
        const auto compactUnits = static_cast<int32_t>(std::llround(compact->seconds));
        if (compactUnits < best) {
            best = std::min(best, compactUnits);
            bestStarts = chainStarts(in, *compact);
            bestPeak = peakOf(*compact);
            gainedThisPass = true;
            if (phase == Phase::Windows) windowAt = std::max(0, from - width / 2);  // the gain may open room just before
        }
        if (answer.optimal && phase != Phase::Windows) {
            if (weight == 0) proven = std::max(proven, makespan);  // optimal among those ending by the horizon: all that could beat it
            else weightedOptimal = grid.exact;
        }
    }
    if (weight == 0 && grid.exact) result.boundSeconds = std::max(result.boundSeconds, proven * grid.unit);
    if (weightedOptimal) result.boundSeconds = std::max(result.boundSeconds, result.objectiveSeconds);
    return finish(cancelled ? PipeMipStatus::Cancelled : PipeMipStatus::TimeLimit);  // optimal where the bound meets the objective
#endif
}

}  // namespace cfp
