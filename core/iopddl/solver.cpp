#include "iopddl/solver.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <memory>
#include <thread>
#include <vector>

#include "iopddl/evaluate.h"
#include "iopddl/ilp.h"
#include "iopddl/memory_profile.h"
#include "iopddl/message_passing.h"
#include "iopddl/solver_model.h"

namespace cfp::iopddl {

namespace {

using Clock = std::chrono::steady_clock;

// Branch-and-bound nodes CBC may spend on one neighbourhood (a node limit, not a time limit, so
// that a run is reproducible).
constexpr int kLnsNodes = 50;

// Whether CBC can be given the whole problem: few enough nonzeros in its edge and memory rows
// (an upper bound: every value's usage over every slot of its segments).
bool wholeProblemIsSmall(const SolverModel& m) {
    double nonzeros = double(m.mats.size());
    for (int32_t v = 0; v < m.n; ++v)
        for (const Segment& s : m.segmentsOf(v)) nonzeros += double(m.k[v]) * double(s.endSlot - s.firstSlot);
    return nonzeros <= 1.5e6;
}
constexpr double kInf = std::numeric_limits<double>::infinity();

// The price step of thread t of `threads` (relative to the unconstrained cost over the limit
// squared): geometric from 0.1 (thread 0) down to 0.003 (the last thread). Large steps find the
// binding slots fast when the limit binds at a few slots (A, M); where it binds hard and at many
// slots (S: the unconstrained assignment needs 27x the limit) large steps oscillate, and the
// small step's prices settle (S at 60 s: 1.79e9 with steps 0.1 and 0.03, 1.60e9 with 0.003).
double priceStep(int t, int threads) {
    if (threads <= 1) return 0.1;
    return 0.1 * std::pow(0.03, double(t) / double(threads - 1));
}

// splitmix64: small, fast, and the same sequence on every platform (std:: distributions are not).
class Rng {
public:
    explicit Rng(uint64_t seed) : m_state(seed) {}
    uint64_t next() {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return static_cast<uint32_t>((next() >> 32) * n >> 32); }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    uint64_t m_state;
};

// An assignment that fits, with its cost.
struct Incumbent {
    std::vector<int32_t> x;
    double cost = kInf;
    bool fits = false;
};

class Worker {
public:
    Worker(const SolverModel& model, int64_t limit, uint64_t seed, double step)
        : m(model), m_limit(limit), m_rng(seed), m_step(step), m_mp(model) {
        m_lambda.assign(static_cast<size_t>(m.slotCount()), 0.0);
        m_theta = m.unary;
        m_mp.setUnary(m_theta);
        m_x.assign(static_cast<size_t>(m.n), 0);
        m_xu = m_x;
    }

    // A starting assignment with little memory: per variable, the value with the least usage
    // summed over time; then greedy repair of what is still over the limit.
    void start(Incumbent& inc) {
        for (int32_t v = 0; v < m.n; ++v) {
            double bestArea = kInf, bestCost = kInf;
            int32_t best = 0;
            for (int32_t a = 0; a < m.k[v]; ++a) {
                double area = 0;
                for (const Segment& s : m.segmentsOf(v))
                    area += double(m.usageOf(s)[a]) * double(m.slotPoints[static_cast<size_t>(s.endSlot)] - m.slotPoints[static_cast<size_t>(s.firstSlot)]);
                const double c = m.unaryOf(v)[a];
                if (area < bestArea || (area == bestArea && c < bestCost)) {
                    bestArea = area;
                    bestCost = c;
                    best = a;
                }
            }
            m_x[v] = best;
        }
        MemoryProfile mem(m);
        for (int32_t v = 0; v < m.n; ++v) mem.apply(m, v, -1, m_x[v]);
        repair(m_x, mem);
        polish(m_x, mem);
        offer(inc, m_x, mem);
    }

