#include "iopddl/ilp.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "iopddl/evaluate.h"
#include "iopddl/memory_profile.h"
#include "iopddl/solver_model.h"

#ifdef CFP_HAVE_CBC
#include <coin/Cbc_C_Interface.h>

#include <cstring>

#include "util/child_process.h"
#endif

namespace cfp::iopddl {

const char* ilpStatusName(IlpStatus status) {
    switch (status) {
        case IlpStatus::Optimal: return "optimal";
        case IlpStatus::Feasible: return "feasible";
        case IlpStatus::Infeasible: return "infeasible";
        case IlpStatus::NoSolution: return "no_solution";
    }
    return "?";
}

#ifndef CFP_HAVE_CBC

bool ilpSolverAvailable() { return false; }

Result<IlpResult> solveIlp(const Problem&, const IlpOptions&) {
    return makeError("iopddl.no_ilp_solver", "this build has no ILP solver (install coinor-libcbc-dev and rebuild)");
}

bool reoptimizeExactly(const SolverModel&, std::vector<int32_t>&, MemoryProfile&, std::span<const int32_t>, int64_t, int, double, bool*) { return false; }

#else

namespace {

constexpr double kForbidden = 1e17;

// The ILP over a set of variables, every other variable fixed at its value in `outside`.
struct Ilp {
    std::vector<CoinBigIndex> start{0};
    std::vector<int> index;
    std::vector<double> value, lower, upper, cost;
    std::vector<double> rowLower, rowUpper;
    int rows = 0;
    int xCount = 0;
    std::vector<int> xColumn;        // per variable in the set: first column of its values (-1: value dropped), by value
    std::vector<int64_t> xBegin;     // per variable in the set, into xColumn

    int addColumn(double objective) {
        cost.push_back(objective);
        lower.push_back(0.0);
        upper.push_back(1.0);
        return static_cast<int>(cost.size()) - 1;
    }
    void entry(int row, double coefficient) {
        index.push_back(row);
        value.push_back(coefficient);
    }
    void closeColumn() { start.push_back(static_cast<CoinBigIndex>(index.size())); }
    int addRow(double lo, double hi) {
        rowLower.push_back(lo);
        rowUpper.push_back(hi);
        return rows++;
    }
};

// vars: the variables to optimise (sorted); position[v] = their index in vars or -1. outside:
// the values of every other variable (unused when vars is everything). otherUsage: per slot, the
// usage of everything but vars.
Ilp buildIlp(const SolverModel& m, std::span<const int32_t> vars, const std::vector<int32_t>& position, const std::vector<int32_t>* outside,
             const std::vector<int64_t>& otherUsage, std::optional<int64_t> limit) {
    Ilp ilp;
    const int32_t count = static_cast<int32_t>(vars.size());
    std::vector<int> varRow(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) varRow[static_cast<size_t>(i)] = ilp.addRow(1.0, 1.0);
    // Marginal rows for edges inside the set, keyed by the low end's forward matrix offset.
    std::unordered_map<int64_t, int> edgeRowBase;
    for (const int32_t v : vars)
        for (const Arc& a : m.arcsOf(v))
            if (v < a.to && position[static_cast<size_t>(a.to)] >= 0) {
                edgeRowBase[a.offset] = ilp.rows;
                for (int32_t s = 0; s < m.k[v] + m.k[a.to]; ++s) ilp.addRow(0.0, 0.0);
            }
    // Memory rows over elementary intervals of the set's segments: within one, every slot has the
    // same coefficients, so only its fullest slot matters.
    struct MemRow {
        int32_t first, end;
        int row;
    };
    std::vector<MemRow> memRows;
    if (limit) {
        std::vector<int32_t> cuts;
        std::vector<std::pair<int32_t, int64_t>> maxDiff;  // (slot, +-largest usage)
        for (const int32_t v : vars)
            for (const Segment& s : m.segmentsOf(v)) {
                cuts.push_back(s.firstSlot);
                cuts.push_back(s.endSlot);
                const int64_t* u = m.usageOf(s);
                const int64_t most = *std::max_element(u, u + m.k[v]);
                maxDiff.emplace_back(s.firstSlot, most);
                maxDiff.emplace_back(s.endSlot, -most);
            }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        std::sort(maxDiff.begin(), maxDiff.end());
        size_t d = 0;
        int64_t most = 0;
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
            for (; d < maxDiff.size() && maxDiff[d].first <= cuts[c]; ++d) most += maxDiff[d].second;
            if (most <= 0) continue;
            int64_t fullest = INT64_MIN;
            for (int32_t j = cuts[c]; j < cuts[c + 1]; ++j) fullest = std::max(fullest, otherUsage[static_cast<size_t>(j)]);
            if (fullest + most <= *limit) continue;
            memRows.push_back(MemRow{cuts[c], cuts[c + 1], ilp.addRow(-1e30, static_cast<double>(*limit - fullest))});
        }
    }

