// The analysis pipeline end to end: golden summaries for small builder instances, the GPT-3 175B
// acceptance figures, and a property test over random DAGs of supported ops.
#include <QFile>
#include <QtTest>
#include <map>
#include <random>
#include <set>

#include "analysis/analysis.h"
#include "ir/graph_builder.h"
#include "models/models.h"
#include "sharding/mesh.h"

#include "must.h"

using namespace cfp;

namespace {

Mesh mesh(const char* text) { return test::must(parseMesh(text), text); }

ModelConfig tiny(const char* preset, int64_t layers) {
    ModelConfig c = presetConfig(preset).value();
    c.numLayers = layers;
    return c;
}

// A stable, human-readable summary of an analysis: what the golden files pin.
std::string summary(const Graph& g, const AnalysisReport& r) {
    std::string out = "model " + g.name() + "\nmesh " + r.blocks.mesh.toString() + "\nops " + std::to_string(g.size()) + "\n";
    out += "blocks " + std::to_string(r.blocks.blocks.size()) + "\n";
    for (const ParallelBlock& b : r.blocks.blocks) {
        const Op& entry = g.op(b.entry);
        out += "  block " + std::to_string(b.id) + " entry " + entry.scope + " members " + std::to_string(b.members.size()) +
               " strategies";
        for (const BlockStrategy& s : b.strategies) out += " " + s.label;
        out += "\n";
    }
    out += "check " + std::string(r.check.pass ? "pass" : r.check.firstViolation) + "\n";
    out += "cover " + describeCover(r.cover) + "\n";
    char buf[160];
    std::snprintf(buf, sizeof buf, "coverage %.4f\nlog10 op %.2f block %.2f segment %.2f\n", r.coverage, r.space.opLevelLog10,
                  r.space.blockLevelLog10, r.space.segmentLevelLog10);
    return out + buf;
}

// Random DAG of ops that have sharding rules: matmuls, elementwise, reductions, transposes.
Graph randomGraph(uint32_t seed) {
    std::mt19937 rng(seed);
    Graph g("random" + std::to_string(seed));
    GraphBuilder b(g);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    const int64_t d = 16;
    std::vector<OpId> pool{b.parameter("x", {DType::F32, {d, d}}, ParamRole::Input)};
    const int steps = 6 + pick(10);
    for (int i = 0; i < steps; ++i) {
        const OpId a = pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))];
        switch (pick(5)) {
            case 0: {
                OpId w = b.parameter("w" + std::to_string(i), {DType::F32, {d, d}}, ParamRole::Trainable);
                pool.push_back(b.matmul(a, w));
                break;
            }
            case 1: pool.push_back(b.unary(OpKind::Tanh, a)); break;
            case 2: pool.push_back(b.add(a, pool[static_cast<size_t>(pick(static_cast<int>(pool.size())))])); break;
            case 3: pool.push_back(b.transpose(a, {1, 0})); break;
            default: {
                OpId r = b.reduce(a, {1});
                pool.push_back(b.broadcast(r, {d, d}, {0}));
                break;
            }
        }
    }
    b.output(pool.back());
    return g;
}

}  // namespace