    // One round: message passing on priced costs, a price step from the unconstrained decode, and a
    // decode that fits (starting from the incumbent), polished.
    void round(Incumbent& inc) {
        m_mp.iterate();
        m_mp.decode(m_xu);
        descend(m_xu, m_theta);
        const double cu = m.cost(m_xu);
        if (cu < 1e15) m_costRef = std::min(m_costRef, cu);
        MemoryProfile mu(m);
        for (int32_t v = 0; v < m.n; ++v) mu.apply(m, v, -1, m_xu[v]);
        const std::vector<int64_t> usage = mu.values();
        if (m_costRef < kInf && m_limit < INT64_MAX) {
            const double scale = m_step * m_costRef / (double(m_limit) * double(m_limit));
                for (int32_t j = 0; j < m.slotCount(); ++j)
                    m_lambda[static_cast<size_t>(j)] = std::max(0.0, m_lambda[static_cast<size_t>(j)] + scale * double(usage[static_cast<size_t>(j)] - m_limit));
            applyPrices();
        }
        m_lastUnconstrained = cu;
        m_lastPeak = mu.peak();
        if (mu.peak() <= m_limit) {
            polish(m_xu, mu);
            offer(inc, m_xu, mu);
        }
        if (!inc.fits) return;
        std::vector<int32_t> xf = inc.x;
        MemoryProfile mf(m);
        for (int32_t v = 0; v < m.n; ++v) mf.apply(m, v, -1, xf[v]);
        m_mp.decode(xf, &mf, m_limit);
        polish(xf, mf);
        offer(inc, xf, mf);
    }

    // One large-neighbourhood step: re-optimise a neighbourhood of the incumbent exactly (CBC).
    // The neighbourhood grows until its ILP would have about m_lnsBudget nonzeros; the budget
    // grows by a fifth after a step CBC finishes (proven optimal) and shrinks by a fifth after one
    // it does not, which keeps steps short on any instance and the run reproducible.
    bool lns(Incumbent& inc, double seconds) {
        if (!inc.fits) return false;
        std::vector<int32_t> x = inc.x;
        MemoryProfile mem(m);
        for (int32_t v = 0; v < m.n; ++v) mem.apply(m, v, -1, x[v]);
        std::vector<int32_t> hood;
        m_mark.resize(static_cast<size_t>(m.n), 0);
        ++m_markStamp;
        double size = 0;
        auto take = [&](int32_t v) {
            if (m_mark[v] == m_markStamp || size >= m_lnsBudget) return;
            m_mark[v] = m_markStamp;
            hood.push_back(v);
            size += 2.0 * m.k[v];
            for (const Arc& a : m.arcsOf(v))
                if (m_mark[a.to] == m_markStamp) size += 3.0 * m.k[v] * m.k[a.to];
            for (const Segment& s : m.segmentsOf(v)) size += double(m.k[v]) * std::min<int32_t>(s.endSlot - s.firstSlot, 8);
        };
        const uint32_t kind = m_rng.below(3);
        if (kind > 0 && m.slotCount() > 0) {
            // Around a busy slot: kind 1 takes a random part of the variables live there; kind 2
            // a time window, every variable whose usage changes inside it, nearest slots first.
            const std::vector<int64_t> usage = mem.values();
            int32_t j = static_cast<int32_t>(m_rng.below(static_cast<uint32_t>(m.slotCount())));
            for (int tries = 0; tries < 20 && usage[static_cast<size_t>(j)] < m_limit - m_limit / 20; ++tries)
                j = static_cast<int32_t>(m_rng.below(static_cast<uint32_t>(m.slotCount())));
            std::vector<std::pair<int32_t, int32_t>> live;  // (distance in slots, variable)
            for (int32_t v = 0; v < m.n; ++v) {
                int32_t distance = INT32_MAX;
                for (const Segment& s : m.segmentsOf(v))
                    distance = std::min(distance, j < s.firstSlot ? s.firstSlot - j : (j >= s.endSlot ? j - s.endSlot + 1 : 0));
                if (distance == 0 || (kind == 2 && distance < INT32_MAX)) live.emplace_back(distance, v);
            }
            for (size_t i = live.size(); i > 1; --i) std::swap(live[i - 1], live[m_rng.below(static_cast<uint32_t>(i))]);
            if (kind == 2) std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            const double share = kind == 2 ? 0.8 : 0.5;
            for (size_t i = 0; i < live.size() && size < m_lnsBudget * share; ++i) take(live[i].second);
        }
        if (hood.empty()) take(static_cast<int32_t>(m_rng.below(static_cast<uint32_t>(m.n))));
        for (size_t head = 0; head < hood.size() && size < m_lnsBudget; ++head) {
            const auto arcs = m.arcsOf(hood[head]);
            const size_t first = arcs.empty() ? 0 : m_rng.below(static_cast<uint32_t>(arcs.size()));
            for (size_t i = 0; i < arcs.size() && size < m_lnsBudget; ++i) take(arcs[(first + i) % arcs.size()].to);
            if (head + 1 == hood.size() && size < m_lnsBudget && hood.size() < static_cast<size_t>(m.n))
                take(static_cast<int32_t>(m_rng.below(static_cast<uint32_t>(m.n))));
        }
        bool proven = false;
        const bool better = reoptimizeExactly(m, x, mem, hood, m_limit, kLnsNodes, seconds, &proven);
        m_lnsBudget = std::clamp(m_lnsBudget * (proven ? 1.2 : 0.8), 2e3, 2e6);
        if (!better) return false;
        polish(x, mem);
        offer(inc, x, mem);
        return true;
    }

