// ParallelBlocks and the independent block checker on hand-built graphs and every built-in preset.
#include <QtTest>

#include <chrono>
#include <map>
#include <set>

#include "autodiff/autodiff.h"
#include "blocks/block_checker.h"
#include "blocks/blocks.h"
#include "ir/graph_builder.h"
#include "models/models.h"

#include "must.h"

using namespace cfp;

namespace {

Mesh mesh(const char* text) { return test::must(parseMesh(text), text); }

const DType kF = DType::F32;

OpId weight(GraphBuilder& b, const std::string& name, std::vector<int64_t> dims) {
    return b.parameter(name, TensorType{kF, std::move(dims)}, ParamRole::Trainable);
}

// Scalar loss Σ y² (keeps every op on the loss path), then backward + AdamW.
void finishTraining(Graph& g, GraphBuilder& b, OpId y) {
    std::vector<int64_t> all(b.dims(y).size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    OpId loss = b.reduce(b.mul(y, y), all);
    b.output(loss);
    auto st = appendTrainingStep(g, loss);
    if (!st) qFatal("training step: %s", st.error().toString().c_str());
}

OpId gelu(GraphBuilder& b, OpId x) {
    OpId cube = b.mul(b.mul(x, x), x);
    OpId inner = b.add(x, b.binaryScalar(OpKind::Multiply, cube, 0.044715));
    OpId t = b.unary(OpKind::Tanh, b.binaryScalar(OpKind::Multiply, inner, 0.79788456));
    return b.mul(b.binaryScalar(OpKind::Multiply, x, 0.5), b.binaryScalar(OpKind::Add, t, 1.0));
}

BlockAnalysis analyse(const Graph& g, const Mesh& m) {
    auto r = findParallelBlocks(g, m);
    if (!r) qFatal("findParallelBlocks: %s", r.error().toString().c_str());
    return std::move(*r);
}

std::multiset<std::string> memberKinds(const Graph& g, const ParallelBlock& b) {
    std::multiset<std::string> out;
    for (OpId m : b.members) out.insert(std::string(opKindName(g.op(m).kind)));
    return out;
}

int dotsIn(const Graph& g, const ParallelBlock& b, Phase phase) {
    int n = 0;
    for (OpId m : b.members) n += g.op(m).kind == OpKind::Dot && g.op(m).phase == phase;
    return n;
}

std::vector<std::string> labels(const ParallelBlock& b) {
    std::vector<std::string> out;
    for (const auto& s : b.strategies) out.push_back(s.label);
    return out;
}

// Strips provenance: the same ops re-added with derivedFrom/derivedOperand cleared.
Graph stripProvenance(const Graph& g) {
    Graph out(g.name());
    for (Op op : g.ops()) {
        op.derivedFrom = kNoOp;
        op.derivedOperand = -1;
        auto r = out.add(std::move(op));
        if (!r) qFatal("strip: %s", r.error().toString().c_str());
    }
    for (OpId o : g.outputs()) (void)out.addOutput(o);
    return out;
}

// Blocks per layer: blocks whose entry scope starts with "layers.N." grouped by N.
std::map<int64_t, int> blocksPerLayer(const Graph& g, const BlockAnalysis& a) {
    std::map<int64_t, int> out;
    for (const auto& b : a.blocks) {
        const std::string& scope = g.op(b.entry).scope;
        if (scope.rfind("layers.", 0) != 0) continue;
        out[std::stoll(scope.substr(7))] += 1;
    }
    return out;
}

}  // namespace

class TestBlocks : public QObject {
    Q_OBJECT

private slots:
    // MLP  h = X·W1 [8,16,64]·[64,256]; a = gelu(h); y = a·W2 [256,64]; loss Σy².
    // By hand: block 0 = fc1 dot + W1 + the GeLU forward ops + dW1 (X is an input: no dX1) + W1's
    // AdamW chain; block 1 = fc2 dot + W2 + dX2 + dW2 + W2's AdamW chain. The GeLU backward mixes dX2
    // (block 1) with GeLU intermediates (block 0): resolved later (multi-block input). 3 strategies
    // per block on {x=8}: rows (batch 8), cols, contract; 9 on 2x4.
    void mlp() {
        Graph g("mlp");
        GraphBuilder b(g);
        OpId x = b.parameter("x", TensorType{kF, {8, 16, 64}}, ParamRole::Input);
        OpId h = b.matmul(x, weight(b, "fc1.w", {64, 256}));
        OpId y = b.matmul(gelu(b, h), weight(b, "fc2.w", {256, 64}));
        finishTraining(g, b, y);
        for (const char* meshText : {"8", "2x4"}) {
            const Mesh m = mesh(meshText);
            BlockAnalysis a = analyse(g, m);
            QCOMPARE(static_cast<int>(a.blocks.size()), 2);
            QCOMPARE(a.blocks[0].entry, h);
            QCOMPARE(a.blocks[1].entry, y);
            const size_t want = std::string(meshText) == "8" ? 3u : 9u;
            QCOMPARE(a.blocks[0].strategies.size(), want);
            QCOMPARE(a.blocks[1].strategies.size(), want);
            QCOMPARE(dotsIn(g, a.blocks[0], Phase::Backward), 1);
            QCOMPARE(dotsIn(g, a.blocks[1], Phase::Backward), 2);
            auto k0 = memberKinds(g, a.blocks[0]);
            QVERIFY(k0.count("tanh") == 1);
            QVERIFY(k0.count("parameter") >= 3);  // W1, adam_m, adam_v
            int optimizerOps = 0;
            for (OpId mbr : a.blocks[0].members) optimizerOps += g.op(mbr).phase == Phase::Optimizer;
            QVERIFY(optimizerOps > 5);
            auto report = checkBlocks(g, a);
            QVERIFY2(report.pass, report.firstViolation.c_str());
            QCOMPARE(a.coverage(g), 1.0);
        }
        // §6: on {x=8} the rows strategy's dW2 ends in the data-parallel all-reduce, cols's dX2 too.
        BlockAnalysis a = analyse(g, mesh("8"));
        QCOMPARE(labels(a.blocks[1]), (std::vector<std::string>{"x:rows", "x:cols", "x:contract"}));
        const auto& fc2 = a.blocks[1];
        auto collectiveOps = [&](size_t s) {
            std::set<OpId> out;
            for (const auto& c : fc2.strategies[s].ownCollectives) out.insert(c.op);
            return out;
        };
        OpId dX2 = kNoOp, dW2 = kNoOp;
        for (const auto& p : fc2.backwardPairs) (p.side == 0 ? dX2 : dW2) = p.backward;
        QVERIFY(dX2 != kNoOp && dW2 != kNoOp);
        QVERIFY(collectiveOps(0).count(dW2) && !collectiveOps(0).count(dX2));
        QVERIFY(collectiveOps(1).count(dX2) && !collectiveOps(1).count(dW2));
        QVERIFY(collectiveOps(2).count(y));
        QCOMPARE(QString::fromStdString(a.sharding(fc2, 0, static_cast<size_t>(fc2.memberIndex(y))).toString()),
                 QString("[{x},{},{}] partial{}"));
        QCOMPARE(QString::fromStdString(a.sharding(fc2, 1, static_cast<size_t>(fc2.memberIndex(dW2))).toString()),
                 QString("[{},{x}] partial{}"));
        bool geluBackwardLater = false;
        for (const auto& u : a.resolvedLater)
            geluBackwardLater |= u.reason == UnassignedReason::MultiBlockInput && g.op(u.op).phase == Phase::Backward;
        QVERIFY(geluBackwardLater);
    }

