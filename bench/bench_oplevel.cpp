// Benchmark: what the ParallelBlock reduction costs. On small GPT, LLaMA and MoE training steps,
// the CFP plan (segment DP over ParallelBlocks) against the op-level optimum of the same cost model
// (every op its own strategies, Alpa-style; oplevel/oplevel.h), solved and proven by CBC. Not a
// test: it prints a Markdown table for docs/BENCHMARKS.md.
//
// Per case: build the training step; plan it with the CFP planner on one fixed mesh (no optimizer
// sharding, no recomputation: the op-level formulation models neither; no baselines); formulate
// the op-level problem with the CFP plan's shardings added as strategies (so the CFP plan is one of
// its solutions); price the CFP plan in the formulation (it must equal the evaluator's step time
// up to rounding to picoseconds) and solve the formulation with CBC from the CFP plan as a start;
// the optimum, turned back into a plan, must also cost the same by the evaluator.
//
//   bench_oplevel [--case NAME]... [--ilp-seconds S] [--list]
//
// Exit status: 0; 1 when a case fails or the formulation and the evaluator disagree by more than
// 1e-6 relative on the CFP plan; 2 on bad arguments.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "hardware/hardware.h"
#include "iopddl/evaluate.h"
#include "iopddl/ilp.h"
#include "models/models.h"
#include "oplevel/oplevel.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "sharding/mesh.h"

using namespace cfp;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Case {
    const char* name;
    const char* preset;   // shapes start from this preset
    int64_t layers, hidden, heads, kvHeads, ffn, vocab, experts, topK;
    int64_t batch, seq;
    const char* mesh;
};

// Small models: two layers (two MoE layers for MoE), narrow with a short sequence, then as wide
// as a 1.3B model with sequence 1024.
const Case kCases[] = {
    {"gpt-2l-h512", "gpt3-125m", 2, 512, 8, 8, 2048, 8192, 0, 0, 8, 256, "8"},
    {"llama-2l-h512", "llama2-7b", 2, 512, 8, 4, 1408, 8192, 0, 0, 8, 256, "8"},
    {"moe-2l-h512-e4", "mixtral-8x7b", 2, 512, 8, 4, 1024, 8192, 4, 2, 8, 256, "8"},
    {"gpt-2l-h2048", "gpt3-125m", 2, 2048, 16, 16, 8192, 32768, 0, 0, 8, 1024, "8"},
    {"llama-2l-h2048", "llama2-7b", 2, 2048, 16, 8, 5632, 32000, 0, 0, 8, 1024, "8"},
    {"moe-2l-h2048-e8", "mixtral-8x7b", 2, 2048, 16, 8, 5632, 32000, 8, 2, 8, 1024, "8"},
};

struct Row {
    std::string name;
    int64_t ops = 0, strategies = 0, edgeEntries = 0;
    double cfpStep = 0, cfpPriced = 0, optimum = 0, bound = 0, carried = 0, cfpZeroStep = 0;
    bool proven = false;
    double cfpSeconds = 0, buildSeconds = 0, ilpSeconds = 0;
};

// Sum of the carried-update edges' costs under a solution.
double carriedCost(const OpLevelFormulation& f, const iopddl::Solution& s) {
    double total = 0;
    for (int64_t e = f.firstCarriedEdge; e < f.problem.edgeCount(); ++e) {
        const auto ends = f.problem.edgeEnds(e);
        const int64_t index = s[static_cast<size_t>(ends[0])] * f.problem.strategyCount(ends[1]) + s[static_cast<size_t>(ends[1])];
        total += static_cast<double>(f.problem.edgeCostTable(e)[static_cast<size_t>(index)]);
    }
    return total;
}