    // The whole problem by CBC, from the incumbent; true when proven optimal.
    bool exact(Incumbent& inc, double seconds) {
        std::vector<int32_t> x = inc.x;
        MemoryProfile mem(m);
        for (int32_t v = 0; v < m.n; ++v) mem.apply(m, v, -1, x[v]);
        std::vector<int32_t> all(static_cast<size_t>(m.n));
        std::iota(all.begin(), all.end(), 0);
        bool proven = false;
        if (reoptimizeExactly(m, x, mem, all, m_limit, 0, seconds, &proven)) offer(inc, x, mem);
        return proven;
    }

    double lastUnconstrained() const { return m_lastUnconstrained; }
    double lnsBudget() const { return m_lnsBudget; }
    int64_t lastPeak() const { return m_lastPeak; }

private:
    void applyPrices() {
        std::vector<double> prefix(static_cast<size_t>(m.slotCount()) + 1, 0.0);
        for (int32_t j = 0; j < m.slotCount(); ++j) prefix[j + 1] = prefix[j] + m_lambda[static_cast<size_t>(j)];
        m_theta = m.unary;
        for (int32_t v = 0; v < m.n; ++v)
            for (const Segment& s : m.segmentsOf(v)) {
                const double price = prefix[static_cast<size_t>(s.endSlot)] - prefix[static_cast<size_t>(s.firstSlot)];
                if (price == 0) continue;
                const int64_t* u = m.usageOf(s);
                double* t = m_theta.data() + m.valueBegin[v];
                for (int32_t a = 0; a < m.k[v]; ++a) t[a] += price * double(u[a]);
            }
    }

    void offer(Incumbent& inc, const std::vector<int32_t>& x, const MemoryProfile& mem) {
        const bool fits = mem.peak() <= m_limit;
        const double c = m.cost(x);
        if ((fits && !inc.fits) || (fits == inc.fits && c < inc.cost)) {
            inc.x = x;
            inc.cost = c;
            inc.fits = fits;
        }
    }

    // Greedy repair: while some slot is over the limit, make the change that lowers the peak
    // slot's usage at the least cost per byte, among changes that fit elsewhere.
    void repair(std::vector<int32_t>& x, MemoryProfile& mem) {
        const std::vector<int64_t> initial = mem.values();
        for (int guard = 0; guard < 4 * m.n + 16 && mem.peak() > m_limit; ++guard) {
            const std::vector<int64_t> usage = mem.values();
            const int32_t peakSlot = static_cast<int32_t>(std::max_element(usage.begin(), usage.end()) - usage.begin());
            double bestRatio = kInf;
            int32_t bestVar = -1, bestValue = -1;
            for (int32_t v = 0; v < m.n; ++v)
                for (const Segment& s : m.segmentsOf(v)) {
                    if (peakSlot < s.firstSlot || peakSlot >= s.endSlot) continue;
                    const int64_t* u = m.usageOf(s);
                    for (int32_t a = 0; a < m.k[v]; ++a) {
                        const int64_t saved = u[x[v]] - u[a];
                        if (saved <= 0) continue;
                        const double dc = delta(x, v, a);
                        // Changes that raise usage elsewhere must not push it over the limit
                        // (or further over it).
                        if (mem.excess(m, v, x[v], a, std::max(m_limit, mem.peak())) > 0) continue;
                        const double ratio = dc / double(saved);
                        if (ratio < bestRatio) {
                            bestRatio = ratio;
                            bestVar = v;
                            bestValue = a;
                        }
                    }
                    break;
                }
            if (bestVar < 0) break;
            mem.apply(m, bestVar, x[bestVar], bestValue);
            x[bestVar] = bestValue;
        }
    }

