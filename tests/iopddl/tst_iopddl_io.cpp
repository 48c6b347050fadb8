// The IOPDDL contest format: the streaming reader (plain and gzip), its located errors, the
// writers' round trips, and the evaluator against hand-computed scores and an independent
// step-by-step recomputation (the contest's own loop over every time step).
#include <QtTest>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "iopddl/evaluate.h"
#include "iopddl/json_io.h"
#include "must.h"

using namespace cfp;
using namespace cfp::iopddl;

namespace {

const std::string kExample = std::string(CFP_TEST_DATA_DIR) + "/iopddl/example.json";

Problem example() { return test::must(readProblemFile(kExample), "example.json"); }

Evaluation eval(const Problem& p, const Solution& s) { return test::must(evaluate(p, s), "evaluate"); }

// The contest's definition, written out independently: usage summed step by step.
struct Naive {
    Int128 score = 0;
    bool valid = true;
};
Naive naiveEvaluate(const Problem& p, const Solution& s) {
    Naive out;
    int64_t horizon = 0;
    for (const Interval& iv : p.intervals) horizon = std::max(horizon, iv.hi);
    std::vector<Int128> usage(static_cast<size_t>(horizon), 0);
    for (int64_t i = 0; i < p.nodeCount(); ++i) {
        const int64_t k = s[static_cast<size_t>(i)];
        out.score += p.nodeCosts[static_cast<size_t>(p.strategyBegin[i] + k)];
        for (int64_t t = p.intervals[static_cast<size_t>(i)].lo; t < p.intervals[static_cast<size_t>(i)].hi; ++t)
            usage[static_cast<size_t>(t)] += p.nodeUsages[static_cast<size_t>(p.strategyBegin[i] + k)];
    }
    for (int64_t e = 0; e < p.edgeCount(); ++e) {
        int64_t index = 0;
        for (int64_t node : p.edgeEnds(e)) index = index * p.strategyCount(node) + s[static_cast<size_t>(node)];
        out.score += p.edgeCosts[static_cast<size_t>(p.edgeCostBegin[e] + index)];
    }
    if (p.usageLimit)
        for (Int128 u : usage)
            if (u > *p.usageLimit) out.valid = false;
    return out;
}

// A random problem: n nodes, pairwise edges (and the occasional single-node or three-node one).
Problem randomProblem(uint64_t seed, int n, int edges) {
    uint64_t state = seed;
    auto next = [&](uint64_t bound) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (state >> 33) % bound;
    };
    Problem p;
    p.name = "random";
    for (int i = 0; i < n; ++i) {
        const int k = 1 + static_cast<int>(next(4));
        std::vector<int64_t> costs, usages;
        for (int s = 0; s < k; ++s) {
            costs.push_back(static_cast<int64_t>(next(100)));
            usages.push_back(static_cast<int64_t>(next(20)));
        }
        const int64_t lo = static_cast<int64_t>(next(30));
        p.addNode({lo, lo + static_cast<int64_t>(next(10))}, costs, usages);
    }
    for (int e = 0; e < edges; ++e) {
        const int arity = e % 7 == 0 ? 1 : e % 11 == 0 ? 3 : 2;
        std::vector<int64_t> ends;
        int64_t product = 1;
        for (int j = 0; j < arity; ++j) {
            ends.push_back(static_cast<int64_t>(next(static_cast<uint64_t>(n))));
            product *= p.strategyCount(ends.back());
        }
        std::vector<int64_t> costs;
        for (int64_t c = 0; c < product; ++c) costs.push_back(static_cast<int64_t>(next(50)));
        p.addEdge(ends, costs);
    }
    p.usageLimit = 60;
    return p;
}

std::string tempPath(const char* name) { return (std::filesystem::temp_directory_path() / name).string(); }