    // Attention: qkv = X·Wqkv [8,16,64]·[64,192], heads K=H=8, Dh=8, columns grouped per head as
    // (q,k,v); reshape [8,16,8,3,8], slice q/k/v, transpose to [B,H,S,Dh], scores = q·kᵀ, softmax,
    // context = probs·v, loss. By hand: ONE block — the weight-free scores and context dots join the
    // QKV block (under cols the 8 heads are split, under rows the batch) with softmax between them
    // and all their backward dots. 3 strategies on {x=8}.
    void attention() {
        Graph g("attn");
        GraphBuilder b(g);
        const int64_t B = 8, S = 16, D = 64, H = 8, Dh = 8;
        OpId x = b.parameter("x", TensorType{kF, {B, S, D}}, ParamRole::Input);
        OpId qkv = b.matmul(x, weight(b, "qkv.w", {D, 3 * D}));
        OpId grouped = b.reshape(qkv, {B, S, H, 3, Dh});
        auto part = [&](int64_t k) {
            return b.transpose(b.reshape(b.sliceAxis(grouped, 3, k, k + 1), {B, S, H, Dh}), {0, 2, 1, 3});
        };
        OpId q = part(0), k = part(1), v = part(2);
        OpId scores = b.dot(q, k, DotDimensionNumbers{{0, 1}, {0, 1}, {3}, {3}});
        OpId mx = b.reduce(scores, {3}, ReduceKind::Max);
        OpId e = b.exp(b.sub(scores, b.broadcast(mx, {B, H, S, S}, {0, 1, 2})));
        OpId probs = b.div(e, b.broadcast(b.reduce(e, {3}), {B, H, S, S}, {0, 1, 2}));
        OpId ctx = b.dot(probs, v, DotDimensionNumbers{{0, 1}, {0, 1}, {3}, {2}});
        finishTraining(g, b, ctx);
        for (const char* meshText : {"8", "2x4"}) {
            BlockAnalysis a = analyse(g, mesh(meshText));
            QCOMPARE(static_cast<int>(a.blocks.size()), 1);
            const auto& blk = a.blocks[0];
            QCOMPARE(blk.entry, qkv);
            QVERIFY(blk.memberIndex(scores) >= 0 && blk.memberIndex(ctx) >= 0);
            QCOMPARE(dotsIn(g, blk, Phase::Forward), 3);
            QCOMPARE(dotsIn(g, blk, Phase::Backward), 5);  // dWqkv, dq, dk, dprobs, dv (x is an input)
            QVERIFY(memberKinds(g, blk).count("exponential") == 1);
            QCOMPARE(blk.strategies.size(), std::string(meshText) == "8" ? 3u : 9u);
            auto report = checkBlocks(g, a);
            QVERIFY2(report.pass, report.firstViolation.c_str());
            QCOMPARE(a.coverage(g), 1.0);
        }
    }

