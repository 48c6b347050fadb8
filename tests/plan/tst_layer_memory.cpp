// Saved activations per transformer layer against Korthikanti et al. 2022 ("Reducing Activation
// Recomputation in Large Transformer Models", Table 2, eq. 1–5) with flash attention (no s×s term)
// and without dropout (the built-in models have none: the formulas' dropout masks are left out):
//   no parallelism     sbh · 32            (34 less the two sbh dropout masks)
//   tensor parallel t  sbh · (8 + 24/t)    (10 + 24/t less the masks)
//   and sequence par.  sbh · 32/t          (34/t less the masks)
//   full recomputation sbh · 2             (the layer's input only)
//   per-op selective   the layer's input, every other linear layer's output and the attention
//                      output (torchtitan's selective_ac_option="op"), counted below and measured
//                      with PyTorch (bench/reference/layer_memory.py: 15.53 sbh for Llama-3.1-8B)
// in bytes for 2-byte values, per device, at micro-batch b = 1. For a Llama layer (RMSNorm,
// SwiGLU with FFN f, GQA with kv of a heads) the same count gives
//   sbh · (8 + (6 + 4·kv/a + 6·f/h) / t).
// Each case plans the Megatron layout (planConfigured) on models of one and two layers and takes
// the difference of the evaluator's activations, so embeddings and the loss cancel. Within 10%.
//
// Also the rule behind it (cost/op_cost.h, "Saved for backward"): the minimum cut of util/max_flow.h
// against brute force on small random graphs.

#include <QtTest>

#include <cmath>
#include <memory>
#include <random>

#include "cost/op_cost.h"
#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "plan/planner.h"
#include "util/max_flow.h"

using namespace cfp;
using cfp::test::must;

namespace {

struct Layer {
    int64_t s = 0, h = 0, a = 0, kv = 0, f = 0;
    int64_t bytes = 0;  // saved per layer per device
};

Cluster oneNode() { return Cluster{must(loadHardware("h100-sxm"), "h100"), 1}; }

// The layout `config` (Megatron-LM's, planConfigured) of `c` cut to `layers` layers at sequence
// `seq`, one sequence per data-parallel rank, on one node of 8 H100; with its graph.
struct Configured {
    std::unique_ptr<Graph> graph;
    PlanOutcome outcome;
};
Configured configuredPlan(ModelConfig c, int64_t layers, int64_t seq, const RunConfig& config, const PlannerOptions& o = {},
                          QkvLayout qkv = QkvLayout::Fused) {
    c.numLayers = layers;
    BuildOptions b;
    b.batch = config.dp.value_or(1);
    b.seq = seq;
    b.qkv = qkv;
    Configured out;
    out.graph = std::make_unique<Graph>(must(buildTrainingStep(c, b), "build").graph);
    out.outcome = must(planConfigured(*out.graph, oneNode(), config, o), "estimate");
    return out;
}

Layer layerActivations(const char* preset, int64_t tp, int64_t seq, AttentionKernel attention = AttentionKernel::Flash,
                       RecomputeMode recompute = RecomputeMode::None, QkvLayout qkv = QkvLayout::Fused, bool sp = false, int64_t cp = 1,
                       KernelFusion fusion = KernelFusion::Compiled) {
    const ModelConfig c = must(presetConfig(preset), preset);
    Layer out{seq, c.hiddenSize, c.numHeads, c.numKvHeads, c.ffnSize, 0};
    const int64_t dp = oneNode().devices() / (tp * cp);
    RunConfig config;
    config.tp = tp;
    config.dp = dp;
    if (cp > 1) config.cp = cp;
    config.zero = 1;
    config.microBatch = 1;
    config.recompute = recompute;
    if (sp) config.sequenceParallel = true;
    PlannerOptions o;
    o.policy.attention = attention;
    o.policy.fusion = fusion;
    out.bytes = configuredPlan(c, 2, seq, config, o, qkv).outcome.plan.memory.activations -
                configuredPlan(c, 1, seq, config, o, qkv).outcome.plan.memory.activations;
    return out;
}

double sbh(const Layer& l) { return static_cast<double>(l.s * l.h); }  // b = 1

}  // namespace

