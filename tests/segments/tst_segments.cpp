// Segments: canonical block fingerprints (renaming-invariant, sensitive to structure, pinned by a
// golden value), the segment cover (hand-worked sequences, brute force over every cover of small
// sequences, a real GPT graph) and the search-space report.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "ir/graph_builder.h"
#include "models/models.h"
#include "segments/fingerprint.h"
#include "segments/search_space.h"
#include "segments/segments.h"

using namespace cfp;

namespace {

QByteArray text(const Error& e) { return QByteArray::fromStdString(e.toString()); }

// A small MLP-like block: y = tanh(x·W + broadcast(b)); members are every op from the dot on.
// `scope` and `prefix` rename everything; the other knobs change structure.
struct MlpKnobs {
    std::string scope = "layers.3.mlp";
    std::string prefix = "l3";
    int64_t outDim = 16;
    DType dtype = DType::F32;
    bool swapAdd = false;          // add(bias, dot) instead of add(dot, bias)
    bool sameOperandTwice = false;  // multiply(t, t) instead of multiply(t, scale)
    double scale = 0.5;
    ComparisonDirection cmp = ComparisonDirection::GT;
};

struct BuiltBlock {
    Graph graph;
    BlockView block;
};

BuiltBlock buildMlp(const MlpKnobs& k) {
    BuiltBlock out{Graph("mlp"), {}};
    GraphBuilder b(out.graph);
    b.setScope(k.scope);
    OpId x = b.parameter(k.prefix + ".x", {k.dtype, {4, 8}}, ParamRole::Input);
    OpId w = b.parameter(k.prefix + ".w", {k.dtype, {8, k.outDim}}, ParamRole::Trainable);
    OpId bias = b.parameter(k.prefix + ".b", {k.dtype, {k.outDim}}, ParamRole::Trainable);
    OpId s = b.parameter(k.prefix + ".s", {k.dtype, {4, k.outDim}}, ParamRole::Input);
    const OpId first = b.graph().size();
    OpId y = b.matmul(x, w);
    OpId bb = b.broadcast(bias, {4, k.outDim}, {1});
    OpId z = k.swapAdd ? b.add(bb, y) : b.add(y, bb);
    OpId t = b.unary(OpKind::Tanh, z);
    OpId m = b.mul(t, k.sameOperandTwice ? t : s);
    OpId c = b.constant(k.scale, {k.dtype, {4, k.outDim}});
    OpId g = b.compare(m, c, k.cmp);
    OpId r = b.reduce(m, {1});
    b.output(g);
    b.output(r);
    for (OpId id = first; id < b.graph().size(); ++id) out.block.members.push_back(id);
    out.block.strategyCount = 3;
    return out;
}

uint64_t fp(const BuiltBlock& bb) {
    auto r = blockFingerprint(bb.graph, bb.block);
    if (!r) qFatal("fingerprint failed: %s", r.error().toString().c_str());
    return *r;
}

// ---- brute force over every cover, for the DP comparison ----

struct Objective {
    int types = 0;
    bool splitsLayer = false;  // some cut has blocks of one layer on both sides
    int64_t combos = 0;
    int64_t dictBlocks = 0;
    int segments = 0;
    std::vector<int> lengths;
    auto operator<=>(const Objective&) const = default;
};

struct BruteResult {
    Objective best;
    std::vector<std::pair<int, int>> segments;  // (first, count)
};

// `layers`: per block a layer number or -1 (none); empty: no block has a layer.
BruteResult bruteForce(const std::vector<int>& seq, const std::vector<int64_t>& countOfSymbol, int maxWindow,
                       const std::vector<int>& layers = {}) {
    const int n = static_cast<int>(seq.size());
    auto splits = [&](int cut) {  // blocks of one layer before and after `cut`
        for (int i = 0; i < cut && !layers.empty(); ++i)
            for (int j = cut; j < n; ++j)
                if (layers[static_cast<size_t>(i)] >= 0 && layers[static_cast<size_t>(i)] == layers[static_cast<size_t>(j)])
                    return true;
        return false;
    };
    BruteResult res;
    bool have = false;
    struct Use {
        int64_t code;  // the window's symbols in base 4 (digit = symbol + 1): unique per window
        int length;
        int uses;
        int firstSegment;
        int64_t combos;
    };
    std::vector<int> lengths;
    std::vector<Use> types;
    for (uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
        lengths.clear();
        int start = 0;
        bool ok = true;
        for (int i = 1; i <= n && ok; ++i) {
            if (i == n || (cuts >> (i - 1)) & 1u) {
                if (i - start > maxWindow) ok = false;
                lengths.push_back(i - start);
                start = i;
            }
        }
        if (!ok) continue;
        types.clear();
        int p = 0;
        for (size_t i = 0; i < lengths.size(); ++i) {
            int64_t code = 0, combos = 1;
            for (int q = 0; q < lengths[i]; ++q) {
                code = code * 4 + seq[static_cast<size_t>(p + q)] + 1;
                combos *= countOfSymbol[static_cast<size_t>(seq[static_cast<size_t>(p + q)])];
            }
            auto it = std::find_if(types.begin(), types.end(), [&](const Use& u) { return u.code == code; });
            if (it == types.end()) types.push_back(Use{code, lengths[i], 1, static_cast<int>(i), combos});
            else it->uses++;
            p += lengths[i];
        }
        // Repeat rule: multi-block types occur twice, or once as the first or last segment when
        // some multi-block type repeats.
        bool repeated = false, edgeOneOff = false;
        Objective o;
        for (const Use& u : types) {
            o.combos += u.combos;
            o.dictBlocks += u.length;
            if (u.length < 2) continue;
            if (u.uses >= 2) {
                repeated = true;
            } else if (u.firstSegment == 0 || u.firstSegment + 1 == static_cast<int>(lengths.size())) {
                edgeOneOff = true;
            } else {
                ok = false;
            }
        }
        if (!ok || (edgeOneOff && !repeated)) continue;
        o.types = static_cast<int>(types.size());
        for (int i = 0, cut = 0; i + 1 < static_cast<int>(lengths.size()); ++i)
            o.splitsLayer = o.splitsLayer || splits(cut += lengths[static_cast<size_t>(i)]);
        o.segments = static_cast<int>(lengths.size());
        o.lengths = lengths;
        if (!have || o < res.best) {
            have = true;
            res.best = o;
            res.segments.clear();
            int q = 0;
            for (int l : lengths) {
                res.segments.emplace_back(q, l);
                q += l;
            }
        }
    }
    return res;
}

std::vector<uint64_t> symbolsToFingerprints(const std::vector<int>& seq) {
    std::vector<uint64_t> f;
    for (int s : seq) f.push_back(0xab00 + static_cast<uint64_t>(s));
    return f;
}

// Compares the search with brute force on one sequence; returns an empty string when equal.
std::string compareWithBruteForce(const std::vector<int>& seq, const std::vector<int64_t>& countOfSymbol, int maxWindow,
                                  const std::vector<int>& layers = {}) {
    std::vector<int64_t> counts;
    for (int s : seq) counts.push_back(countOfSymbol[static_cast<size_t>(s)]);
    const auto fps = symbolsToFingerprints(seq);
    CoverOptions opt;
    opt.maxWindowBlocks = maxWindow;
    std::vector<BlockSignature> sigs(fps.size());
    for (size_t i = 0; i < fps.size(); ++i) {
        sigs[i] = BlockSignature{fps[i], counts[i], {}, {}};
        if (!layers.empty() && layers[i] >= 0) sigs[i].layer = "layers." + std::to_string(layers[i]);
    }
    auto cover = computeSegmentCover(std::span<const BlockSignature>(sigs), opt);
    std::string seqText;
    for (size_t i = 0; i < seq.size(); ++i) {
        seqText += static_cast<char>('A' + seq[i]);
        if (!layers.empty()) seqText += layers[i] < 0 ? std::string("-") : std::to_string(layers[i]);
    }
    if (!cover) return seqText + ": " + cover.error().toString();
    if (cover->quality != CoverQuality::Optimal) return seqText + ": not optimal";
    const BruteResult brute = bruteForce(seq, countOfSymbol, maxWindow, layers);
    std::vector<std::pair<int, int>> got;
    for (const Segment& s : cover->segments) got.emplace_back(s.firstBlock, s.blockCount);
    if (got != brute.segments || static_cast<int>(cover->types.size()) != brute.best.types) {
        std::string msg = seqText + " W=" + std::to_string(maxWindow) + ": search " + describeCover(*cover) +
                          " vs brute force lengths";
        for (const auto& [f, c] : brute.segments) msg += " " + std::to_string(c);
        return msg;
    }
    auto check = checkCover(sigs, *cover, opt);
    if (!check) return seqText + ": " + check.error().toString();
    return {};
}

std::vector<int> repeatPattern(const std::string& head, const std::string& layer, int times, const std::string& tail) {
    std::vector<int> seq;
    for (char c : head) seq.push_back(c - 'A');
    for (int i = 0; i < times; ++i)
        for (char c : layer) seq.push_back(c - 'A');
    for (char c : tail) seq.push_back(c - 'A');
    return seq;
}

SegmentCover coverOf(const std::vector<int>& seq, int64_t strategies = 3, CoverOptions opt = {}) {
    const auto fps = symbolsToFingerprints(seq);
    std::vector<int64_t> counts(seq.size(), strategies);
    auto r = computeSegmentCover(std::span<const uint64_t>(fps), std::span<const int64_t>(counts), opt);
    if (!r) qFatal("cover failed: %s", r.error().toString().c_str());
    std::vector<BlockSignature> sigs(fps.size());
    for (size_t i = 0; i < fps.size(); ++i) sigs[i] = BlockSignature{fps[i], counts[i], {}};
    auto check = checkCover(sigs, *r, opt);
    if (!check) qFatal("cover check failed: %s", check.error().toString().c_str());
    return *r;
}

// The cover of `seq` where block i belongs to layer layers[i] ("layers.<k>", none when -1).
SegmentCover coverOfLayers(const std::vector<int>& seq, const std::vector<int>& layers, CoverOptions opt = {}) {
    const auto fps = symbolsToFingerprints(seq);
    std::vector<BlockSignature> sigs(fps.size());
    for (size_t i = 0; i < fps.size(); ++i) {
        sigs[i] = BlockSignature{fps[i], 3, {}, {}};
        if (layers[i] >= 0) sigs[i].layer = "layers." + std::to_string(layers[i]);
    }
    auto r = computeSegmentCover(std::span<const BlockSignature>(sigs), opt);
    if (!r) qFatal("cover failed: %s", r.error().toString().c_str());
    auto check = checkCover(sigs, *r, opt);
    if (!check) qFatal("cover check failed: %s", check.error().toString().c_str());
    return *r;
}

// Layer numbers for `head` unlayered blocks, `times` layers of `perLayer` blocks, `tail` unlayered.
std::vector<int> layerNumbers(int head, int perLayer, int times, int tail) {
    std::vector<int> out(static_cast<size_t>(head), -1);
    for (int l = 0; l < times; ++l) out.insert(out.end(), static_cast<size_t>(perLayer), l);
    out.insert(out.end(), static_cast<size_t>(tail), -1);
    return out;
}

}  // namespace