    // Residual pair: h = X·W1, y = h·W2, r = h + y. By hand: two blocks; the residual add takes
    // operands from both: resolved later (multi-block input); so is everything after it.
    void residualPair() {
        Graph g("residual");
        GraphBuilder b(g);
        OpId x = b.parameter("x", TensorType{kF, {8, 16, 64}}, ParamRole::Input);
        OpId h = b.matmul(x, weight(b, "w1", {64, 64}));
        OpId y = b.matmul(h, weight(b, "w2", {64, 64}));
        OpId r = b.add(h, y);
        finishTraining(g, b, r);
        BlockAnalysis a = analyse(g, mesh("8"));
        QCOMPARE(static_cast<int>(a.blocks.size()), 2);
        QCOMPARE(a.blocks[0].entry, h);
        QCOMPARE(a.blocks[1].entry, y);
        QVERIFY(a.blockOf[static_cast<size_t>(r)] == -1);
        bool found = false;
        for (const auto& u : a.resolvedLater)
            if (u.op == r) {
                found = true;
                QCOMPARE(u.reason, UnassignedReason::MultiBlockInput);
            }
        QVERIFY(found);
        auto report = checkBlocks(g, a);
        QVERIFY2(report.pass, report.firstViolation.c_str());
        QCOMPARE(a.coverage(g), 1.0);
    }