class TestLayerMemory : public QObject {
    Q_OBJECT

    static void within10(const Layer& l, double expected, const std::string& what) {
        const double got = static_cast<double>(l.bytes);
        const std::string msg = what + ": " + std::to_string(got / sbh(l)) + " sbh, formula " + std::to_string(expected / sbh(l)) + " sbh";
        qInfo("%s", msg.c_str());
        QVERIFY2(std::abs(got - expected) <= 0.10 * expected, msg.c_str());
    }

private slots:
    void gptLayerMatchesKorthikanti_data() {
        QTest::addColumn<int>("tp");
        for (int t : {1, 2, 4, 8}) QTest::newRow(("tp=" + std::to_string(t)).c_str()) << t;
    }
    void gptLayerMatchesKorthikanti() {
        QFETCH(int, tp);
        const Layer l = layerActivations("gpt3-1.3b", tp, 2048);
        const double t = tp;
        within10(l, sbh(l) * (tp == 1 ? 32.0 : 8.0 + 24.0 / t), "gpt3-1.3b tp=" + std::to_string(tp));
    }

    // Sequence parallelism splits what tensor parallelism leaves whole (the norms' inputs and
    // outputs): 32/t.
    void sequenceParallelSplitsTheRest_data() {
        QTest::addColumn<int>("tp");
        for (int t : {2, 4, 8}) QTest::newRow(("tp=" + std::to_string(t)).c_str()) << t;
    }
    void sequenceParallelSplitsTheRest() {
        QFETCH(int, tp);
        const Layer l = layerActivations("gpt3-1.3b", tp, 2048, AttentionKernel::Flash, RecomputeMode::None, QkvLayout::Fused, true);
        within10(l, sbh(l) * 32.0 / tp, "gpt3-1.3b tp=" + std::to_string(tp) + " sp");
        const Layer llama = layerActivations("llama3-8b", tp, 2048, AttentionKernel::Flash, RecomputeMode::None, QkvLayout::Fused, true);
        const double kv = static_cast<double>(llama.kv) / static_cast<double>(llama.a),
                     f = static_cast<double>(llama.f) / static_cast<double>(llama.h);
        within10(llama, sbh(llama) * (8.0 + 6.0 + 4.0 * kv + 6.0 * f) / tp, "llama3-8b tp=" + std::to_string(tp) + " sp");
    }

    // Context parallelism splits the sequence over cp ranks: every saved activation of a layer is
    // 1/cp of it (the keys and values are gathered for the attention and again for its backward,
    // not kept whole): 32/cp without tensor parallelism, (8 + 24/t)/cp with it.
    void contextParallelSplitsTheSequence_data() {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("cp");
        for (const auto& [t, c] : {std::pair{1, 2}, std::pair{1, 4}, std::pair{2, 2}, std::pair{1, 8}})
            QTest::newRow(("tp=" + std::to_string(t) + " cp=" + std::to_string(c)).c_str()) << t << c;
    }
    void contextParallelSplitsTheSequence() {
        QFETCH(int, tp);
        QFETCH(int, cp);
        const Layer l = layerActivations("gpt3-1.3b", tp, 2048, AttentionKernel::Flash, RecomputeMode::None, QkvLayout::Fused, false, cp);
        const double t = tp;
        within10(l, sbh(l) * (tp == 1 ? 32.0 : 8.0 + 24.0 / t) / cp, "gpt3-1.3b tp=" + std::to_string(tp) + " cp=" + std::to_string(cp));
    }