// Per op: its node cost plus the costs of its incoming edges; the ops where the CFP plan pays most
// over the optimum.
void detail(const OpLevelFormulation& f, const Graph& g, const iopddl::Solution& cfp, const iopddl::Solution& best) {
    const iopddl::Problem& p = f.problem;
    auto perOp = [&](const iopddl::Solution& s) {
        std::vector<double> c(static_cast<size_t>(p.nodeCount()), 0.0);
        for (int64_t v = 0; v < p.nodeCount(); ++v) c[static_cast<size_t>(v)] += static_cast<double>(p.costs(v)[static_cast<size_t>(s[static_cast<size_t>(v)])]);
        for (int64_t e = 0; e < p.edgeCount(); ++e) {
            const auto ends = p.edgeEnds(e);
            const int64_t index = s[static_cast<size_t>(ends[0])] * p.strategyCount(ends[1]) + s[static_cast<size_t>(ends[1])];
            c[static_cast<size_t>(ends[1])] += static_cast<double>(p.edgeCostTable(e)[static_cast<size_t>(index)]);
        }
        return c;
    };
    const auto a = perOp(cfp), b = perOp(best);
    std::vector<std::pair<double, int64_t>> diff;
    std::map<std::string, double> byKindPhase;
    for (int64_t v = 0; v < p.nodeCount(); ++v) {
        diff.emplace_back(a[static_cast<size_t>(v)] - b[static_cast<size_t>(v)], v);
        const Op& op = g.op(static_cast<OpId>(v));
        byKindPhase[std::string(opKindName(op.kind)) + "/" + std::string(phaseName(op.phase))] += a[static_cast<size_t>(v)] - b[static_cast<size_t>(v)];
    }
    std::sort(diff.begin(), diff.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t i = 0; i < 15 && i < diff.size(); ++i) {
        const Op& op = g.op(static_cast<OpId>(diff[i].second));
        std::fprintf(stderr, "  %9.1f us  %-12s %-9s %s  (cfp strategy %lld, optimum %lld)\n", costSeconds(f, diff[i].first) * 1e6,
                     std::string(opKindName(op.kind)).c_str(), std::string(phaseName(op.phase)).c_str(), op.name.c_str(),
                     static_cast<long long>(cfp[static_cast<size_t>(op.id)]), static_cast<long long>(best[static_cast<size_t>(op.id)]));
    }
    for (const auto& [k, d] : byKindPhase)
        if (std::abs(costSeconds(f, d)) > 5e-6) std::fprintf(stderr, "  by kind/phase %-24s %9.1f us\n", k.c_str(), costSeconds(f, d) * 1e6);
}