    ilp.xBegin.assign(static_cast<size_t>(count) + 1, 0);
    for (int32_t i = 0; i < count; ++i) ilp.xBegin[static_cast<size_t>(i) + 1] = ilp.xBegin[static_cast<size_t>(i)] + m.k[vars[static_cast<size_t>(i)]];
    ilp.xColumn.assign(static_cast<size_t>(ilp.xBegin.back()), -1);
    std::vector<double> c;
    for (int32_t i = 0; i < count; ++i) {
        const int32_t v = vars[static_cast<size_t>(i)];
        const auto un = m.unaryOf(v);
        c.assign(un.begin(), un.end());
        if (outside)
            for (const Arc& arc : m.arcsOf(v)) {
                if (position[static_cast<size_t>(arc.to)] >= 0) continue;
                const double* row = m.mats.data() + arc.revOffset + int64_t((*outside)[static_cast<size_t>(arc.to)]) * m.k[v];
                for (int32_t a = 0; a < m.k[v]; ++a) c[static_cast<size_t>(a)] += row[a];
            }
        bool anyAllowed = false;
        for (int32_t a = 0; a < m.k[v]; ++a) anyAllowed |= c[static_cast<size_t>(a)] < kForbidden;
        for (int32_t a = 0; a < m.k[v]; ++a) {
            if (anyAllowed && c[static_cast<size_t>(a)] >= kForbidden) continue;
            const int col = ilp.addColumn(c[static_cast<size_t>(a)]);
            ilp.xColumn[static_cast<size_t>(ilp.xBegin[static_cast<size_t>(i)] + a)] = col;
            ilp.entry(varRow[static_cast<size_t>(i)], 1.0);
            for (const Arc& arc : m.arcsOf(v)) {
                if (position[static_cast<size_t>(arc.to)] < 0) continue;
                const bool low = v < arc.to;
                const int base = edgeRowBase.at(low ? arc.offset : arc.revOffset);
                ilp.entry(base + (low ? 0 : m.k[arc.to]) + a, -1.0);
            }
            if (!memRows.empty())
                for (const Segment& seg : m.segmentsOf(v)) {
                    const int64_t u = m.usageOf(seg)[a];
                    if (u == 0) continue;
                    auto it = std::lower_bound(memRows.begin(), memRows.end(), seg.firstSlot, [](const MemRow& r, int32_t s) { return r.first < s; });
                    for (; it != memRows.end() && it->first < seg.endSlot; ++it) ilp.entry(it->row, static_cast<double>(u));
                }
            ilp.closeColumn();
        }
    }
    ilp.xCount = static_cast<int>(ilp.cost.size());
    for (const int32_t v : vars)
        for (const Arc& arc : m.arcsOf(v)) {
            if (v > arc.to || position[static_cast<size_t>(arc.to)] < 0) continue;
            const int32_t w = arc.to;
            const int base = edgeRowBase.at(arc.offset);
            const int64_t vBegin = ilp.xBegin[static_cast<size_t>(position[static_cast<size_t>(v)])];
            const int64_t wBegin = ilp.xBegin[static_cast<size_t>(position[static_cast<size_t>(w)])];
            for (int32_t a = 0; a < m.k[v]; ++a) {
                if (ilp.xColumn[static_cast<size_t>(vBegin + a)] < 0) continue;
                for (int32_t b = 0; b < m.k[w]; ++b) {
                    if (ilp.xColumn[static_cast<size_t>(wBegin + b)] < 0) continue;
                    const double cost = m.mats[static_cast<size_t>(arc.offset + int64_t(a) * m.k[w] + b)];
                    if (cost >= kForbidden) continue;
                    ilp.addColumn(cost);
                    ilp.entry(base + a, 1.0);
                    ilp.entry(base + m.k[v] + b, 1.0);
                    ilp.closeColumn();
                }
            }
        }
    return ilp;
}

struct CbcRun {
    bool optimal = false, infeasible = false, haveSolution = false;
    double objective = 0, bound = 0;
    std::vector<int32_t> values;  // per variable in the set
};

CbcRun runCbc(const Ilp& ilp, std::span<const int32_t> vars, const SolverModel& m, const std::vector<int32_t>* start, double seconds, int threads,
              int maxNodes = 0) {
    CbcRun run;
    Cbc_Model* model = Cbc_newModel();
    Cbc_loadProblem(model, static_cast<int>(ilp.cost.size()), ilp.rows, ilp.start.data(), ilp.index.data(), ilp.value.data(), ilp.lower.data(),
                    ilp.upper.data(), ilp.cost.data(), ilp.rowLower.data(), ilp.rowUpper.data());
    for (int c = 0; c < ilp.xCount; ++c) Cbc_setInteger(model, c);
    Cbc_setLogLevel(model, 0);
    Cbc_setMaximumSeconds(model, seconds);
    if (maxNodes > 0) Cbc_setMaximumNodes(model, maxNodes);
    Cbc_setAllowableGap(model, 0.5);  // costs are integers: a gap below 1 proves optimality
    Cbc_setAllowableFractionGap(model, 0.0);
    if (threads > 1) Cbc_setParameter(model, "threads", std::to_string(threads).c_str());
    if (start) {
        std::vector<int> idx;
        std::vector<double> val;
        for (size_t i = 0; i < vars.size(); ++i)
            for (int32_t a = 0; a < m.k[vars[i]]; ++a) {
                const int col = ilp.xColumn[static_cast<size_t>(ilp.xBegin[i] + a)];
                if (col < 0) continue;
                idx.push_back(col);
                val.push_back((*start)[i] == a ? 1.0 : 0.0);
            }
        Cbc_setMIPStartI(model, static_cast<int>(idx.size()), idx.data(), val.data());
    }
    Cbc_solve(model);
    run.optimal = Cbc_isProvenOptimal(model) != 0;
    run.infeasible = Cbc_isProvenInfeasible(model) != 0;
    run.bound = Cbc_getBestPossibleObjValue(model);
    const double* sol = Cbc_bestSolution(model);
    if (sol) {
        run.haveSolution = true;
        run.objective = Cbc_getObjValue(model);
        run.values.assign(vars.size(), 0);
        for (size_t i = 0; i < vars.size(); ++i) {
            double bestValue = -1;
            for (int32_t a = 0; a < m.k[vars[i]]; ++a) {
                const int col = ilp.xColumn[static_cast<size_t>(ilp.xBegin[i] + a)];
                if (col >= 0 && sol[col] > bestValue) {
                    bestValue = sol[col];
                    run.values[i] = a;
                }
            }
        }
        if (run.optimal) run.bound = run.objective;
    }
    Cbc_deleteModel(model);
    return run;
}

// runCbc in a child process (util/child_process.h), killed at `seconds` + a grace period: CBC
// checks its own time limit only between branch-and-bound nodes, and its root node (LP, cuts,
// heuristics) on a large model can run far past it. The child sends back the run as bytes.
CbcRun runCbcBounded(const Ilp& ilp, std::span<const int32_t> vars, const SolverModel& m, const std::vector<int32_t>* start, double seconds,
                     int threads, int maxNodes = 0) {
    const ChildRun child = runInChildProcess(
        [&] {
            const CbcRun run = runCbc(ilp, vars, m, start, seconds, threads, maxNodes);
            const uint8_t flags = (run.optimal ? 1 : 0) | (run.infeasible ? 2 : 0) | (run.haveSolution ? 4 : 0);
            const uint64_t count = run.values.size();
            std::string bytes(1, static_cast<char>(flags));
            bytes.append(reinterpret_cast<const char*>(&run.objective), sizeof(double));
            bytes.append(reinterpret_cast<const char*>(&run.bound), sizeof(double));
            bytes.append(reinterpret_cast<const char*>(&count), sizeof count);
            bytes.append(reinterpret_cast<const char*>(run.values.data()), count * sizeof(int32_t));
            return bytes;
        },
        seconds + 0.5 + 0.05 * seconds);
    CbcRun run;
    const std::string& bytes = child.bytes;
    const size_t head = 1 + 2 * sizeof(double) + sizeof(uint64_t);
    if (child.outcome != ChildOutcome::Finished || bytes.size() < head) return run;
    const uint8_t flags = static_cast<uint8_t>(bytes[0]);
    uint64_t count = 0;
    std::memcpy(&run.objective, bytes.data() + 1, sizeof(double));
    std::memcpy(&run.bound, bytes.data() + 1 + sizeof(double), sizeof(double));
    std::memcpy(&count, bytes.data() + 1 + 2 * sizeof(double), sizeof count);
    if (bytes.size() != head + count * sizeof(int32_t)) return CbcRun{};
    run.values.resize(count);
    if (count > 0) std::memcpy(run.values.data(), bytes.data() + head, count * sizeof(int32_t));
    run.optimal = flags & 1;
    run.infeasible = flags & 2;
    run.haveSolution = flags & 4;
    return run;
}

}  // namespace