class TestSegments : public QObject {
    Q_OBJECT

private slots:
    // ---------------- fingerprints ----------------

    void fingerprintIgnoresNamesAndScopes() {
        MlpKnobs a, b;
        b.scope = "layers.4.mlp";
        b.prefix = "other_name";
        QCOMPARE(fp(buildMlp(a)), fp(buildMlp(b)));
        // Shifting ids (extra ops before the block) does not matter either.
        BuiltBlock shifted{Graph("shifted"), {}};
        {
            GraphBuilder gb(shifted.graph);
            gb.parameter("unrelated", {DType::F32, {3}}, ParamRole::Input);
            gb.parameter("unrelated2", {DType::F32, {5}}, ParamRole::Input);
        }
        BuiltBlock base = buildMlp(a);
        // Rebuild the same block after the two unrelated parameters.
        GraphBuilder gb(shifted.graph);
        gb.setScope("elsewhere");
        OpId x = gb.parameter("x", {DType::F32, {4, 8}}, ParamRole::Input);
        OpId w = gb.parameter("w", {DType::F32, {8, 16}}, ParamRole::Trainable);
        OpId bias = gb.parameter("b", {DType::F32, {16}}, ParamRole::Trainable);
        OpId s = gb.parameter("s", {DType::F32, {4, 16}}, ParamRole::Input);
        const OpId first = shifted.graph.size();
        OpId y = gb.matmul(x, w);
        OpId z = gb.add(y, gb.broadcast(bias, {4, 16}, {1}));
        OpId m = gb.mul(gb.unary(OpKind::Tanh, z), s);
        gb.compare(m, gb.constant(0.5, {DType::F32, {4, 16}}), ComparisonDirection::GT);
        gb.reduce(m, {1});
        for (OpId id = first; id < shifted.graph.size(); ++id) shifted.block.members.push_back(id);
        QCOMPARE(fp(shifted), fp(base));
    }