void spit(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

bool sameProblem(const Problem& a, const Problem& b) {
    if (a.intervals.size() != b.intervals.size()) return false;
    for (size_t i = 0; i < a.intervals.size(); ++i)
        if (a.intervals[i].lo != b.intervals[i].lo || a.intervals[i].hi != b.intervals[i].hi) return false;
    return a.name == b.name && a.strategyBegin == b.strategyBegin && a.nodeCosts == b.nodeCosts && a.nodeUsages == b.nodeUsages &&
           a.edgeNodeBegin == b.edgeNodeBegin && a.edgeNodes == b.edgeNodes && a.edgeCostBegin == b.edgeCostBegin &&
           a.edgeCosts == b.edgeCosts && a.usageLimit == b.usageLimit;
}

}  // namespace

class TestIopddlIo : public QObject {
    Q_OBJECT

private slots:
    void readsTheContestExample() {
        const Problem p = example();
        QCOMPARE(p.name, std::string("example"));
        QCOMPARE(p.nodeCount(), 5);
        QCOMPARE(p.edgeCount(), 5);
        QCOMPARE(p.strategyCount(2), 3);
        QCOMPARE(p.costs(2)[1], 45);
        QCOMPARE(p.usages(2)[1], 20);
        QCOMPARE(p.intervals[2].lo, 50);
        QCOMPARE(p.intervals[2].hi, 120);
        QCOMPARE(p.edgeEnds(2)[0], 1);
        QCOMPARE(p.edgeEnds(2)[1], 3);
        QCOMPARE(p.edgeCostTable(2)[2], 20);
        QVERIFY(p.usageLimit.has_value());
        QCOMPARE(*p.usageLimit, 50);
        QCOMPARE(p.timeSteps(), 150);
    }

    // Scores computed by hand from example.json (see evaluate.h).
    void exampleScoresByHand() {
        const Problem p = example();
        // [0,0,2,1,0]: nodes 15+55+35+75+95 = 275, edges 30+40+10+30+60 = 170.
        Evaluation a = eval(p, {0, 0, 2, 1, 0});
        QCOMPARE(toString(a.score), std::string("445"));
        QCOMPARE(toString(a.nodeCost), std::string("275"));
        QCOMPARE(toString(a.edgeCost), std::string("170"));
        QVERIFY(a.valid);
        QCOMPARE(toString(a.peakUsage), std::string("50"));  // t in [50,70): 10 + 25 + 15
        QCOMPARE(a.peakTime, 50);
        QCOMPARE(a.firstOverTime, -1);
        // [0,0,1,1,0]: nodes 285, edges 30+10+10+20+60 = 130; t in [50,70) uses 10+25+20 = 55 > 50.
        Evaluation b = eval(p, {0, 0, 1, 1, 0});
        QCOMPARE(toString(b.score), std::string("415"));
        QVERIFY(!b.valid);
        QCOMPARE(toString(b.peakUsage), std::string("55"));
        QCOMPARE(b.firstOverTime, 50);
        QCOMPARE(b.overTimeSteps, 20);
        // [0,1,0,0,0]: nodes 15+65+25+85+95 = 285, edges 40+50+20+60+70 = 240.
        Evaluation c = eval(p, {0, 1, 0, 0, 0});
        QCOMPARE(toString(c.score), std::string("525"));
        QVERIFY(c.valid);
    }

    // Brute force over all 12 solutions: the best valid score is 445, the best overall 415.
    void exampleBruteForce() {
        const Problem p = example();
        Int128 bestValid = -1, bestAny = -1;
        int validCount = 0;
        for (int64_t s1 = 0; s1 < 2; ++s1)
            for (int64_t s2 = 0; s2 < 3; ++s2)
                for (int64_t s3 = 0; s3 < 2; ++s3) {
                    const Solution s{0, s1, s2, s3, 0};
                    const Evaluation e = eval(p, s);
                    const Naive n = naiveEvaluate(p, s);
                    QVERIFY(e.score == n.score);
                    QCOMPARE(e.valid, n.valid);
                    if (bestAny < 0 || e.score < bestAny) bestAny = e.score;
                    if (e.valid) {
                        ++validCount;
                        if (bestValid < 0 || e.score < bestValid) bestValid = e.score;
                    }
                }
        QCOMPARE(toString(bestValid), std::string("445"));
        QCOMPARE(toString(bestAny), std::string("415"));
        QCOMPARE(validCount, 8);  // the 4 with node 2 on strategy 1 (usage 20 beside 10 + 25) are not
    }