    // ... and gathers the keys and values over cp for the attention: each attention-score matmul
    // reads its queries split over cp along the sequence and the keys whole, which the layer holds
    // split; the edge carries the all-gather of the keys a data-parallel rank reads (its 1/dp of
    // them) over cp. All-gather context parallelism (cp_comm=all_gather) pays it in full; the ring
    // (cp_comm=p2p, the default) beside the matmul's kernel: the part the kernel hides at the
    // contention factor, the rest in full (cost/op_cost.h besideGemmCharge).
    static Configured contextParallel(bool ring) {
        RunConfig config;
        config.tp = 1;
        config.dp = 4;
        config.cp = 2;
        config.zero = 1;
        config.microBatch = 1;
        config.recompute = RecomputeMode::None;
        config.cpRing = ring;
        return configuredPlan(must(presetConfig("gpt3-1.3b"), "preset"), 2, 2048, config);
    }
    static void checkKeysGathered(const Configured& planned, bool ring) {
        const Graph& g = *planned.graph;
        const PlanOutcome& out = planned.outcome;
        QCOMPARE(out.plan.policy.contextRing, ring);
        const CostModel& model = out.problem->model();
        const auto cpAxis = static_cast<size_t>(*model.mesh().axisIndex("cp"));
        const TensorSharding::AxisList onCp{"cp"};
        int scores = 0;
        for (const Op& op : g.ops()) {
            if (op.kind != OpKind::Dot || op.phase != Phase::Forward || op.attrs.dot.lhsBatch != std::vector<int64_t>{0, 1} ||
                op.attrs.dot.lhsContracting != std::vector<int64_t>{3} || op.attrs.dot.rhsContracting != std::vector<int64_t>{3})
                continue;
            ++scores;
            const TensorPlan& t = out.plan.tensors[static_cast<size_t>(op.id)];
            QCOMPARE(t.operands[0].dimAxes(2), onCp);
            QVERIFY(t.operands[1].dimAxes(2).empty());
            const OpId keys = op.operands[1];
            QCOMPARE(out.plan.tensors[static_cast<size_t>(keys)].result.dimAxes(2), onCp);
            const double gather = model.collectiveSeconds(CollectiveKind::AllGather, cpAxis, g.op(keys).type.bytes() / 4);
            const double kernel = out.evaluation.opCost[static_cast<size_t>(op.id)].computeSeconds;  // one round
            const double expected = ring ? besideGemmCharge(model, gather, kernel) : gather;
            const double paid = out.evaluation.opCost[static_cast<size_t>(op.id)].reshardSeconds;
            const std::string msg = "paid " + std::to_string(paid * 1e6) + " us, expected " + std::to_string(expected * 1e6) + " us (all-gather " +
                                    std::to_string(gather * 1e6) + " us, kernel " + std::to_string(kernel * 1e6) + " us)";
            QVERIFY2(std::abs(paid - expected) <= 0.1 * expected, msg.c_str());
            // The ring hides most of it behind the attention at this sequence length.
            if (ring) QVERIFY2(paid < 0.5 * gather, msg.c_str());
        }
        QCOMPARE(scores, 2);
        // The search's objective is the evaluator's sum, ring or not.
        QVERIFY(std::abs(out.plan.predictedStepSeconds - out.plan.evaluatorStepSeconds) <= 1e-9 * out.plan.evaluatorStepSeconds);
    }
    void contextParallelGathersTheKeys() { checkKeysGathered(contextParallel(false), false); }
    void contextRingRunsBesideTheAttention() {
        const Configured ring = contextParallel(true), gathered = contextParallel(false);
        checkKeysGathered(ring, true);
        // The same plan, its exchange beside the attention: a shorter simulated step with more
        // communication overlapped and less exposed; the same memory.
        const StepSimulation& r = ring.outcome.plan.simulated;
        const StepSimulation& a = gathered.outcome.plan.simulated;
        QVERIFY2(r.seconds < a.seconds, (std::to_string(r.seconds) + " vs " + std::to_string(a.seconds)).c_str());
        QVERIFY(r.overlappedCommSeconds > a.overlappedCommSeconds);
        QVERIFY(r.exposedCommSeconds < a.exposedCommSeconds);
        QCOMPARE(ring.outcome.plan.memory.total(), gathered.outcome.plan.memory.total());
        // The timeline says which transfers ran beside their kernel.
        int beside = 0;
        for (const SimTask& t : ring.outcome.evaluation.tasks) beside += t.beside && t.axis == *ring.outcome.problem->model().mesh().axisIndex("cp");
        QVERIFY(beside >= 4);  // keys and values into the two layers' attention, and their backward
    }