    // Tied embedding: e = gather(T, ids) [8,16,32] from T [64,32]; logits = e·Tᵀ. By hand: one
    // block (the head dot) that holds T but not the lookup: a block grows along what it computes,
    // not through the shared weight to its other reader, so the lookup is resolved later with the
    // layer that reads it (split over the batch like the head's rows, not kept whole with T).
    // Under x:cols (vocab split) T is [{x},{}].
    void tiedEmbedding() {
        Graph g("tied");
        GraphBuilder b(g);
        OpId table = weight(b, "embed.weight", {64, 32});
        OpId ids = b.parameter("ids", TensorType{DType::S32, {8, 16}}, ParamRole::Input);
        GatherDimensionNumbers gd;
        gd.offsetDims = {2};
        gd.collapsedSliceDims = {0};
        gd.startIndexMap = {0};
        gd.indexVectorDim = 2;
        gd.sliceSizes = {1, 32};
        OpId e = b.gather(table, ids, gd);
        OpId logits = b.dot(e, table, DotDimensionNumbers{{}, {}, {2}, {1}});
        finishTraining(g, b, logits);
        BlockAnalysis a = analyse(g, mesh("8"));
        QCOMPARE(static_cast<int>(a.blocks.size()), 1);
        const auto& blk = a.blocks[0];
        QCOMPARE(blk.entry, logits);
        QVERIFY(blk.memberIndex(table) >= 0);
        QVERIFY(blk.memberIndex(e) < 0);
        bool resolvedLater = false;
        for (const UnassignedOp& u : a.resolvedLater) resolvedLater |= u.op == e;
        QVERIFY(resolvedLater);
        QCOMPARE(labels(blk), (std::vector<std::string>{"x:rows", "x:cols", "x:contract"}));
        const auto ti = static_cast<size_t>(blk.memberIndex(table));
        QCOMPARE(QString::fromStdString(a.sharding(blk, 1, ti).toString()), QString("[{x},{}] partial{}"));
        auto report = checkBlocks(g, a);
        QVERIFY2(report.pass, report.firstViolation.c_str());
        QCOMPARE(a.coverage(g), 1.0);
    }

    // Corrupting one stored sharding must make the checker fail (it can fail).
    void checkerCatchesCorruption() {
        Graph g("mlp");
        GraphBuilder b(g);
        OpId x = b.parameter("x", TensorType{kF, {8, 16, 64}}, ParamRole::Input);
        OpId h = b.matmul(x, weight(b, "fc1.w", {64, 256}));
        OpId y = b.matmul(gelu(b, h), weight(b, "fc2.w", {256, 64}));
        finishTraining(g, b, y);
        BlockAnalysis a = analyse(g, mesh("8"));
        QVERIFY(checkBlocks(g, a).pass);
        // The tanh in fc1's block under x:cols claims to be split on dim 0 instead of dim 2.
        auto& blk = a.blocks[0];
        size_t tanhIndex = 0;
        for (size_t k = 0; k < blk.members.size(); ++k)
            if (g.op(blk.members[k]).kind == OpKind::Tanh) tanhIndex = k;
        a.shardings.push_back(*parseSharding("[{x},{},{}]"));
        blk.strategies[1].memberShardings[tanhIndex] = static_cast<uint32_t>(a.shardings.size() - 1);
        auto report = checkBlocks(g, a);
        QVERIFY(!report.pass);
        QVERIFY2(QString::fromStdString(report.firstViolation).contains("x:cols"), report.firstViolation.c_str());
        QVERIFY(QString::fromStdString(report.firstViolation).contains(QString::fromStdString(g.op(blk.members[tanhIndex]).name)));
        // A missing op is caught too.
        BlockAnalysis b2 = analyse(g, mesh("8"));
        b2.resolvedLater.pop_back();
        QVERIFY(!checkBlocks(g, b2).pass);
    }

    void structuralPairingMatchesProvenance_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("qkv");
        QTest::newRow("gpt2") << "gpt2" << 0;
        QTest::newRow("llama2-7b separate qkv") << "llama2-7b" << 1;
        QTest::newRow("mixtral") << "mixtral-8x7b" << 0;
    }
    void structuralPairingMatchesProvenance() {
        QFETCH(QString, preset);
        QFETCH(int, qkv);
        auto cfg = presetConfig(preset.toStdString());
        QVERIFY(cfg.ok());
        cfg->numLayers = 2;
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        opt.qkv = qkv ? QkvLayout::Separate : QkvLayout::Fused;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY(model.ok());
        const auto byProvenance = pairBackwardDotsByProvenance(model->graph);
        const Graph stripped = stripProvenance(model->graph);
        QVERIFY(pairBackwardDotsByProvenance(stripped).empty());
        const auto structural = pairBackwardDotsStructurally(stripped);
        QVERIFY(!byProvenance.empty());
        QCOMPARE(structural.size(), byProvenance.size());
        QVERIFY(structural == byProvenance);
        // Same blocks either way.
        BlockAnalysis a = analyse(model->graph, mesh("8"));
        BlockAnalysis s = analyse(stripped, mesh("8"));
        QCOMPARE(a.blocks.size(), s.blocks.size());
        for (size_t i = 0; i < a.blocks.size(); ++i) QVERIFY(a.blocks[i].members == s.blocks[i].members);
        QVERIFY(checkBlocks(stripped, s).pass);
    }