    // Cost change of setting variable v to a (true costs).
    double delta(const std::vector<int32_t>& x, int32_t v, int32_t a) const {
        const int32_t b = x[v];
        if (a == b) return 0;
        const auto un = m.unaryOf(v);
        double d = un[a] - un[b];
        for (const Arc& arc : m.arcsOf(v)) {
            const double* row = m.mats.data() + arc.revOffset + int64_t(x[arc.to]) * m.k[v];
            d += row[a] - row[b];
        }
        return d;
    }

    // Best-improvement single-variable moves on the given unary costs, no memory limit.
    void descend(std::vector<int32_t>& x, const std::vector<double>& theta) {
        for (int pass = 0; pass < 20; ++pass) {
            bool improved = false;
            for (int32_t v = 0; v < m.n; ++v) {
                const double* t = theta.data() + m.valueBegin[v];
                const int32_t b = x[v];
                int32_t best = b;
                double bestDelta = -1e-9;
                for (int32_t a = 0; a < m.k[v]; ++a) {
                    if (a == b) continue;
                    double d = t[a] - t[b];
                    for (const Arc& arc : m.arcsOf(v)) {
                        const double* row = m.mats.data() + arc.revOffset + int64_t(x[arc.to]) * m.k[v];
                        d += row[a] - row[b];
                    }
                    if (d < bestDelta) {
                        bestDelta = d;
                        best = a;
                    }
                }
                if (best != b) {
                    x[v] = best;
                    improved = true;
                }
            }
            if (!improved) break;
        }
    }

    // Best-improvement single-variable moves under the hard limit, until none improves.
    void polish(std::vector<int32_t>& x, MemoryProfile& mem) {
        const bool hard = mem.peak() <= m_limit;
        for (int pass = 0; pass < 50; ++pass) {
            bool improved = false;
            for (int32_t v = 0; v < m.n; ++v) {
                int32_t best = x[v];
                double bestDelta = -1e-9;
                for (int32_t a = 0; a < m.k[v]; ++a) {
                    if (a == x[v]) continue;
                    const double d = delta(x, v, a);
                    if (d < bestDelta && (!hard || mem.fits(m, v, x[v], a, m_limit))) {
                        bestDelta = d;
                        best = a;
                    }
                }
                if (best != x[v]) {
                    mem.apply(m, v, x[v], best);
                    x[v] = best;
                    improved = true;
                }
            }
            if (!improved) break;
        }
    }

