// Plans against goldens: a digest of every number a plan carries (step time and memory to the
// last bit, the strategy and recomputation of every block, per-segment costs, baselines) for a set
// of requests that exercise every search path (fastest plan, Pareto pass, Lagrangian hull walk with
// greedy fill, pins, memory policies, 2-D and 3-D meshes, mesh auto). A refactoring of the planner
// must leave every digest unchanged; a deliberate change of the model regenerates them with
//   CFP_UPDATE_GOLDENS=1 build/default/tests/plan/tst_plan_goldens
// and says why in its commit.

#include <QtTest>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "hardware/hardware.h"
#include "loader/model_loader.h"
#include "must.h"
#include "plan/planner.h"

using namespace cfp;
using cfp::test::must;

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

struct GoldenCase {
    const char* name;
    const char* model;
    int64_t batch;
    int64_t nodes;
    const char* mesh;
    int64_t memoryLimitBytes;  // the cases recorded before usable memory existed state the HBM, 80 GiB
    RecomputePolicy recompute;
    bool optimizerSharding;
    std::vector<std::string> pins;
    int64_t accumulation = 1;
    AttentionKernel attention = AttentionKernel::Eager;  // the cases recorded before flash attention
};

std::vector<GoldenCase> goldenCases() {
    return {
        {"gpt3-125m_8_auto", "builtin:gpt3-125m", 8, 1, "auto", 80 * kGiB, RecomputePolicy::Auto, true, {}},
        {"gpt3-1.3b_8_auto", "builtin:gpt3-1.3b", 8, 1, "auto", 80 * kGiB, RecomputePolicy::Auto, true, {}},
        {"gpt3-1.3b_2x4_pinned", "builtin:gpt3-1.3b", 8, 1, "2x4", 80 * kGiB, RecomputePolicy::Auto, true, {"T1=x:rows,y:cols;*;*;*", "b0=0"}},
        {"gpt3-2.7b_8_20GiB", "builtin:gpt3-2.7b", 8, 1, "8", 20 * kGiB, RecomputePolicy::Auto, true, {}},
        {"gpt3-2.7b_8_20GiB_rcall", "builtin:gpt3-2.7b", 8, 1, "8", 20 * kGiB, RecomputePolicy::All, true, {}},
        {"gpt3-2.7b_8_nozero", "builtin:gpt3-2.7b", 8, 1, "8", 80 * kGiB, RecomputePolicy::None, false, {}},
        {"llama2-7b_16_2x8", "builtin:llama2-7b", 16, 2, "2x8", 80 * kGiB, RecomputePolicy::Auto, true, {}},
        {"llama2-7b_8_40GiB", "builtin:llama2-7b", 8, 1, "8", 40 * kGiB, RecomputePolicy::Auto, true, {}},
        {"llama3-8b_8_2x2x2", "builtin:llama3-8b", 8, 1, "2x2x2", 80 * kGiB, RecomputePolicy::Auto, true, {}},
        {"mixtral-8x7b_8_2x8", "builtin:mixtral-8x7b", 8, 2, "2x8", 80 * kGiB, RecomputePolicy::Auto, true, {}},
        {"gpt3-6.7b_8_12GiB_pareto", "builtin:gpt3-6.7b", 8, 1, "8", 38 * kGiB, RecomputePolicy::Auto, true, {}},
        // Gradient accumulation: the graph is one round of 4 sequences, a step runs 4 rounds.
        {"gpt3-1.3b_2x4_accum4", "builtin:gpt3-1.3b", 4, 1, "2x4", 80 * kGiB, RecomputePolicy::Auto, true, {}, 4},
        // Flash attention cores (the default): 8 sequences of 2048 on one node, and two rounds of 4.
        {"gpt3-1.3b_8_flash", "builtin:gpt3-1.3b", 8, 1, "8", 74 * kGiB, RecomputePolicy::Auto, true, {}, 1, AttentionKernel::Flash},
        {"llama2-7b_2x4_flash_accum2", "builtin:llama2-7b", 4, 1, "2x4", 74 * kGiB, RecomputePolicy::Auto, true, {}, 2, AttentionKernel::Flash},
    };
}

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void costLine(std::ostringstream& o, const char* label, const CostBreakdown& c) {
    o << label << ' ' << num(c.computeSeconds) << ' ' << num(c.collectiveSeconds) << ' ' << num(c.reshardSeconds) << ' '
      << provenanceName(c.provenance) << '\n';
}