    void presets_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("meshText");
        for (const auto& name : presetNames())
            for (const char* m : {"8", "2x4"})
                QTest::newRow((name + " " + m).c_str()) << QString::fromStdString(name) << QString(m);
    }
    void presets() {
        QFETCH(QString, preset);
        QFETCH(QString, meshText);
        auto cfg = presetConfig(preset.toStdString());
        QVERIFY(cfg.ok());
        cfg->numLayers = std::min<int64_t>(cfg->numLayers, cfg->family == ModelFamily::Moe ? 4 : 3);
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY(model.ok());
        const Graph& g = model->graph;
        BlockAnalysis a = analyse(g, mesh(meshText.toLatin1().constData()));
        auto report = checkBlocks(g, a);
        QVERIFY2(report.pass, report.firstViolation.c_str());
        QCOMPARE(report.reshardSteps, int64_t{0});
        QCOMPARE(a.coverage(g), 1.0);
        const auto perLayer = blocksPerLayer(g, a);
        QString layers;
        std::map<size_t, int> strategyCounts;
        for (const auto& [layer, count] : perLayer) layers += QString::number(count) + " ";
        for (const auto& b : a.blocks) ++strategyCounts[b.strategies.size()];
        QString strategies;
        for (const auto& [n, count] : strategyCounts) strategies += QString("%1x%2 ").arg(count).arg(n);
        std::map<UnassignedReason, int> reasons;
        for (const auto& u : a.resolvedLater) ++reasons[u.reason];
        QString why;
        for (const auto& [r, count] : reasons) why += QString("%1=%2 ").arg(QString::fromStdString(std::string(unassignedReasonName(r)))).arg(count);
        int64_t inBlocks = 0;
        for (const auto& b : a.blocks) inBlocks += static_cast<int64_t>(b.members.size());
        qInfo("%s mesh %s: %lld ops, %zu blocks, per layer [%s], strategies {%s}, in blocks %lld, later {%s}",
              qPrintable(preset), qPrintable(meshText), static_cast<long long>(g.size()), a.blocks.size(),
              qPrintable(layers.trimmed()), qPrintable(strategies.trimmed()), static_cast<long long>(inBlocks), qPrintable(why.trimmed()));
        // A GPT layer is a handful of blocks, all layers alike, each block a real decision.
        QVERIFY(!perLayer.empty());
        const int first = perLayer.begin()->second;
        if (cfg->family != ModelFamily::Moe)
            for (const auto& [layer, count] : perLayer) QCOMPARE(count, first);
        // CFP's 4 per GPT layer when the heads split evenly over every mesh axis; with 12 heads on 8
        // devices (gpt2, gpt3-125m) the attention dots cannot follow the QKV column split and seed
        // their own blocks: 6.
        if (cfg->family == ModelFamily::Gpt) QCOMPARE(first, cfg->numHeads % 8 == 0 ? 4 : 6);
        if (cfg->family == ModelFamily::Llama) QCOMPARE(first, 5);  // gate and up are separate dots
        for (const auto& b : a.blocks) QVERIFY(b.strategies.size() >= 2);
    }

    // The whole GPT-3 175B step (96 layers) on {x=8}: time and invariants.
    void gpt3_175b_full() {
        auto cfg = presetConfig("gpt3-175b");
        QVERIFY(cfg.ok());
        BuildOptions opt;
        opt.batch = 8;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY(model.ok());
        const Graph& g = model->graph;
        const auto t0 = std::chrono::steady_clock::now();
        BlockAnalysis a = analyse(g, mesh("8"));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto perLayer = blocksPerLayer(g, a);
        qInfo("gpt3-175b: %lld ops, %zu blocks, %zu layers with blocks, %zu interned shardings, analysis %.3f s",
              static_cast<long long>(g.size()), a.blocks.size(), perLayer.size(), a.shardings.size(), seconds);
        QCOMPARE(static_cast<int>(perLayer.size()), 96);
        for (const auto& [layer, count] : perLayer) QCOMPARE(count, 4);
        QCOMPARE(a.coverage(g), 1.0);
        auto report = checkBlocks(g, a);
        QVERIFY2(report.pass, report.firstViolation.c_str());
    }
};

QTEST_GUILESS_MAIN(TestBlocks)
#include "tst_blocks.moc"