    void fingerprintSeesStructure_data() {
        QTest::addColumn<int>("variant");
        QTest::newRow("changed dim") << 0;
        QTest::newRow("changed dtype") << 1;
        QTest::newRow("operand slots swapped") << 2;
        QTest::newRow("same external twice vs two externals") << 3;
        QTest::newRow("constant literal") << 4;
        QTest::newRow("comparison direction") << 5;
    }
    void fingerprintSeesStructure() {
        QFETCH(int, variant);
        MlpKnobs k;
        switch (variant) {
            case 0: k.outDim = 32; break;
            case 1: k.dtype = DType::F16; break;
            case 2: k.swapAdd = true; break;
            case 3: k.sameOperandTwice = true; break;
            case 4: k.scale = 0.25; break;
            case 5: k.cmp = ComparisonDirection::GE; break;
            default: QFAIL("unknown variant");
        }
        QVERIFY(fp(buildMlp(MlpKnobs{})) != fp(buildMlp(k)));
    }

    void fingerprintSeesAttributesAndMembership() {
        // A transpose permutation and a reduce dimension are attributes only (same result type).
        Graph g("attrs");
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {4, 4}}, ParamRole::Input);
        OpId t01 = b.transpose(x, {0, 1});
        OpId t10 = b.transpose(x, {1, 0});
        OpId r0 = b.reduce(x, {0});
        OpId r1 = b.reduce(x, {1});
        auto f = [&](std::vector<OpId> m) { return *blockFingerprint(g, BlockView{std::move(m), 1}); };
        QVERIFY(f({t01}) != f({t10}));
        QVERIFY(f({r0}) != f({r1}));
        // An operand that is a member differs from the same operand coming from outside.
        OpId e = b.unary(OpKind::Exponential, x);
        OpId n1 = b.neg(e);
        QVERIFY(f({e, n1}) != f({n1}));
        // Phase is part of the structure.
        b.setPhase(Phase::Backward);
        OpId eb = b.unary(OpKind::Exponential, x);
        QVERIFY(f({e}) != f({eb}));
    }

    void fingerprintGolden() {
        // Pinned canonical text and FNV-1a value: a platform- or run-dependent hash would fail here.
        BuiltBlock bb = buildMlp(MlpKnobs{});
        auto textR = canonicalBlockText(bb.graph, bb.block);
        QVERIFY(textR.ok());
        const std::string actual = *textR + "fingerprint " + fingerprintHex(fp(bb)) + "\n";
        const std::string path = std::string(CFP_TEST_DATA_DIR) + "/segments/mlp_block.golden";
        std::ifstream in(path, std::ios::binary);
        QVERIFY2(in.good(), ("missing golden file " + path + "; actual:\n" + actual).c_str());
        std::stringstream ss;
        ss << in.rdbuf();
        QCOMPARE(QString::fromStdString(actual), QString::fromStdString(ss.str()));
        QCOMPARE(fnv1a64(""), uint64_t{0xcbf29ce484222325ULL});
        QCOMPARE(fnv1a64("a"), uint64_t{0xaf63dc4c8601ec8cULL});  // published FNV-1a test vector
    }

    void fingerprintErrors() {
        BuiltBlock bb = buildMlp(MlpKnobs{});
        BlockView unsorted = bb.block;
        std::swap(unsorted.members[0], unsorted.members[1]);
        auto r = blockFingerprint(bb.graph, unsorted);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QStringLiteral("segments.bad_block"));
        BlockView outside{{static_cast<OpId>(bb.graph.size() + 3)}, 1};
        QVERIFY(!blockFingerprint(bb.graph, outside).ok());
        // An op in two blocks.
        std::vector<BlockView> two{BlockView{{bb.block.members[0]}, 3}, BlockView{{bb.block.members[0]}, 3}};
        auto sigs = blockSignatures(bb.graph, two);
        QVERIFY(!sigs.ok());
        QVERIFY2(sigs.error().where == "blocks/1", text(sigs.error()));
    }

    void crossBlockEdges() {
        // Two blocks: {dot, add} and {tanh, multiply}; tanh reads add (member 1) in slot 0.
        BuiltBlock bb = buildMlp(MlpKnobs{});
        const auto& m = bb.block.members;  // dot, broadcast, add, tanh, multiply, constant, compare, reduce
        std::vector<BlockView> blocks{BlockView{{m[0], m[1], m[2]}, 3}, BlockView{{m[3], m[4]}, 2}};
        auto sigs = blockSignatures(bb.graph, blocks);
        QVERIFY2(sigs.ok(), sigs.ok() ? "" : text(sigs.error()));
        QCOMPARE(sigs->size(), size_t{2});
        QVERIFY((*sigs)[0].incoming.empty());
        QCOMPARE((*sigs)[1].incoming.size(), size_t{1});
        const CrossBlockEdge e = (*sigs)[1].incoming[0];
        QCOMPARE(e.offset, -1);
        QCOMPARE(e.producerMember, 2);
        QCOMPARE(e.consumerMember, 0);
        QCOMPARE(e.operandSlot, 0);
        QCOMPARE((*sigs)[1].strategyCount, int64_t{2});
    }

    // ---------------- cover ----------------

    void coverGptLike() {
        // E (A B C D)×96 H L: one layer type ×96, the head E and a one-off tail window H L (three
        // types; H and L as separate singletons would make four).
        QElapsedTimer timer;
        timer.start();
        const SegmentCover c = coverOf(repeatPattern("E", "ABCD", 96, "HL"));
        const qint64 ns = timer.nsecsElapsed();
        qInfo("cover of 387 blocks (E (ABCD)x96 H L): %.3f ms, search work %lld", double(ns) / 1e6,
              static_cast<long long>(c.searchWork));
        QCOMPARE(c.quality, CoverQuality::Optimal);
        QCOMPARE(QString::fromStdString(describeCover(c)),
                 QStringLiteral("T0[1 block] x1 @0, T1[4 blocks] x96 @1, T2[2 blocks] x1 @385"));
        QCOMPARE(c.types.size(), size_t{3});
        QCOMPARE(c.types[2].combinations, int64_t{9});
        QCOMPARE(c.types[1].combinations, int64_t{81});
        QCOMPARE(c.types[1].occurrences, 96);
        QCOMPARE(c.types[1].firstSegment, 1);
        const auto runs = repeatRuns(c);
        QCOMPARE(runs.size(), size_t{3});
        QCOMPARE(runs[1].type, 1);
        QCOMPARE(runs[1].count, 96);
        QCOMPARE(runs[1].firstBlock, 1);
        QCOMPARE(runs[1].firstSegment, 1);
    }

    void coverDenseMoeAlternating() {
        // Dense layer A B C D and MoE layer A B E F alternate: a window of 8 blocks is one type
        // (3 types in all), fewer than the 4 of separate dense and MoE types.
        const SegmentCover c = coverOf(repeatPattern("H", "ABCDABEF", 48, "L"));
        QCOMPARE(c.quality, CoverQuality::Optimal);
        QCOMPARE(QString::fromStdString(describeCover(c)),
                 QStringLiteral("T0[1 block] x1 @0, T1[8 blocks] x48 @1, T2[1 block] x1 @385"));
        // Without head and tail: one type.
        const SegmentCover bare = coverOf(repeatPattern("", "ABCDABEF", 10, ""));
        QCOMPARE(QString::fromStdString(describeCover(bare)), QStringLiteral("T0[8 blocks] x10 @0"));
    }

    void coverNoRepetition() {
        const SegmentCover c = coverOf(repeatPattern("ABCDEFG", "", 0, ""));
        QCOMPARE(c.types.size(), size_t{7});
        QCOMPARE(c.segments.size(), size_t{7});
        for (size_t i = 0; i < c.segments.size(); ++i) {
            QCOMPARE(c.segments[i].type, static_cast<int>(i));
            QCOMPARE(c.segments[i].blockCount, 1);
        }
    }

    void coverPrefersCheapTypes() {
        // (A B)×5: one type either way (AB ×5 is the only 1-type cover): pinned.
        QCOMPARE(QString::fromStdString(describeCover(coverOf(repeatPattern("", "AB", 5, "")))),
                 QStringLiteral("T0[2 blocks] x5 @0"));
        // (A B C D)×8: ABCD ×8 rather than (ABCD ABCD) ×4 — same type count, fewer combinations.
        QCOMPARE(QString::fromStdString(describeCover(coverOf(repeatPattern("", "ABCD", 8, "")))),
                 QStringLiteral("T0[4 blocks] x8 @0"));
        // Window limit: a 5-block layer with maxWindowBlocks 4 cannot be one window.
        CoverOptions small;
        small.maxWindowBlocks = 4;
        const SegmentCover c = coverOf(repeatPattern("", "ABCDE", 4, ""), 3, small);
        for (const Segment& s : c.segments) QVERIFY(s.blockCount <= 4);
    }

    void coverBudgetFallback() {
        // A tiny work limit: the search gives up; the fallback is still an admissible cover and
        // takes the longest tandem run (ABCD x96) as one type.
        CoverOptions tiny;
        tiny.searchWorkLimit = 100;
        const SegmentCover c = coverOf(repeatPattern("E", "ABCD", 96, "HL"), 3, tiny);
        QCOMPARE(c.quality, CoverQuality::Fallback);
        QCOMPARE(QString::fromStdString(describeCover(c)),
                 QStringLiteral("T0[1 block] x1 @0, T1[4 blocks] x96 @1, T2[1 block] x1 @385, T3[1 block] x1 @386"));
        // Random blocks over 8 structures exhaust the default limit quickly; the result is valid.
        std::mt19937 rng(1);
        std::vector<int> random;
        for (int i = 0; i < 400; ++i) random.push_back(static_cast<int>(rng() % 8));
        QElapsedTimer timer;
        timer.start();
        const SegmentCover r = coverOf(random);  // checkCover inside
        qInfo("random 400 blocks over 8 structures: %.1f ms, quality %s", double(timer.nsecsElapsed()) / 1e6,
              std::string(coverQualityName(r.quality)).c_str());
        QVERIFY(r.types.size() <= 8);
        // No repetition at all: decided without a search.
        std::vector<int> distinct;
        for (int i = 0; i < 400; ++i) distinct.push_back(i);
        const SegmentCover d = coverOf(distinct);
        QCOMPARE(d.quality, CoverQuality::Optimal);
        QCOMPARE(d.types.size(), size_t{400});
    }

    void coverEmptyAndErrors() {
        auto empty = computeSegmentCover(std::span<const uint64_t>(), std::span<const int64_t>());
        QVERIFY(empty.ok());
        QVERIFY(empty->segments.empty());
        CoverOptions bad;
        bad.maxWindowBlocks = 0;
        const std::vector<uint64_t> f{1, 2};
        auto r = computeSegmentCover(std::span<const uint64_t>(f), std::span<const int64_t>(), bad);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QStringLiteral("segments.bad_option"));
        const std::vector<int64_t> zero{1, 0};
        auto z = computeSegmentCover(std::span<const uint64_t>(f), std::span<const int64_t>(zero));
        QVERIFY(!z.ok());
        QCOMPARE(QString::fromStdString(z.error().where), QStringLiteral("blocks/1"));
    }

    void coverSeesCrossBlockEdges() {
        // Fingerprints A B A B A B A B, but in the first two pairs B reads A (edge inside the pair),
        // in the last two it does not: the pairs are two different window types.
        std::vector<BlockSignature> sigs;
        for (int i = 0; i < 8; ++i) {
            BlockSignature s{static_cast<uint64_t>(i % 2 == 0 ? 0xa : 0xb), 3, {}};
            if (i % 2 == 1 && i < 4) s.incoming.push_back(CrossBlockEdge{-1, 0, 0, 0});
            sigs.push_back(s);
        }
        auto c = computeSegmentCover(std::span<const BlockSignature>(sigs));
        QVERIFY(c.ok());
        QVERIFY(checkCover(sigs, *c).ok());
        // AB(edge) ×2 and AB(no edge) ×2 are two types; singletons A, B would also be two types but
        // cost fewer combinations (3+3 < 9+9): the search must not merge the two kinds of pair.
        for (const SegmentType& t : c->types)
            if (t.blockFingerprints.size() == 2) QCOMPARE(t.occurrences, 2);
        // A tampered cover claiming one AB type for all four pairs is rejected by the checker.
        SegmentCover fake;
        fake.types.push_back(SegmentType{0, {0xa, 0xb}, {3, 3}, 9, std::log10(9.0), 4, 0});
        for (int i = 0; i < 4; ++i) fake.segments.push_back(Segment{0, 2 * i, 2});
        auto check = checkCover(sigs, fake);
        QVERIFY(!check.ok());
        QCOMPARE(QString::fromStdString(check.error().where), QStringLiteral("segments/2"));
    }

    void coverMatchesBruteForce() {
        // Every sequence of up to 10 blocks over 3 structures (up to renaming: restricted-growth
        // strings), uniform strategies, window limits 16 and 3.
        int checked = 0;
        for (int n = 1; n <= 10; ++n) {
            std::vector<int> seq(static_cast<size_t>(n), 0);
            std::function<void(int, int)> rec = [&](int pos, int maxSym) {
                if (pos == n) {
                    for (int w : {16, 3}) {
                        const std::string diff = compareWithBruteForce(seq, {3, 3, 3}, w);
                        if (!diff.empty()) QFAIL(diff.c_str());
                    }
                    ++checked;
                    return;
                }
                for (int s = 0; s <= std::min(maxSym + 1, 2); ++s) {
                    seq[static_cast<size_t>(pos)] = s;
                    rec(pos + 1, std::max(maxSym, s));
                }
            };
            rec(0, -1);
        }
        qInfo("compared %d sequences with brute force", checked);
        QVERIFY(checked > 9000);
    }

    void coverMatchesBruteForceUnevenStrategies() {
        // All 3^n sequences up to n = 8 with strategies 2, 3 and 1 for A, B, C (renaming matters).
        for (int n = 1; n <= 8; ++n) {
            int total = 1;
            for (int i = 0; i < n; ++i) total *= 3;
            for (int code = 0; code < total; ++code) {
                std::vector<int> seq;
                for (int i = 0, c = code; i < n; ++i, c /= 3) seq.push_back(c % 3);
                const std::string diff = compareWithBruteForce(seq, {2, 3, 1}, 16);
                if (!diff.empty()) QFAIL(diff.c_str());
            }
        }
    }

    void layerScopeOfScope_data() {
        QTest::addColumn<QString>("scope");
        QTest::addColumn<QString>("layer");
        QTest::newRow("builder") << "layers.17.mlp.fc1" << "layers.17";
        QTest::newRow("layer itself") << "layers.3" << "layers.3";
        QTest::newRow("hf llama") << "model.layers.3.self_attn.q_proj" << "model.layers.3";
        QTest::newRow("hf gpt2") << "transformer.h.0.attn" << "transformer.h.0";
        QTest::newRow("first number wins") << "layers.2.experts.5.w1" << "layers.2";
        QTest::newRow("no number") << "lm_head" << "";
        QTest::newRow("digits inside a name") << "fc1.w2" << "";
        QTest::newRow("empty") << "" << "";
        QTest::newRow("empty component") << "a..b" << "";
    }
    void layerScopeOfScope() {
        QFETCH(QString, scope);
        QFETCH(QString, layer);
        const std::string s = scope.toStdString();
        QCOMPARE(QString::fromStdString(std::string(layerScope(s))), layer);
    }

    void coverPrefersLayerBoundaries() {
        // A GPT stack as ParallelBlocks see it: the first layer's first block differs (it also
        // computes the causal mask every layer reads), so the layer type can only repeat 5 times.
        // Q0 B C D (A B C D)x5 H: without layers the cheapest 3-type cover starts the repeat in the
        // middle of layer 0 (Q0 B | C D A B x5 | C D H: 9 + 81 + 27 combinations).
        const std::vector<int> seq = repeatPattern("EBCD", "ABCD", 5, "H");
        QCOMPARE(QString::fromStdString(describeCover(coverOf(seq))),
                 QStringLiteral("T0[2 blocks] x1 @0, T1[4 blocks] x5 @2, T2[3 blocks] x1 @22"));
        // With the blocks' layers, the cover with as many types that cuts no layer wins: layer 0,
        // layers 1-5 as one type x5, the head block.
        const SegmentCover aligned = coverOfLayers(seq, layerNumbers(0, 4, 6, 1));
        QCOMPARE(aligned.quality, CoverQuality::Optimal);
        QCOMPARE(QString::fromStdString(describeCover(aligned)),
                 QStringLiteral("T0[4 blocks] x1 @0, T1[4 blocks] x5 @4, T2[1 block] x1 @24"));
        // Only among covers with the fewest types: where no aligned cover has as few, the layers
        // change nothing. Layers of 2 blocks (A B | C D) cannot hold the 4-block repeat.
        QCOMPARE(QString::fromStdString(describeCover(coverOfLayers(seq, layerNumbers(0, 2, 12, 1)))),
                 QStringLiteral("T0[2 blocks] x1 @0, T1[4 blocks] x5 @2, T2[3 blocks] x1 @22"));
        // A layer longer than the window limit: nothing aligned exists, today's cover stays.
        CoverOptions small;
        small.maxWindowBlocks = 3;
        QCOMPARE(QString::fromStdString(describeCover(coverOfLayers(seq, layerNumbers(0, 4, 6, 1), small))),
                 QString::fromStdString(describeCover(coverOf(seq, 3, small))));
        // Same layer on every block (one scope): no cut is allowed anywhere but the ends, so no
        // aligned cover exists either; the unaligned optimum stays.
        QCOMPARE(QString::fromStdString(describeCover(coverOfLayers(seq, std::vector<int>(seq.size(), 0)))),
                 QStringLiteral("T0[2 blocks] x1 @0, T1[4 blocks] x5 @2, T2[3 blocks] x1 @22"));
        // Already aligned: E (A B C D)x96 H L with a layer per ABCD gives today's cover.
        QCOMPARE(QString::fromStdString(describeCover(coverOfLayers(repeatPattern("E", "ABCD", 96, "HL"),
                                                                    layerNumbers(1, 4, 96, 2)))),
                 QStringLiteral("T0[1 block] x1 @0, T1[4 blocks] x96 @1, T2[2 blocks] x1 @385"));
    }

    void coverMatchesBruteForceWithLayers() {
        // Random sequences of up to 10 blocks over 3 structures with random layers (runs of one
        // layer, unlayered blocks, and now and then a layer that comes back later).
        std::mt19937 rng(11);
        int checked = 0, aligned = 0;
        for (int iter = 0; iter < 4000; ++iter) {
            const int n = 1 + static_cast<int>(rng() % 10);
            std::vector<int> seq, layers;
            int layer = 0;
            for (int i = 0; i < n; ++i) {
                seq.push_back(static_cast<int>(rng() % 3));
                const uint32_t r = rng() % 10;
                if (r < 3) ++layer;
                layers.push_back(r == 9 ? -1 : r == 8 ? static_cast<int>(rng() % 3) : layer);
            }
            for (int w : {16, 3}) {
                const std::string diff = compareWithBruteForce(seq, {3, 2, 1}, w, layers);
                if (!diff.empty()) QFAIL(diff.c_str());
            }
            // Structured ones: a repeated layer whose first copy differs in one block.
            const int per = 2 + static_cast<int>(rng() % 3), times = 2 + static_cast<int>(rng() % 3);
            std::string unit;
            for (int i = 0; i < per; ++i) unit += static_cast<char>('A' + rng() % 2);
            std::vector<int> s2 = repeatPattern("", unit, times, "C");
            s2[rng() % static_cast<uint32_t>(per)] = 2;
            if (s2.size() <= 11) {
                const std::vector<int> l2 = layerNumbers(0, per, times, 1);
                const std::string diff = compareWithBruteForce(s2, {3, 3, 3}, 16, l2);
                if (!diff.empty()) QFAIL(diff.c_str());
                ++aligned;
            }
            ++checked;
        }
        qInfo("compared %d random and %d layer-stack sequences with brute force", checked, aligned);
        QVERIFY(aligned > 1000);
    }

    void coverTiming() {
        // Not a timed assertion: prints how long the 400-block cases take (benchmark numbers).
        struct Case {
            const char* name;
            std::vector<int> seq;
        };
        std::mt19937 rng(7);
        std::vector<int> random400;
        for (int i = 0; i < 400; ++i) random400.push_back(static_cast<int>(rng() % 3));
        const std::vector<Case> cases{
            {"GPT-3 175B-like: E (ABCD)x96 H L", repeatPattern("E", "ABCD", 96, "HL")},
            {"dense/MoE: H (ABCDABEF)x50 L", repeatPattern("H", "ABCDABEF", 50, "L")},
            {"6-block layers x80 + 4 head + 4 tail", repeatPattern("KLMN", "ABCDEF", 80, "OPQR")},
            {"random over 3 structures", random400},
        };
        for (const Case& c : cases) {
            QElapsedTimer timer;
            timer.start();
            const SegmentCover cover = coverOf(c.seq);
            qInfo("%-40s %4zu blocks: %8.3f ms, %zu types, quality %s, work %lld", c.name, c.seq.size(),
                  double(timer.nsecsElapsed()) / 1e6, cover.types.size(),
                  std::string(coverQualityName(cover.quality)).c_str(), static_cast<long long>(cover.searchWork));
        }
    }

    // ---------------- a real model ----------------

    void gptForwardDotsRepeatPerLayer() {
        auto cfg = presetConfig("gpt3-125m");
        QVERIFY(cfg.ok());
        BuildOptions opt;
        opt.batch = 1;
        opt.seq = 64;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY2(model.ok(), model.ok() ? "" : text(model.error()));
        const Graph& g = model->graph;
        // Temporary blocks (not ParallelBlocks): one per forward dot, the dot alone.
        std::vector<BlockView> blocks;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Dot && op.phase == Phase::Forward) blocks.push_back(BlockView{{op.id}, 3});
        QVERIFY(blocks.size() >= 12 * 4);
        auto sigs = blockSignatures(g, blocks);
        QVERIFY2(sigs.ok(), sigs.ok() ? "" : text(sigs.error()));
        // Each block's layer from its scope: 6 forward dots per layer, then lm_head (no layer).
        QCOMPARE(blocks.size(), size_t{12 * 6 + 1});
        for (size_t i = 0; i + 1 < blocks.size(); ++i)
            QCOMPARE(QString::fromStdString((*sigs)[i].layer), QStringLiteral("layers.%1").arg(i / 6));
        QCOMPARE(QString::fromStdString(sigs->back().layer), QString());
        auto cover = computeSegmentCover(std::span<const BlockSignature>(*sigs));
        QVERIFY(cover.ok());
        QVERIFY(checkCover(*sigs, *cover).ok());
        qInfo("gpt3-125m forward dots: %zu blocks -> %s", blocks.size(), describeCover(*cover).c_str());
        QCOMPARE(cover->quality, CoverQuality::Optimal);
        QVERIFY(cover->types.size() <= 3);
        int layerTypes = 0;
        for (const SegmentType& t : cover->types) {
            if (t.occurrences == 12) {
                ++layerTypes;
                QCOMPARE(t.blockFingerprints.size() * 12 + 1, blocks.size());  // layer dots + lm_head
            } else {
                QCOMPARE(t.occurrences, 1);
            }
        }
        QCOMPARE(layerTypes, 1);
        const auto runs = repeatRuns(*cover);
        QCOMPARE(runs.front().count, 12);
        QCOMPARE(runs.front().firstBlock, 0);
    }

    void gptScopeBlocksRepeatPerLayer() {
        // Temporary blocks with many members: every op grouped by its scope (forward, backward and
        // optimizer ops of `layers.7.mlp.fc1` form one block), ordered by first op. Backward
        // members consume gradients from later blocks, so windows carry cross-block edges both ways.
        auto cfg = presetConfig("gpt3-125m");
        QVERIFY(cfg.ok());
        BuildOptions opt;
        opt.batch = 1;
        opt.seq = 64;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY(model.ok());
        const Graph& g = model->graph;
        std::map<std::string, size_t> blockOfScope;
        std::vector<BlockView> blocks;
        for (const Op& op : g.ops()) {
            auto [it, inserted] = blockOfScope.try_emplace(op.scope, blocks.size());
            if (inserted) blocks.push_back(BlockView{{}, 3});
            blocks[it->second].members.push_back(op.id);
        }
        QElapsedTimer timer;
        timer.start();
        auto sigs = blockSignatures(g, blocks);
        QVERIFY2(sigs.ok(), sigs.ok() ? "" : text(sigs.error()));
        const double sigMs = double(timer.nsecsElapsed()) / 1e6;
        timer.restart();
        auto cover = computeSegmentCover(std::span<const BlockSignature>(*sigs));
        QVERIFY(cover.ok());
        qInfo("gpt3-125m ops by scope: %lld ops, %zu blocks; signatures %.1f ms, cover %.2f ms -> %s",
              static_cast<long long>(g.size()), blocks.size(), sigMs, double(timer.nsecsElapsed()) / 1e6,
              describeCover(*cover).c_str());
        QVERIFY(checkCover(*sigs, *cover).ok());
        QCOMPARE(cover->quality, CoverQuality::Optimal);
        // 9 scope blocks per layer; the last layer's residual block differs (no later layer adds
        // into its gradient), so: head, one 9-block layer type x11, tail.
        QCOMPARE(cover->types.size(), size_t{3});
        QCOMPARE(cover->types[1].blockFingerprints.size(), size_t{9});
        QCOMPARE(cover->types[1].occurrences, 11);
    }

    // ---------------- search-space report ----------------

    void searchSpaceLayered() {
        // 4 blocks × 3 strategies per layer, 96 layers, no head or tail.
        std::vector<BlockView> blocks(384, BlockView{{}, 3});
        const SegmentCover cover = coverOf(repeatPattern("", "ABCD", 96, ""));
        std::vector<int64_t> opCounts(1000, 3);
        opCounts[0] = 1;
        auto r = searchSpaceReport(opCounts, blocks, cover);
        QVERIFY2(r.ok(), r.ok() ? "" : text(r.error()));
        const double l3 = std::log10(3.0);
        QVERIFY(std::abs(r->opLevelLog10 - 999 * l3) < 1e-9);
        QVERIFY(std::abs(r->blockLevelLog10 - 384 * l3) < 1e-9);
        QVERIFY(std::abs(r->segmentLevelLog10 - std::log10(81.0)) < 1e-12);
        QVERIFY(std::abs(r->profiledCombinationsLog10 - std::log10(81.0)) < 1e-12);
        QVERIFY(std::abs(r->dpStatesLog10 - std::log10(96.0 * 81)) < 1e-9);
        QVERIFY(std::abs(r->dpTransitionsLog10 - std::log10(95.0 * 81 * 81)) < 1e-9);
        QCOMPARE(r->types.size(), size_t{1});
        QCOMPARE(r->types[0].combinations, int64_t{81});
        QCOMPARE(r->types[0].blocks, 4);
        QCOMPARE(r->types[0].occurrences, 96);
        QCOMPARE(r->strategiesPerBlock.size(), size_t{384});
        QCOMPARE(r->segments, int64_t{96});
    }

    void searchSpaceWithHeadAndTail() {
        // E (2 strategies), (ABCD)×96 with 3, H (4), L (5): types E, ABCD, HL (20 combinations).
        const auto seq = repeatPattern("E", "ABCD", 96, "HL");
        std::vector<int64_t> counts(seq.size(), 3);
        counts.front() = 2;
        counts[counts.size() - 2] = 4;
        counts.back() = 5;
        const auto fps = symbolsToFingerprints(seq);
        auto cover = computeSegmentCover(std::span<const uint64_t>(fps), std::span<const int64_t>(counts));
        QVERIFY(cover.ok());
        std::vector<BlockView> blocks;
        for (int64_t c : counts) blocks.push_back(BlockView{{}, c});
        auto r = searchSpaceReport(std::vector<int64_t>{2, 2}, blocks, *cover);
        QVERIFY(r.ok());
        QVERIFY(std::abs(r->segmentLevelLog10 - std::log10(2.0 * 81 * 4 * 5)) < 1e-12);
        QCOMPARE(r->types.size(), size_t{3});
        QCOMPARE(r->types[2].combinations, int64_t{20});
        QVERIFY(std::abs(r->profiledCombinationsLog10 - std::log10(2.0 + 81 + 20)) < 1e-12);
        QVERIFY(std::abs(r->dpStatesLog10 - std::log10(2.0 + 96 * 81 + 20)) < 1e-9);
        QVERIFY(std::abs(r->dpTransitionsLog10 - std::log10(2.0 * 81 + 95 * 81 * 81 + 81 * 20)) < 1e-9);
        QVERIFY(std::abs(r->opLevelLog10 - 2 * std::log10(2.0)) < 1e-12);
        // Saturation: 40 blocks of 10^3 strategies overflow int64 but not the log.
        std::vector<BlockView> big(40, BlockView{{}, 1000});
        std::vector<uint64_t> same(40, 7);
        std::vector<int64_t> bigCounts(40, 1000);
        CoverOptions opt;
        opt.maxWindowBlocks = 40;
        auto bigCover = computeSegmentCover(std::span<const uint64_t>(same), std::span<const int64_t>(bigCounts), opt);
        QVERIFY(bigCover.ok());
        auto br = searchSpaceReport(std::vector<int64_t>{}, big, *bigCover);
        QVERIFY(br.ok());
        QVERIFY(std::abs(br->blockLevelLog10 - 120.0) < 1e-9);
    }

    void searchSpaceErrors() {
        std::vector<BlockView> blocks(2, BlockView{{}, 3});
        const SegmentCover cover = coverOf({0, 1});
        auto bad = searchSpaceReport(std::vector<int64_t>{3, 0}, blocks, cover);
        QVERIFY(!bad.ok());
        QCOMPARE(QString::fromStdString(bad.error().where), QStringLiteral("ops/1"));
        std::vector<BlockView> fewer(1, BlockView{{}, 3});
        auto outside = searchSpaceReport(std::vector<int64_t>{}, fewer, cover);
        QVERIFY(!outside.ok());
        QCOMPARE(QString::fromStdString(outside.error().code), QStringLiteral("segments.bad_cover"));
    }
};

QTEST_APPLESS_MAIN(TestSegments)
#include "tst_segments.moc"