    // Intervals are half-open: [0,2) and [2,4) never overlap; [0,2) and [1,4) do at t = 1 only.
    void halfOpenIntervals() {
        Problem p;
        const int64_t cost[] = {7}, five[] = {5};
        p.addNode({0, 2}, cost, five);
        p.addNode({2, 4}, cost, five);
        p.usageLimit = 5;
        Evaluation a = eval(p, {0, 0});
        QVERIFY(a.valid);
        QCOMPARE(toString(a.score), std::string("14"));
        p.intervals[1].lo = 1;
        Evaluation b = eval(p, {0, 0});
        QVERIFY(!b.valid);
        QCOMPARE(b.firstOverTime, 1);
        QCOMPARE(b.overTimeSteps, 1);
        QCOMPARE(toString(b.peakUsage), std::string("10"));
        // Without a limit, nothing is invalid; an empty interval is never live.
        p.usageLimit.reset();
        QVERIFY(eval(p, {0, 0}).valid);
        p.usageLimit = 5;
        p.intervals[1] = {3, 3};
        QVERIFY(eval(p, {0, 0}).valid);
    }

    // Sums beyond 64 bits are exact.
    void scoresUse128Bits() {
        Problem p;
        const int64_t big[] = {9'000'000'000'000'000'000, 1}, usage[] = {0, 0};
        p.addNode({0, 1}, big, usage);
        p.addNode({0, 1}, big, usage);
        const int64_t ends[] = {0, 1};
        const int64_t edge[] = {9'000'000'000'000'000'000, 0, 0, 0};
        p.addEdge(ends, edge);
        Evaluation e = eval(p, {0, 0});
        QCOMPARE(toString(e.score), std::string("27000000000000000000"));
        QCOMPARE(toString(eval(p, {1, 1}).score), std::string("2"));
        QCOMPARE(toString(Int128(0)), std::string("0"));
        QCOMPARE(toString(-Int128(12345)), std::string("-12345"));
    }