    const SolverModel& m;
    int64_t m_limit;
    Rng m_rng;
    double m_step;
    MessagePassing m_mp;
    std::vector<double> m_lambda, m_theta;
    std::vector<int32_t> m_x, m_xu;
    double m_costRef = kInf;
    double m_lnsBudget = 3e4;
    std::vector<int32_t> m_mark;
    int32_t m_markStamp = 0;
    double m_lastUnconstrained = 0;
    int64_t m_lastPeak = 0;
};

}  // namespace

Result<SolverResult> solve(const Problem& problem, const SolverOptions& options) {
    const auto began = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - began).count(); };
    auto log = [&](const std::string& line) {
        if (options.log) options.log(line);
    };
    ModelStats stats;
    auto built = buildSolverModel(problem, &stats);
    if (!built) return built.error();
    const int64_t limit = problem.usageLimit.value_or(INT64_MAX);
    if (!built->fixedUsage.empty() && *std::max_element(built->fixedUsage.begin(), built->fixedUsage.end()) > limit) {
        // Without the forbidden strategies nothing fits: keep them (any answer then pays one).
        ModelOptions keep;
        keep.pruneForbidden = false;
        built = buildSolverModel(problem, &stats, keep);
        if (!built) return built.error();
        log("the limit needs strategies with forbidden costs: keeping them");
    }
    const SolverModel& model = *built;
    char line[320];
    std::snprintf(line, sizeof line,
                  "model: %lld free nodes -> %d variables (%lld matching edges, %lld components, %lld inconsistent), %lld edges, "
                  "%zu matrix entries, %d slots, %zu segments, %.2f s",
                  static_cast<long long>(stats.freeNodes), model.n, static_cast<long long>(stats.matchingEdges),
                  static_cast<long long>(stats.components), static_cast<long long>(stats.inconsistent), static_cast<long long>(model.edgeCount),
                  model.mats.size() / 2, model.slotCount(), model.segments.size(), elapsed());
    log(line);
    const int threads = std::max(1, options.threads);
    const bool exactWhole = ilpSolverAvailable() && wholeProblemIsSmall(model);

    // Each thread runs a worker with its own seed and price step; at the end of every epoch the
    // threads meet, the best fitting assignment (ties: the lowest thread) becomes everyone's
    // incumbent, and the leader decides the next phase from the clock (or the epoch budget).
    enum class Phase { Lagrange, Improve, Stop };
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<Incumbent> incumbents(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t)
        workers.push_back(std::make_unique<Worker>(model, limit, options.seed * 0x9e3779b9ULL + static_cast<uint64_t>(t), priceStep(t, threads)));
    Incumbent best;
    Phase phase = Phase::Lagrange;
    int64_t epoch = 0;
    std::atomic<int64_t> lnsSteps{0}, lnsWins{0};
    bool exactDone = false;
    const double improveFrom = exactWhole ? 0.1 : 0.25;
    auto meet = [&]() noexcept {
        for (int t = 0; t < threads; ++t) {
            const Incumbent& inc = incumbents[static_cast<size_t>(t)];
            if ((inc.fits && !best.fits) || (inc.fits == best.fits && inc.cost < best.cost)) best = inc;
        }
        ++epoch;
        const double now = elapsed();
        const bool budgetOver = options.maxEpochs > 0 && epoch >= options.maxEpochs;
        if (now >= options.timeLimitSeconds || budgetOver || exactDone) {
            phase = Phase::Stop;
        } else if (phase == Phase::Lagrange &&
                   (options.maxEpochs > 0 ? epoch >= static_cast<int64_t>(double(options.maxEpochs) * improveFrom) : now >= options.timeLimitSeconds * improveFrom)) {
            phase = Phase::Improve;
        }
        char text[240];
        std::snprintf(text, sizeof text, "epoch %lld: best %.6g (%s), lns %lld/%lld budget %.0f, priced peak %.3fx limit",
                      static_cast<long long>(epoch), best.cost, best.fits ? "fits" : "over the limit", static_cast<long long>(lnsWins.load()),
                      static_cast<long long>(lnsSteps.load()), workers[0]->lnsBudget(), double(workers[static_cast<size_t>(threads - 1)]->lastPeak()) / double(limit));
        log(text);
        for (int t = 0; t < threads; ++t) incumbents[static_cast<size_t>(t)] = best;
    };
    std::barrier sync(threads, meet);
    auto run = [&](int t) {
        Worker& w = *workers[static_cast<size_t>(t)];
        Incumbent& inc = incumbents[static_cast<size_t>(t)];
        w.start(inc);
        sync.arrive_and_wait();
        while (phase != Phase::Stop) {
            // Exact steps: CBC runs in child processes, so every thread can take them; the whole
            // problem goes to CBC once, from thread 0, while the others keep to neighbourhoods.
            if (phase == Phase::Improve) {
                if (exactWhole && !exactDone && t == 0) {
                    exactDone = w.exact(inc, 0.8 * (options.timeLimitSeconds - elapsed()));
                } else {
                    for (int i = 0; i < 4 && elapsed() < options.timeLimitSeconds; ++i) {
                        ++lnsSteps;
                        if (w.lns(inc, std::min(5.0, options.timeLimitSeconds - elapsed()))) ++lnsWins;
                    }
                }
            } else {
                for (int i = 0; i < 10 && elapsed() < options.timeLimitSeconds; ++i) w.round(inc);
            }
            sync.arrive_and_wait();
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
    run(0);
    for (std::thread& th : pool) th.join();

    SolverResult result;
    result.solution = model.toSolution(best.x);
    result.epochs = epoch;
    auto ev = evaluate(problem, result.solution);
    if (!ev) return ev.error();
    result.score = ev->score;
    result.valid = ev->valid;
    result.seconds = elapsed();
    return result;
}

}  // namespace cfp::iopddl