    // The planner's own search (cfp plan --mesh auto) tries the ring too: where a mesh's plan
    // splits the token sequence over an axis that does not hold the weights, the same mesh again
    // with that axis named "cp" (keys and values in a ring beside flash attention). Llama-2 7B cut
    // to 2 layers, one sequence of 8192 tokens on 8 H100: every device splits the sequence, and
    // the ring variant of {x=8} is faster than {x=8}, which gathers the keys on the critical path.
    static Graph longSequence() {
        ModelConfig c = must(presetConfig("llama2-7b"), "preset");
        c.numLayers = 2;
        c.maxPositions = 8192;
        BuildOptions b;
        b.batch = 1;
        b.seq = 8192;
        return must(buildTrainingStep(c, b), "build").graph;
    }
    void planSearchTriesTheContextRing() {
        const Graph g = longSequence();
        PlannerOptions o;
        o.searchSequenceParallel = true;
        o.baselines = Baselines::Skip;
        const PlanOutcome out = must(planGraph(g, oneNode(), MeshChoice::automatic(), o), "plan");
        const MeshCandidate* plain = nullptr;
        const MeshCandidate* ring = nullptr;
        for (const MeshCandidate& c : out.candidates) {
            if (c.mesh == "{x=8 (intra)}") plain = &c;
            if (c.mesh == "{cp=8 (intra)}") ring = &c;
            // A ring variant's mesh names its context axis; no other does.
            QCOMPARE(c.contextRing, c.mesh.find("cp=") != std::string::npos);
        }
        QVERIFY(plain && ring);
        QVERIFY(plain->planned && ring->planned);
        QVERIFY2(ring->stepSeconds < plain->stepSeconds, (std::to_string(ring->stepSeconds) + " vs " + std::to_string(plain->stepSeconds)).c_str());
        // The plan chosen is a ring's, priced as one: its keys split over cp, the objective the
        // evaluator's sum.
        QVERIFY(out.plan.mesh.findAxis("cp"));
        QVERIFY(out.plan.policy.contextRing);
        QVERIFY(std::abs(out.plan.predictedStepSeconds - out.plan.evaluatorStepSeconds) <= 1e-9 * out.plan.evaluatorStepSeconds);
        // Eager attention has no ring (it runs inside fused kernels): no such variant.
        o.policy.attention = AttentionKernel::Eager;
        o.memoryLimitBytes = int64_t{1} << 40;
        const PlanOutcome eager = must(planGraph(g, oneNode(), MeshChoice::automatic(), o), "eager plan");
        for (const MeshCandidate& c : eager.candidates) QVERIFY2(!c.contextRing, c.mesh.c_str());
    }
    // A mesh the user gives with an axis named cp is planned as context parallel over it, the ring
    // with flash attention.
    void givenContextAxisIsTheRing() {
        const Graph g = longSequence();
        PlannerOptions o;
        o.baselines = Baselines::Skip;
        const PlanOutcome out = must(planGraph(g, oneNode(), must(MeshChoice::parse("dp=2,cp=4"), "mesh"), o), "plan");
        QVERIFY(out.plan.policy.contextRing);
        QCOMPARE(out.candidates.size(), size_t{1});
        QVERIFY(!out.candidates.front().contextRing);  // the user's mesh, not a variant
        QVERIFY(std::abs(out.plan.predictedStepSeconds - out.plan.evaluatorStepSeconds) <= 1e-9 * out.plan.evaluatorStepSeconds);
        // A mesh the user names without cp keeps its axes: no ring variant renames one (its plan
        // splits the sequence over x all the same).
        o.searchSequenceParallel = true;
        const PlanOutcome named = must(planGraph(g, oneNode(), must(MeshChoice::parse("8"), "mesh"), o), "plan on 8");
        QVERIFY(!named.plan.mesh.findAxis("cp"));
        for (const MeshCandidate& c : named.candidates) QVERIFY2(!c.contextRing, c.mesh.c_str());
    }