int runCase(const Case& c, double ilpSeconds, Row& row) {
    auto config = presetConfig(c.preset);
    if (!config) return std::fprintf(stderr, "%s: %s\n", c.name, config.error().toString().c_str()), 1;
    config->name = c.name;
    config->numLayers = c.layers;
    config->hiddenSize = c.hidden;
    config->numHeads = c.heads;
    config->numKvHeads = c.kvHeads;
    config->ffnSize = c.ffn;
    config->vocabSize = c.vocab;
    if (c.experts) {
        config->numExperts = c.experts;
        config->topK = c.topK;
    }
    BuildOptions build;
    build.batch = c.batch;
    build.seq = c.seq;
    auto model = buildTrainingStep(*config, build);
    if (!model) return std::fprintf(stderr, "%s: %s\n", c.name, model.error().toString().c_str()), 1;
    auto hw = loadHardware("h100-sxm");
    auto cluster = makeCluster(*hw, 1);
    if (!hw || !cluster) return 1;
    PlannerOptions options;
    options.baselines = Baselines::Skip;
    options.policy.optimizerSharding = false;
    options.policy.recompute = RecomputePolicy::None;
    auto t0 = Clock::now();
    auto outcome = planGraph(model->graph, *cluster, MeshChoice::parse(c.mesh).value(), options);
    row.cfpSeconds = since(t0);
    if (!outcome) return std::fprintf(stderr, "%s: %s\n", c.name, outcome.error().toString().c_str()), 1;
    const Plan& plan = outcome->plan;
    // For reference: CFP with its optimizer-state sharding (ZeRO-1), which the formulation cannot
    // express exactly (it completes a gradient by reduce-scatter); the evaluator's step time.
    PlannerOptions zero = options;
    zero.policy.optimizerSharding = true;
    auto sharded = planGraph(model->graph, *cluster, MeshChoice::parse(c.mesh).value(), zero);
    if (!sharded) return std::fprintf(stderr, "%s: %s\n", c.name, sharded.error().toString().c_str()), 1;
    row.cfpZeroStep = sharded->plan.evaluatorStepSeconds;
    row.name = c.name;
    row.ops = model->graph.size();
    row.cfpStep = plan.evaluatorStepSeconds;

    auto cost = CostModel::create(*hw, plan.mesh);
    if (!cost) return std::fprintf(stderr, "%s: %s\n", c.name, cost.error().toString().c_str()), 1;
    OpLevelOptions opt;
    opt.memoryLimitBytes = hw->memoryBytes;
    t0 = Clock::now();
    auto f = buildOpLevel(model->graph, *cost, opt, &plan);
    row.buildSeconds = since(t0);
    if (!f) return std::fprintf(stderr, "%s: %s\n", c.name, f.error().toString().c_str()), 1;
    for (const auto& list : f->strategies) row.strategies += static_cast<int64_t>(list.size());
    row.edgeEntries = static_cast<int64_t>(f->problem.edgeCosts.size());
    auto cfpSolution = solutionForPlan(*f, model->graph, plan);
    if (!cfpSolution) return std::fprintf(stderr, "%s: %s\n", c.name, cfpSolution.error().toString().c_str()), 1;
    auto priced = iopddl::evaluate(f->problem, *cfpSolution);
    if (!priced) return std::fprintf(stderr, "%s: %s\n", c.name, priced.error().toString().c_str()), 1;
    row.cfpPriced = costSeconds(*f, static_cast<double>(priced->score));
    if (std::abs(row.cfpPriced - row.cfpStep) > 1e-6 * row.cfpStep) {
        std::fprintf(stderr, "%s: the formulation prices the CFP plan at %.9f s, the evaluator at %.9f s\n", c.name, row.cfpPriced, row.cfpStep);
        return 1;
    }
    iopddl::IlpOptions io;
    io.timeLimitSeconds = ilpSeconds;
    io.start = &*cfpSolution;
    auto ilp = iopddl::solveIlp(f->problem, io);
    if (!ilp) return std::fprintf(stderr, "%s: %s\n", c.name, ilp.error().toString().c_str()), 1;
    row.ilpSeconds = ilp->seconds;
    row.proven = ilp->status == iopddl::IlpStatus::Optimal;
    row.bound = costSeconds(*f, ilp->bound);
    row.optimum = ilp->solution.empty() ? 0 : costSeconds(*f, static_cast<double>(ilp->score));
    if (!ilp->solution.empty()) {
        // The evaluator, on the op-level answer turned into a plan, must agree with the formulation
        // but for the resharding of updated parameters to the next step's (which it does not see).
        auto ev = evaluatePlan(model->graph, planForSolution(*f, model->graph, plan.mesh, ilp->solution), *cost);
        if (!ev) return std::fprintf(stderr, "%s: the op-level answer: %s\n", c.name, ev.error().toString().c_str()), 1;
        row.carried = costSeconds(*f, carriedCost(*f, ilp->solution));
        if (std::abs(ev->step.total() + row.carried - row.optimum) > 1e-6 * row.optimum) {
            std::fprintf(stderr, "%s: the formulation prices its optimum at %.9f s, the evaluator at %.9f s + %.9f s carried\n", c.name,
                         row.optimum, ev->step.total(), row.carried);
            return 1;
        }
        if (std::getenv("BENCH_OPLEVEL_DETAIL")) detail(*f, model->graph, *cfpSolution, ilp->solution);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> only;
    double ilpSeconds = 600;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--case" && i + 1 < argc) only.push_back(argv[++i]);
        else if (a == "--ilp-seconds" && i + 1 < argc) ilpSeconds = std::atof(argv[++i]);
        else if (a == "--list") {
            for (const Case& c : kCases) std::printf("%s\n", c.name);
            return 0;
        } else {
            std::fprintf(stderr, "usage: bench_oplevel [--case NAME]... [--ilp-seconds S] [--list]\n");
            return 2;
        }
    }
    if (!iopddl::ilpSolverAvailable()) {
        std::fprintf(stderr, "bench_oplevel: this build has no CBC (install coinor-libcbc-dev)\n");
        return 1;
    }
    std::printf("| case | ops | op-level strategies | edge cost entries | CFP step (ms) | op-level optimum (ms) | CFP / optimum | "
                "CFP search (s) | op-level: formulate + CBC (s) | time ratio | CFP + ZeRO-1 step (ms) |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int status = 0;
    for (const Case& c : kCases) {
        if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
        Row r;
        if (runCase(c, ilpSeconds, r) != 0) {
            status = 1;
            continue;
        }
        const double opSeconds = r.buildSeconds + r.ilpSeconds;
        char note[96];
        if (r.proven) std::snprintf(note, sizeof note, " (proven)");
        else std::snprintf(note, sizeof note, " (not proven; bound %.4f)", r.bound * 1e3);
        std::printf("| %s (mesh %s) | %lld | %lld | %lld | %.4f | %.4f%s | %.4f | %.2f | %.2f + %.2f | %.1fx | %.4f |\n", r.name.c_str(), c.mesh,
                    static_cast<long long>(r.ops), static_cast<long long>(r.strategies), static_cast<long long>(r.edgeEntries),
                    r.cfpStep * 1e3, r.optimum * 1e3, note,
                    r.optimum > 0 ? r.cfpStep / r.optimum : 0.0, r.cfpSeconds, r.buildSeconds, r.ilpSeconds,
                    r.cfpSeconds > 0 ? opSeconds / r.cfpSeconds : 0.0, r.cfpZeroStep * 1e3);
        std::fflush(stdout);
    }
    return status;
}