bool ilpSolverAvailable() { return true; }

Result<IlpResult> solveIlp(const Problem& problem, const IlpOptions& options) {
    const auto began = std::chrono::steady_clock::now();
    auto built = buildSolverModel(problem);
    if (!built) return built.error();
    if (problem.usageLimit && !built->fixedUsage.empty() && *std::max_element(built->fixedUsage.begin(), built->fixedUsage.end()) > *problem.usageLimit) {
        ModelOptions keep;
        keep.pruneForbidden = false;
        built = buildSolverModel(problem, nullptr, keep);
        if (!built) return built.error();
    }
    const SolverModel& m = *built;
    std::vector<int32_t> vars(static_cast<size_t>(m.n));
    for (int32_t v = 0; v < m.n; ++v) vars[static_cast<size_t>(v)] = v;
    const Ilp ilp = buildIlp(m, vars, vars, nullptr, m.fixedUsage, problem.usageLimit);
    IlpResult result;
    result.variables = static_cast<int64_t>(ilp.cost.size());
    result.rows = ilp.rows;
    std::vector<int32_t> x0;
    if (options.start && options.start->size() == static_cast<size_t>(m.problemNodes)) x0 = m.fromSolution(*options.start);
    const CbcRun run = runCbcBounded(ilp, vars, m, x0.empty() ? nullptr : &x0, options.timeLimitSeconds, options.threads);
    result.bound = run.bound + m.constant;
    if (run.haveSolution) {
        result.solution = m.toSolution(run.values);
        result.status = run.optimal ? IlpStatus::Optimal : IlpStatus::Feasible;
        auto ev = evaluate(problem, result.solution);
        if (!ev) return ev.error();
        result.score = ev->score;
    } else {
        result.status = run.infeasible ? IlpStatus::Infeasible : IlpStatus::NoSolution;
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return result;
}

bool reoptimizeExactly(const SolverModel& m, std::vector<int32_t>& x, MemoryProfile& memory, std::span<const int32_t> vars, int64_t limit,
                       int maxNodes, double seconds, bool* proven) {
    if (proven) *proven = false;
    std::vector<int32_t> sorted(vars.begin(), vars.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::vector<int32_t> position(static_cast<size_t>(m.n), -1);
    for (size_t i = 0; i < sorted.size(); ++i) position[static_cast<size_t>(sorted[i])] = static_cast<int32_t>(i);
    // Usage without the set: the profile minus the set's current usage.
    std::vector<int64_t> other = memory.values();
    std::vector<int64_t> diff(other.size() + 1, 0);
    for (const int32_t v : sorted)
        for (const Segment& s : m.segmentsOf(v)) {
            const int64_t u = m.usageOf(s)[x[static_cast<size_t>(v)]];
            diff[static_cast<size_t>(s.firstSlot)] += u;
            diff[static_cast<size_t>(s.endSlot)] -= u;
        }
    int64_t run = 0;
    for (size_t j = 0; j < other.size(); ++j) {
        run += diff[j];
        other[j] -= run;
    }
    const Ilp ilp = buildIlp(m, sorted, position, &x, other, limit == INT64_MAX ? std::optional<int64_t>() : std::optional<int64_t>(limit));
    // The current values as a start, and their cost; none when a current value has no column (a
    // forbidden cost) or the current assignment is over the limit: then any answer is better.
    std::vector<int32_t> start(sorted.size());
    double current = 0;
    bool startable = memory.peak() <= limit;
    for (size_t i = 0; i < sorted.size(); ++i) {
        start[i] = x[static_cast<size_t>(sorted[i])];
        const int col = ilp.xColumn[static_cast<size_t>(ilp.xBegin[i] + start[i])];
        if (col < 0) startable = false;
        else current += ilp.cost[static_cast<size_t>(col)];
    }
    for (const int32_t v : sorted)
        for (const Arc& arc : m.arcsOf(v))
            if (v < arc.to && position[static_cast<size_t>(arc.to)] >= 0)
                current += m.mats[static_cast<size_t>(arc.offset + int64_t(x[static_cast<size_t>(v)]) * m.k[arc.to] + x[static_cast<size_t>(arc.to)])];
    if (!startable) current = std::numeric_limits<double>::infinity();
    const CbcRun result = runCbcBounded(ilp, sorted, m, startable ? &start : nullptr, seconds, 1, maxNodes);
    if (proven) *proven = result.optimal;
    if (!result.haveSolution || result.objective > current - 0.5) return false;
    for (size_t i = 0; i < sorted.size(); ++i) {
        const int32_t v = sorted[i];
        memory.apply(m, v, x[static_cast<size_t>(v)], result.values[i]);
        x[static_cast<size_t>(v)] = result.values[i];
    }
    return true;
}

#endif

}  // namespace cfp::iopddl