    void evaluatorMatchesStepByStep() {
        for (uint64_t seed = 1; seed <= 40; ++seed) {
            const Problem p = randomProblem(seed, 12, 20);
            QVERIFY(validateProblem(p).ok());
            uint64_t state = seed * 7919;
            for (int trial = 0; trial < 25; ++trial) {
                Solution s;
                for (int64_t i = 0; i < p.nodeCount(); ++i) {
                    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                    s.push_back(static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(p.strategyCount(i))));
                }
                const Evaluation e = eval(p, s);
                const Naive n = naiveEvaluate(p, s);
                QVERIFY(e.score == n.score);
                QCOMPARE(e.valid, n.valid);
            }
        }
    }

    void badSolutionsHaveNoScore() {
        const Problem p = example();
        auto shortOne = evaluate(p, {0, 0, 0});
        QVERIFY(!shortOne);
        QCOMPARE(shortOne.error().code, std::string("iopddl.solution_size"));
        auto range = evaluate(p, {0, 0, 3, 0, 0});
        QVERIFY(!range);
        QCOMPARE(range.error().code, std::string("iopddl.strategy_range"));
        QVERIFY(range.error().message.find("node 2") != std::string::npos);
        QVERIFY(!evaluate(p, {0, -1, 0, 0, 0}));
    }

    void roundTripsPlainAndGzip() {
        for (uint64_t seed : {3u, 4u}) {
            Problem p = randomProblem(seed, 30, 45);
            p.name = "round \"trip\"\n";
            auto back = parseProblem(problemToJson(p));
            QVERIFY2(back.ok(), back ? "" : back.error().toString().c_str());
            QVERIFY(sameProblem(p, *back));
            const std::string gz = tempPath("cfp_iopddl_roundtrip.json.gz");
            QVERIFY(writeProblemFile(gz, p).ok());
            std::ifstream in(gz, std::ios::binary);
            const int b0 = in.get(), b1 = in.get();
            QCOMPARE(b0, 0x1f);  // gzip magic
            QCOMPARE(b1, 0x8b);
            auto fromGz = readProblemFile(gz);
            QVERIFY2(fromGz.ok(), fromGz ? "" : fromGz.error().toString().c_str());
            QVERIFY(sameProblem(p, *fromGz));
            std::filesystem::remove(gz);
        }
        // No usage limit: the member is absent and stays absent.
        Problem p = example();
        p.usageLimit.reset();
        auto back = parseProblem(problemToJson(p));
        QVERIFY(back.ok());
        QVERIFY(!back->usageLimit.has_value());
    }

    void membersInAnyOrderAndUnknownOnesSkipped() {
        const std::string text = R"({"extra": [1, {"a": null}], "problem": {"usage_limit": 9, "edges": {"costs": [[1, 2]], "nodes": [[0, 1]]},
            "nodes": {"usages": [[1], [2, 3]], "costs": [[4], [5, 6]], "note": "x", "intervals": [[0, 1], [0, 2]]}, "name": "\u00e9t\u00e9"}})";
        auto p = parseProblem(text);
        QVERIFY2(p.ok(), p ? "" : p.error().toString().c_str());
        QCOMPARE(p->name, std::string("\xc3\xa9t\xc3\xa9"));
        QCOMPARE(p->nodeCount(), 2);
        QCOMPARE(*p->usageLimit, 9);
        QCOMPARE(toString(eval(*p, {0, 1}).score), std::string("12"));  // 4 + 6 + edge (0, 1) at index 1: 2
        auto nullLimit = parseProblem(R"({"problem": {"nodes": {"intervals": [], "costs": [], "usages": []}, "edges": {"nodes": [], "costs": []}, "usage_limit": null}})");
        QVERIFY(nullLimit.ok());
        QVERIFY(!nullLimit->usageLimit);
    }

    void malformedInputs_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message");
        const char* nodes = R"("nodes": {"intervals": [[0, 1]], "costs": [[1, 2]], "usages": [[3, 4]]})";
        auto wrap = [&](const std::string& problemBody) { return QString::fromStdString("{\"problem\": {" + problemBody + "}}"); };
        QTest::newRow("truncated") << QString("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1],\n [2") << "iopddl.syntax" << "2:4"
                                   << "expected ',' in an interval";
        QTest::newRow("fraction") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [], "costs": []}, "usage_limit": 1.5)")
                                  << "iopddl.syntax" << "1:" << "fraction";
        QTest::newRow("too big") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [], "costs": []}, "usage_limit": 9223372036854775808)")
                                 << "iopddl.syntax" << "1:" << "64 bits";
        QTest::newRow("duplicate") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [], "nodes": [], "costs": []})")
                                   << "iopddl.syntax" << "1:" << "appears twice";
        QTest::newRow("trailing") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [], "costs": []})") + " x"
                                  << "iopddl.syntax" << "1:" << "after the JSON value";
        QTest::newRow("no problem") << QString("{}") << "iopddl.format" << "" << "missing member 'problem'";
        QTest::newRow("no edges") << wrap(nodes) << "iopddl.format" << "/problem" << "missing member 'edges'";
        QTest::newRow("usage count") << wrap(R"("nodes": {"intervals": [[0, 1]], "costs": [[1, 2]], "usages": [[3]]}, "edges": {"nodes": [], "costs": []})")
                                     << "iopddl.format" << "/problem/nodes/usages/0" << "2 costs but 1 usages";
        QTest::newRow("node count") << wrap(R"("nodes": {"intervals": [[0, 1], [1, 2]], "costs": [[1, 2]], "usages": [[3, 4]]}, "edges": {"nodes": [], "costs": []})")
                                    << "iopddl.format" << "/problem/nodes/costs" << "2 intervals but 1 cost lists";
        QTest::newRow("no strategies") << wrap(R"("nodes": {"intervals": [[0, 1]], "costs": [[]], "usages": [[]]}, "edges": {"nodes": [], "costs": []})")
                                       << "iopddl.format" << "/problem/nodes/costs/0" << "no strategies";
        QTest::newRow("negative time") << wrap(R"("nodes": {"intervals": [[-1, 1]], "costs": [[1]], "usages": [[1]]}, "edges": {"nodes": [], "costs": []})")
                                       << "iopddl.format" << "/problem/nodes/intervals/0" << "negative time";
        QTest::newRow("edge node") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [[0, 1]], "costs": [[1, 2]]})")
                                   << "iopddl.format" << "/problem/edges/nodes/0/1" << "names node 1";
        QTest::newRow("edge costs") << wrap(std::string(nodes) + R"(, "edges": {"nodes": [[0, 0]], "costs": [[1, 2]]})")
                                    << "iopddl.format" << "/problem/edges/costs/0" << "has 2 costs, expected 4";
        QTest::newRow("interval shape") << wrap(R"("nodes": {"intervals": [[0, 1, 2]], "costs": [[1]], "usages": [[1]]}, "edges": {"nodes": [], "costs": []})")
                                        << "iopddl.syntax" << "1:" << "']' closing an interval";
    }

    void malformedInputs() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        QFETCH(QString, where);
        QFETCH(QString, message);
        auto p = parseProblem(text.toStdString());
        QVERIFY(!p);
        const Error& e = p.error();
        QCOMPARE(QString::fromStdString(e.code), code);
        QVERIFY2(QString::fromStdString(e.where).startsWith(where), e.toString().c_str());
        QVERIFY2(QString::fromStdString(e.message).contains(message), e.toString().c_str());
    }

    void fileErrorsNameThePath() {
        auto missing = readProblemFile("/nonexistent/cfp/problem.json");
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, std::string("io.open"));
        QVERIFY(missing.error().where.find("/nonexistent/cfp/problem.json") != std::string::npos);
        const std::string path = tempPath("cfp_iopddl_bad.json");
        spit(path, "{\"problem\":\n  {\"name\": 5}}");
        auto bad = readProblemFile(path);
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, std::string("iopddl.syntax"));
        QCOMPARE(bad.error().where, path + ":2:12");
        std::filesystem::remove(path);
        // A corrupt gzip stream.
        const std::string gz = tempPath("cfp_iopddl_bad.json.gz");
        spit(gz, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", 18));
        auto corrupt = readProblemFile(gz);
        QVERIFY(!corrupt);
        QVERIFY2(corrupt.error().code == "iopddl.gzip" || corrupt.error().code == "iopddl.syntax", corrupt.error().toString().c_str());
        std::filesystem::remove(gz);
    }

    void solutions() {
        auto s = parseSolution("[0, 1, 2]\n");
        QVERIFY(s.ok());
        QCOMPARE(s->size(), size_t(3));
        QCOMPARE((*s)[2], 2);
        auto contest = parseSolution("Solution: [3, 4]\n");
        QVERIFY(contest.ok());
        QCOMPARE((*contest)[1], 4);
        QCOMPARE(solutionToJson({0, 12, 3}), std::string("[0, 12, 3]\n"));
        QVERIFY(parseSolution("[]").ok());
        for (const char* bad : {"", "[1, 2", "[1.5]", "{\"a\": 1}", "[1] [2]", "[\"1\"]"}) {
            auto r = parseSolution(bad);
            QVERIFY2(!r, bad);
            QCOMPARE(r.error().code, std::string("iopddl.solution"));
        }
        const std::string path = tempPath("cfp_iopddl_solution.json");
        QVERIFY(writeSolutionFile(path, {1, 0, 2}).ok());
        auto back = readSolutionFile(path);
        QVERIFY(back.ok());
        QCOMPARE(*back, Solution({1, 0, 2}));
        std::filesystem::remove(path);
    }
};

QTEST_APPLESS_MAIN(TestIopddlIo)
#include "tst_iopddl_io.moc"