    void llamaLayerMatchesTheSameCount_data() {
        QTest::addColumn<int>("tp");
        for (int t : {1, 8}) QTest::newRow(("tp=" + std::to_string(t)).c_str()) << t;
    }
    void llamaLayerMatchesTheSameCount() {
        QFETCH(int, tp);
        const Layer l = layerActivations("llama3-8b", tp, 2048);
        const double kv = static_cast<double>(l.kv) / static_cast<double>(l.a), f = static_cast<double>(l.f) / static_cast<double>(l.h);
        within10(l, sbh(l) * (8.0 + (6.0 + 4.0 * kv + 6.0 * f) / tp), "llama3-8b tp=" + std::to_string(tp));
    }

    // Full recomputation per layer (Megatron-LM's): a layer keeps its input only, 2sbh
    // (Korthikanti et al., section 4: "2sbhL" for L layers), whatever the tensor parallelism.
    void fullRecomputationKeepsTheLayerInput_data() {
        QTest::addColumn<int>("tp");
        for (int t : {1, 4}) QTest::newRow(("tp=" + std::to_string(t)).c_str()) << t;
    }
    void fullRecomputationKeepsTheLayerInput() {
        QFETCH(int, tp);
        const Layer l = layerActivations("gpt3-1.3b", tp, 2048, AttentionKernel::Flash, RecomputeMode::Full);
        within10(l, sbh(l) * 2.0, "gpt3-1.3b full recompute tp=" + std::to_string(tp));
    }

    // Per-op selective recomputation (torchtitan's): a layer keeps its input (2), the outputs of
    // its first, third, … linear matmul and the attention output. Llama (separate Q, K, V; gate,
    // up, down): Q, V, the gate projection and the down projection, 2 + 2 + 2·kv/a + 2 + 2f/h +
    // 2 sbh without tensor parallelism — 15.5 for Llama-3-8B, PyTorch measured 15.53; under
    // tensor parallelism the input and the row-parallel down projection's (partial) output stay
    // whole. GPT (fused QKV and bias): QKV (6) and the first MLP matmul (8), 2 + 6 + 2 + 8 = 18.
    void perOpSelectiveKeepsEveryOtherLinear_data() {
        QTest::addColumn<int>("tp");
        for (int t : {1, 8}) QTest::newRow(("tp=" + std::to_string(t)).c_str()) << t;
    }
    void perOpSelectiveKeepsEveryOtherLinear() {
        QFETCH(int, tp);
        const Layer l = layerActivations("llama3-8b", tp, 2048, AttentionKernel::Flash, RecomputeMode::Op, QkvLayout::Separate);
        const double kv = static_cast<double>(l.kv) / static_cast<double>(l.a), f = static_cast<double>(l.f) / static_cast<double>(l.h);
        within10(l, sbh(l) * (4.0 + (4.0 + 2.0 * kv + 2.0 * f) / tp), "llama3-8b per-op selective tp=" + std::to_string(tp));
        if (tp == 1) {
            const Layer gpt = layerActivations("gpt3-1.3b", 1, 2048, AttentionKernel::Flash, RecomputeMode::Op);
            within10(gpt, sbh(gpt) * 18.0, "gpt3-1.3b per-op selective");
        }
    }