class TestAnalysis : public QObject {
    Q_OBJECT

private slots:
    void goldenSummaries_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("meshText");
        QTest::addColumn<QString>("golden");
        QTest::newRow("gpt 2 layers, 8") << "gpt3-350m" << "8" << "gpt_2layer_mesh8.txt";
        QTest::newRow("gpt 2 layers, 2x4") << "gpt3-350m" << "dp=2,tp=4" << "gpt_2layer_mesh2x4.txt";
        QTest::newRow("llama 2 layers, 8") << "llama2-7b" << "8" << "llama_2layer_mesh8.txt";
        QTest::newRow("moe 2 layers, 8") << "mixtral-8x7b" << "8" << "moe_2layer_mesh8.txt";
    }
    void goldenSummaries() {
        QFETCH(QString, preset);
        QFETCH(QString, meshText);
        QFETCH(QString, golden);
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        auto model = buildTrainingStep(tiny(preset.toStdString().c_str(), 2), opt);
        QVERIFY(model.ok());
        auto report = analyzeGraph(model->graph, mesh(meshText.toStdString().c_str()));
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().toString().c_str());
        QVERIFY(report->check.pass);
        const std::string text = summary(model->graph, *report);
        const QString path = QStringLiteral(CFP_TEST_DATA_DIR "/analysis/") + golden;
        if (qEnvironmentVariableIsSet("CFP_UPDATE_GOLDEN")) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(text));
        }
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
        QCOMPARE(QString::fromStdString(text), QString::fromUtf8(f.readAll()));
        // Same input, same analysis (determinism).
        auto again = analyzeGraph(model->graph, mesh(meshText.toStdString().c_str()));
        QCOMPARE(summary(model->graph, *again), text);
    }

    // Vocabulary-parallel cross-entropy (Megatron-LM's): the LM head's block, split over the
    // vocabulary, takes the loss with it — each device's row maximum and sum of exponentials over
    // its slice of the vocabulary are partial (all-reduced: [tokens] values, not [tokens, vocab]),
    // the labels' one-hot is made locally for the slice, and the logits stay split to the loss.
    void llamaLossIsVocabularyParallel() {
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        auto model = buildTrainingStep(tiny("llama2-7b", 2), opt);
        QVERIFY(model.ok());
        const Graph& g = model->graph;
        auto r = analyzeGraph(g, mesh("8"));
        QVERIFY(r.ok());
        QVERIFY2(r->check.pass, r->check.firstViolation.c_str());
        const ParallelBlock* head = nullptr;
        for (const ParallelBlock& b : r->blocks.blocks)
            if (g.op(b.entry).scope == "lm_head") head = &b;
        QVERIFY(head);
        const int64_t vocab = g.op(head->entry).type.dims.back();
        QCOMPARE(vocab, int64_t{32000});
        size_t cols = head->strategies.size();
        for (size_t s = 0; s < head->strategies.size(); ++s)
            if (head->strategies[s].label == "x:cols") cols = s;
        QVERIFY(cols < head->strategies.size());
        QCOMPARE(QString::fromStdString(r->blocks.sharding(*head, cols, static_cast<size_t>(head->memberIndex(head->entry))).toString()), QString("[{},{},{x}] partial{}"));
        int maxima = 0, exps = 0, oneHots = 0;
        for (size_t m = 0; m < head->members.size(); ++m) {
            const Op& op = g.op(head->members[m]);
            if (op.phase != Phase::Forward) continue;
            const std::string sh = r->blocks.sharding(*head, cols, m).toString();
            const auto& shape = op.type.dims;
            if (op.kind == OpKind::Reduce && op.attrs.reduceKind == ReduceKind::Max && !op.operands.empty() &&
                g.op(op.operands[0]).type.dims.back() == vocab) {
                ++maxima;  // all-reduced (max) over x at the op
                QCOMPARE(QString::fromStdString(sh), QString("[{},{}] partial{}"));
                const auto& own = head->strategies[cols].ownCollectives;
                QVERIFY(std::any_of(own.begin(), own.end(), [&](const OwnCollective& c) {
                    return c.op == op.id && c.kind == CollectiveKind::AllReduce && c.axes == std::vector<std::string>{"x"};
                }));
            }
            if (op.kind == OpKind::Exponential && shape.size() == 3 && shape.back() == vocab) {
                ++exps;
                QCOMPARE(QString::fromStdString(sh), QString("[{},{},{x}] partial{}"));
            }
            if (op.kind == OpKind::Compare && shape.size() == 3 && shape.back() == vocab) {
                ++oneHots;
                QCOMPARE(QString::fromStdString(sh), QString("[{},{},{x}] partial{}"));
            }
        }
        // The forward's collectives carry values per token, none per logit.
        for (const OwnCollective& c : head->strategies[cols].ownCollectives)
            if (g.op(c.op).phase == Phase::Forward) QVERIFY2(c.bytes <= 8 * 64 * 4, g.op(c.op).name.c_str());
        QCOMPARE(maxima, 1);
        QCOMPARE(exps, 1);
        QCOMPARE(oneHots, 1);
    }

    // The issue's acceptance figures on the full GPT-3 175B step.
    void gpt3_175b() {
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 2048;
        auto model = buildTrainingStep(presetConfig("gpt3-175b").value(), opt);
        QVERIFY(model.ok());
        auto r = analyzeGraph(model->graph, mesh("8"));
        QVERIFY(r.ok());
        QVERIFY2(r->check.pass, r->check.firstViolation.c_str());
        QVERIFY(r->coverage >= 0.99);
        QVERIFY(r->cover.types.size() <= 4);
        int longest = 0;
        for (const RepeatRun& run : repeatRuns(r->cover)) longest = std::max(longest, run.count);
        QVERIFY2(longest >= 95 && longest <= 97, qPrintable(QString::number(longest)));
        // Blocks are real decisions: every layer block keeps its 3 matmul strategies on 8 devices,
        // and the block-level space is orders of magnitude below the op-level one.
        int64_t threeOrMore = 0;
        for (const ParallelBlock& b : r->blocks.blocks) threeOrMore += b.strategies.size() >= 3;
        QVERIFY(threeOrMore >= 4 * 95);
        QVERIFY(r->blocks.blocks.size() < 6 * 96 + 8);
        QVERIFY(r->space.opLevelLog10 > 100 * r->space.blockLevelLog10);
        QVERIFY(r->blocks.unsupported.empty());
        qInfo("gpt3-175b on 8: %zu blocks, %zu types, analysis %.3f s", r->blocks.blocks.size(), r->cover.types.size(),
              r->seconds);
    }

    // Issue 24: segments follow the model's layers. On every built-in preset the longest run of
    // one segment type is a run of whole layers, one `layers.i` per segment, and the segments
    // around it are whole too. The run holds layers 1..N-1: layer 0's first block also computes
    // what every layer reads (the causal mask, RoPE tables), so layer 0 is a different structure
    // and its own one-off segment, "layers.0" plus those shared ops. (Before, the run started in
    // the middle of layer 0 and each segment was layers.i.mlp + layers.i+1.attn.)
    void presetSegmentsAreLayers_data() {
        QTest::addColumn<QString>("preset");
        for (const std::string& name : presetNames()) QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void presetSegmentsAreLayers() {
        QFETCH(QString, preset);
        const ModelConfig config = presetConfig(preset.toStdString()).value();
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        auto model = buildTrainingStep(config, opt);
        QVERIFY(model.ok());
        const Graph& g = model->graph;
        auto r = analyzeGraph(g, mesh("8"), AnalysisOptions{.check = false, .searchSpace = false});
        QVERIFY(r.ok());
        const SegmentCover& cover = r->cover;
        const auto runs = repeatRuns(cover);
        const RepeatRun run = *std::max_element(runs.begin(), runs.end(), [](const RepeatRun& a, const RepeatRun& b) { return a.count < b.count; });
        const auto layers = static_cast<int>(config.numLayers);
        const std::string where = preset.toStdString() + ": " + describeCover(cover);

        // The layers (scope "layers.<i>") of a segment's ops, and its ops outside any layer.
        auto layersOf = [&](const Segment& s, std::vector<OpId>* unlayered) {
            std::set<std::string> out;
            for (int b = s.firstBlock; b < s.firstBlock + s.blockCount; ++b)
                for (OpId op : r->blocks.blocks[static_cast<size_t>(b)].members) {
                    const std::string_view layer = layerScope(g.op(op).scope);
                    if (!layer.empty()) out.insert(std::string(layer));
                    else if (unlayered) unlayered->push_back(op);
                }
            return out;
        };
        // Every block of a layer is in one segment: a layer's blocks are consecutive.
        std::map<std::string, std::set<int>> segmentsOfLayer;
        for (size_t i = 0; i < cover.segments.size(); ++i)
            for (const std::string& l : layersOf(cover.segments[i], nullptr)) segmentsOfLayer[l].insert(static_cast<int>(i));
        for (const auto& [layer, segs] : segmentsOfLayer)
            QVERIFY2(segs.size() == 1, qPrintable(QString::fromStdString(where + ": " + layer + " is split")));

        const int firstLayer = layers - run.count;  // 0 when every layer repeats, else 1
        QVERIFY2(firstLayer == 0 || firstLayer == 1, qPrintable(QString::fromStdString(where)));
        for (int k = 0; k < run.count; ++k) {
            const auto got = layersOf(cover.segments[static_cast<size_t>(run.firstSegment + k)], nullptr);
            const std::set<std::string> want{"layers." + std::to_string(firstLayer + k)};
            QVERIFY2(got == want, qPrintable(QString::fromStdString(where + ": segment " + std::to_string(run.firstSegment + k))));
        }
        if (firstLayer == 1) {
            // Layer 0 is the segment before the run, whole, with only shared ops besides: each is
            // read (directly or through other such ops) by ops of later layers.
            QVERIFY(run.firstSegment >= 1);
            std::vector<OpId> extra;
            const auto head = layersOf(cover.segments[static_cast<size_t>(run.firstSegment - 1)], &extra);
            QVERIFY2(head == std::set<std::string>{"layers.0"}, qPrintable(QString::fromStdString(where)));
            QVERIFY2(!extra.empty(), qPrintable(QString::fromStdString(where + ": layer 0 repeats yet is its own type")));
            std::set<OpId> shared(extra.begin(), extra.end());
            bool readLater = false;
            for (const Op& op : g.ops())
                for (OpId in : op.operands)
                    if (shared.count(in) && layerScope(op.scope).size() && layerScope(op.scope) != "layers.0") readLater = true;
            QVERIFY2(readLater, qPrintable(QString::fromStdString(where)));
        }
        // After the run: no layer (final norm, LM head, loss).
        for (size_t i = static_cast<size_t>(run.firstSegment + run.count); i < cover.segments.size(); ++i)
            QVERIFY2(layersOf(cover.segments[i], nullptr).empty(), qPrintable(QString::fromStdString(where)));
        qInfo("%s: %s", preset.toStdString().c_str(), describeCover(cover).c_str());
    }

    void twoDimensionalMeshHasMoreStrategies() {
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        auto model = buildTrainingStep(tiny("gpt3-350m", 2), opt);
        auto one = analyzeGraph(model->graph, mesh("8"));
        auto two = analyzeGraph(model->graph, mesh("2x4"));
        QVERIFY(one.ok() && two.ok());
        QCOMPARE(one->blocks.blocks.size(), two->blocks.blocks.size());
        size_t max1 = 0, max2 = 0;
        for (const auto& b : one->blocks.blocks) max1 = std::max(max1, b.strategies.size());
        for (const auto& b : two->blocks.blocks) max2 = std::max(max2, b.strategies.size());
        QCOMPARE(max1, size_t{3});
        QVERIFY(max2 > max1);
    }

    // Property test: random DAGs keep the invariants.
    void randomDagsKeepInvariants() {
        for (uint32_t seed = 1; seed <= 40; ++seed) {
            Graph g = randomGraph(seed);
            QVERIFY(g.validate().ok());
            for (const char* m : {"8", "2x4"}) {
                auto r = analyzeGraph(g, mesh(m));
                QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
                QVERIFY2(r->check.pass, qPrintable(QString("seed %1 mesh %2: %3").arg(seed).arg(m).arg(QString::fromStdString(r->check.firstViolation))));
                QCOMPARE(r->coverage, 1.0);
                // Every op exactly once: in one block or in the resolved-later set.
                std::vector<int> seen(static_cast<size_t>(g.size()), 0);
                for (const auto& b : r->blocks.blocks)
                    for (OpId op : b.members) ++seen[static_cast<size_t>(op)];
                for (const auto& u : r->blocks.resolvedLater) ++seen[static_cast<size_t>(u.op)];
                for (size_t i = 0; i < seen.size(); ++i) QVERIFY2(seen[i] == 1, qPrintable(QString("seed %1 op %2 seen %3").arg(seed).arg(i).arg(seen[i])));
                auto again = analyzeGraph(g, mesh(m));
                QCOMPARE(summary(g, *again), summary(g, *r));
            }
        }
    }

    void jsonHasTheIssueFields() {
        BuildOptions opt;
        opt.batch = 2;
        opt.seq = 32;
        auto model = buildTrainingStep(tiny("gpt3-350m", 2), opt);
        auto r = analyzeGraph(model->graph, mesh("8"));
        QVERIFY(r.ok());
        const auto j = analysisToJson(model->graph, *r);
        for (const char* key : {"blocks", "blocks_per_segment_type", "segment_types", "segments", "ops_covered_fraction",
                                "comm_free_check", "search_space_log10", "unsupported_ops", "analysis_seconds"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["comm_free_check"].get<std::string>(), std::string("pass"));
        for (const char* key : {"op_level", "block_level", "segment_level"}) QVERIFY(j["search_space_log10"].contains(key));
        for (const auto& s : j["segments"]) {
            QVERIFY(s.contains("type") && s.contains("count") && s.contains("blocks") && s.contains("position"));
        }
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