void memoryLine(std::ostringstream& o, const char* label, const MemoryBreakdown& m) {
    o << label << ' ' << m.weights << ' ' << m.gradients << ' ' << m.optimizer << ' ' << m.activations << ' ' << m.transient << '\n';
}

// Everything a plan carries that the planner computes, as text.
std::string digest(const PlanOutcome& out) {
    const Plan& p = out.plan;
    std::ostringstream o;
    o << "mesh " << p.mesh.toString() << '\n';
    o << "predicted " << num(p.predictedStepSeconds) << '\n';
    o << "evaluator " << num(p.evaluatorStepSeconds) << '\n';
    o << "exact " << p.searchExact << '\n';
    costLine(o, "step", p.step);
    memoryLine(o, "memory", p.memory);
    o << "limit " << p.memoryLimitBytes << '\n';
    for (const BlockChoice& b : p.blocks)
        o << "block " << b.block << ' ' << b.strategy << ' ' << b.label << (b.pinned ? " pinned" : "") << (b.recompute ? " rc" : "") << '\n';
    for (const SegmentPlan& s : p.segments) {
        o << "segment " << s.index << " T" << s.type << ' ' << s.firstBlock << '+' << s.blockCount << " mem " << s.memoryBytes;
        for (int32_t c : s.combination) o << ' ' << c;
        o << '\n';
        costLine(o, "  cost", s.cost);
    }
    for (const Baseline& b : p.baselines) {
        o << "baseline " << b.name << " feasible " << b.feasible << " fits " << b.fits << " step " << num(b.stepSeconds) << '\n';
        memoryLine(o, "  memory", b.memory);
    }
    for (const MeshCandidate& c : out.candidates)
        o << "candidate " << c.mesh << ' ' << c.planned << ' ' << num(c.stepSeconds) << ' ' << c.memoryBytes << '\n';
    return o.str();
}

std::string goldenPath(const std::string& name) { return std::string(CFP_TEST_DATA_DIR) + "/plan_goldens/" + name + ".txt"; }

}  // namespace

class TestPlanGoldens : public QObject {
    Q_OBJECT

private slots:
    void plansEqualTheirGoldens_data() {
        QTest::addColumn<int>("index");
        const auto cases = goldenCases();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << static_cast<int>(i);
    }

    void plansEqualTheirGoldens() {
        QFETCH(int, index);
        const GoldenCase c = goldenCases()[static_cast<size_t>(index)];
        BuildOptions build;
        build.batch = c.batch;
        const LoadedModel model = must(loadModel(c.model, build), c.model);
        const Cluster cluster = must(makeCluster(must(loadHardware("h100-sxm"), "hardware"), c.nodes), "cluster");
        PlannerOptions options;
        options.memoryLimitBytes = c.memoryLimitBytes;
        options.policy.recompute = c.recompute;
        options.policy.optimizerSharding = c.optimizerSharding;
        options.policy.accumulation = c.accumulation;
        options.policy.attention = c.attention;
        options.pins = must(parsePins(c.pins), "pins");
        auto out = planGraph(model.graph, cluster, must(MeshChoice::parse(c.mesh), "mesh"), options);
        QVERIFY2(static_cast<bool>(out), out ? "" : out.error().toString().c_str());
        const std::string got = digest(*out);
        const std::string path = goldenPath(c.name);
        if (qEnvironmentVariableIsSet("CFP_UPDATE_GOLDENS")) {
            std::ofstream(path) << got;
            QSKIP("golden rewritten");
        }
        std::ifstream in(path);
        QVERIFY2(in.good(), ("missing golden " + path).c_str());
        std::stringstream want;
        want << in.rdbuf();
        if (got != want.str()) {
            std::istringstream g(got), w(want.str());
            std::string gl, wl;
            int line = 1;
            while (std::getline(g, gl) && std::getline(w, wl) && gl == wl) ++line;
            QFAIL(("differs from " + path + " at line " + std::to_string(line) + ":\n  got:  " + gl + "\n  want: " + wl).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestPlanGoldens)
#include "tst_plan_goldens.moc"