    // Eager kernels (PyTorch without torch.compile): autograd keeps what each backward op reads.
    // Measured with PyTorch on a Llama-3.1-8B layer written as torchtitan writes it (fp32 RMSNorm,
    // complex RoPE, SwiGLU; bench/reference/layer_memory.py, policy none): 52.03 sbh, where fused
    // kernels keep 8 + 6 + 4·kv/a + 6·f/h = 37 (llamaLayerMatchesTheSameCount). Counted here, 55:
    // the norms' inputs and normalised values and outputs (2 + 2 + 2 each), Q, and K and V repeated to
    // every head (2 each, copies), the attention output (2), the gate and up projections, the
    // sigmoid, SiLU and product (7 each, f/h = 3.5). PyTorch keeps fp32 copies in its norms and RoPE
    // (the graph's are bf16) and SiLU as one op. Per-op selective recomputation keeps the same 15.5
    // under either: it names what is kept.
    void eagerKernelsKeepWhatAutogradKeeps() {
        const Layer eager = layerActivations("llama3-8b", 1, 2048, AttentionKernel::Flash, RecomputeMode::None, QkvLayout::Separate, false, 1,
                                             KernelFusion::Eager);
        within10(eager, sbh(eager) * 52.03, "llama3-8b eager kernels");
        const Layer op = layerActivations("llama3-8b", 1, 2048, AttentionKernel::Flash, RecomputeMode::Op, QkvLayout::Separate, false, 1,
                                          KernelFusion::Eager);
        within10(op, sbh(op) * 15.5, "llama3-8b eager kernels, per-op selective");
    }

    // Eager attention keeps the s×s probabilities (and, as the graph's softmax gradient reads the
    // exponentials, their input): more than flash by at least Korthikanti's 2as²b.
    void eagerAttentionKeepsTheScores() {
        const Layer flash = layerActivations("gpt3-1.3b", 1, 1024);
        const Layer eager = layerActivations("gpt3-1.3b", 1, 1024, AttentionKernel::Eager);
        const double scores = 2.0 * static_cast<double>(eager.a * eager.s * eager.s);
        QVERIFY2(static_cast<double>(eager.bytes - flash.bytes) >= scores, std::to_string(eager.bytes - flash.bytes).c_str());
    }

    // The minimum cut equals the least-capacity edge set whose removal disconnects the sink,
    // found by enumerating every subset of finite edges on small random graphs.
    void maxFlowEqualsTheBruteForceCut() {
        std::mt19937 rng(7);
        for (int trial = 0; trial < 200; ++trial) {
            const int n = 2 + static_cast<int>(rng() % 6);
            struct E {
                int a, b;
                int64_t c;
            };
            std::vector<E> edges;
            const int m = static_cast<int>(rng() % 12);
            for (int i = 0; i < m; ++i) {
                const int a = static_cast<int>(rng() % n), b = static_cast<int>(rng() % n);
                if (a == b) continue;
                edges.push_back({a, b, rng() % 5 == 0 ? MaxFlow::kInfinity : static_cast<int64_t>(rng() % 10)});
            }
            MaxFlow f(n);
            for (const E& e : edges) f.addEdge(e.a, e.b, e.c);
            const int64_t flow = f.run(0, n - 1);
            int64_t best = MaxFlow::kInfinity;
            for (uint32_t cut = 0; cut < (1u << edges.size()); ++cut) {
                int64_t cost = 0;
                for (size_t i = 0; i < edges.size(); ++i)
                    if (cut & (1u << i)) cost = std::min(MaxFlow::kInfinity, cost + edges[i].c);
                if (cost >= best) continue;
                std::vector<char> seen(static_cast<size_t>(n), 0);
                std::vector<int> stack{0};
                seen[0] = 1;
                while (!stack.empty()) {
                    const int v = stack.back();
                    stack.pop_back();
                    for (size_t i = 0; i < edges.size(); ++i)
                        if (!(cut & (1u << i)) && edges[i].a == v && !seen[static_cast<size_t>(edges[i].b)]) {
                            seen[static_cast<size_t>(edges[i].b)] = 1;
                            stack.push_back(edges[i].b);
                        }
                }
                if (!seen[static_cast<size_t>(n - 1)]) best = cost;
            }
            QCOMPARE(flow, best);
            // The source side is a cut of that capacity.
            int64_t across = 0;
            for (const E& e : edges)
                if (f.sourceSide(e.a) && !f.sourceSide(e.b)) across = std::min(MaxFlow::kInfinity, across + e.c);
            if (flow < MaxFlow::kInfinity) QCOMPARE(across, flow);
        }
    }
};

QTEST_GUILESS_MAIN(TestLayerMemory)
#include "tst_layer_memory.moc"
