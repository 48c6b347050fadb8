// ProfilerSession with the simulated backend standing in for the GPU: scheduling, early
// abandonment, pruning, out-of-memory, reuse through the DB, cancellation within a second, the
// watchdog, one GPU for a larger mesh, and the measurements reaching the planner.

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "plan_helpers.h"
#include "tiny_gpt.h"
#include "plan/planner.h"
#include "profiler/session.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;

namespace {

std::shared_ptr<const Graph> tinyGpt(int64_t layers) { return std::make_shared<const Graph>(cfp::test::tinyGpt(layers)); }

Cluster cluster() { return must(makeCluster(must(loadHardware("h100-sxm"), "h100"), 1), "cluster"); }

// Session on a tiny GPT, mesh {x=8}, only segment type `type`, no calibration.
SessionConfig config(int type, const std::string& db = {}) {
    SessionConfig c;
    c.graph = tinyGpt(2);
    c.cluster = cluster();
    c.hardwareSpec = "h100-sxm";
    c.mesh = "8";
    c.segmentTypes = {type};
    c.calibration = CalibrationMode::Never;
    c.dbPath = db;
    return c;
}

// The segment type with the fewest combinations, but at least 8.
int smallType() {
    const Mesh mesh = must(assignLinkClasses(must(parseMesh("8"), "mesh"), 8), "links");
    auto catalog = must(SegmentCatalog::build(*tinyGpt(2), must(loadHardware("h100-sxm"), "hw"), mesh), "catalog");
    int best = -1;
    for (const auto& t : catalog.types())
        if (t.combinations >= 8 && (best < 0 || t.combinations < catalog.types()[static_cast<size_t>(best)].combinations)) best = t.type;
    return best;
}

int64_t combinationsOf(int type) {
    const Mesh mesh = must(assignLinkClasses(must(parseMesh("8"), "mesh"), 8), "links");
    auto catalog = must(SegmentCatalog::build(*tinyGpt(2), must(loadHardware("h100-sxm"), "hw"), mesh), "catalog");
    return catalog.types()[static_cast<size_t>(type)].combinations;
}

// A deterministic time per combination key, in (1, 3] ms.
double fakeSeconds(const std::string& key) {
    uint64_t h = 1469598103934665603ull;
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return 1e-3 * (1.0 + static_cast<double>(h % 2000) / 1000.0);
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT

    int m_type = -1;

private slots:
    void initTestCase() {
        m_type = smallType();
        QVERIFY(m_type >= 0);
    }

    void schedulesEveryCombinationOnce() {
        SimulatedBackend::Options o;
        o.seconds = [](const SegmentWorkPlan& w) { return fakeSeconds(w.combinationKey); };
        o.realSecondsPerIteration = 0.0015;  // long enough for throttled progress with an estimate
        auto backend = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim = backend.get();
        std::vector<SessionProgress> progress;
        std::vector<std::string> resultKeys;
        ProfilerSession::Callbacks cb;
        cb.progress = [&](const SessionProgress& p) { progress.push_back(p); };
        cb.result = [&](const CombinationResult& r) { resultKeys.push_back(r.key); };
        SessionConfig cfg = config(m_type);
        cfg.protocol.abandonFactor = 0;  // every combination runs the full protocol
        ProfilerSession s(cfg, std::move(backend), cb);
        auto report = must(s.run(), "run");
        const int64_t n = combinationsOf(m_type);
        qInfo("segment type T%d: %lld combinations", m_type, static_cast<long long>(n));
        QCOMPARE(static_cast<int64_t>(report.results.size()), n);
        QCOMPARE(static_cast<int64_t>(sim->prepares()), n);
        // Per combination: one warm-up launch, 3 timed rounds, one instrumented launch.
        QCOMPARE(static_cast<int64_t>(sim->launches()), 5 * n);
        // Mixed-radix order, each once.
        std::set<std::string> unique(sim->preparedKeys().begin(), sim->preparedKeys().end());
        QCOMPARE(static_cast<int64_t>(unique.size()), n);
        QCOMPARE(sim->preparedKeys().front(), report.results.front().key);
        QCOMPARE(resultKeys.size(), report.results.size());
        for (const CombinationResult& r : report.results) {
            QCOMPARE(r.status, CombinationStatus::Measured);
            QCOMPARE(r.samples.size(), size_t{3});
            QCOMPARE(r.seconds, fakeSeconds(r.key));
            QVERIFY(r.predictedSeconds > 0);
        }
        QCOMPARE(report.types.size(), size_t{1});
        QCOMPARE(report.types[0].measured, static_cast<int>(n));
        // Progress: done never decreases, the total is fixed, the estimate appears, and it ends with "done".
        int64_t last = -1;
        bool estimate = false;
        for (const SessionProgress& p : progress) {
            QVERIFY(p.done >= last);
            last = p.done;
            if (p.stage == "profiling") {
                QCOMPARE(p.total, n);
                QCOMPARE(p.segmentType, m_type);
                QVERIFY(!p.combination.empty());
            }
            if (p.stage == "profiling") estimate = estimate || p.remainingSeconds >= 0;
        }
        QVERIFY(estimate);
        QCOMPARE(progress.back().stage, std::string("done"));
        QCOMPARE(progress.back().done, n);
        QVERIFY(!report.cancelled);
    }

    // A combination whose round is slower than 1.5 x the best so far stops after that round.
    void earlyAbandonment() {
        // The n-th combination takes base[n % 6] ms: 1.6 after a best of 1.0 is abandoned, 1.4 is not.
        const std::vector<double> base{1.0, 1.4, 1.6, 0.8, 1.25, 1.1};
        auto order = std::make_shared<std::map<std::string, size_t>>();
        auto timeOf = [base, order](const std::string& key) {
            const size_t n = order->emplace(key, order->size()).first->second;
            return 1e-3 * base[n % base.size()];
        };
        SimulatedBackend::Options o;
        o.seconds = [timeOf](const SegmentWorkPlan& w) { return timeOf(w.combinationKey); };
        auto backend = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim = backend.get();
        SessionConfig cfg = config(m_type);
        // Nothing kept for memory, so no abandoned combination is measured again in full
        // (leastMemoryCombinationsAreMeasuredInFull).
        cfg.protocol.keepBestByMemory = 0;
        ProfilerSession s(cfg, std::move(backend));
        auto report = must(s.run(), "run");
        QVERIFY(report.results.size() >= 3);
        QCOMPARE(report.results[2].status, CombinationStatus::Abandoned);
        QCOMPARE(report.results[1].status, CombinationStatus::Measured);
        double best = 0;
        int abandoned = 0, launches = 0;
        for (const CombinationResult& r : report.results) {
            const double t = timeOf(r.key);
            if (best > 0 && t > 1.5 * best) {
                QCOMPARE(r.status, CombinationStatus::Abandoned);
                QCOMPARE(r.samples.size(), size_t{1});
                QVERIFY(r.note.find("abandoned") != std::string::npos);
                ++abandoned;
                launches += 2;
            } else {
                QCOMPARE(r.status, CombinationStatus::Measured);
                launches += 5;
                if (best == 0 || t < best) best = t;
            }
        }
        QVERIFY(abandoned > 0);
        QCOMPARE(sim->launches(), launches);
        QCOMPARE(report.types[0].abandoned, abandoned);
        QCOMPARE(report.types[0].bestSeconds, best);
    }

    void pruningKeepsTheBestByTimeAndMemory() {
        std::vector<CombinationResult> rs;
        for (int i = 0; i < 25; ++i) {
            CombinationResult r;
            r.key = std::to_string(i);
            r.seconds = 1.0 + (i * 7 % 25);         // a permutation of 1..25
            r.memoryBytes = 1000 + (i * 11 % 25);   // another
            r.status = i == 3 ? CombinationStatus::Abandoned : CombinationStatus::Measured;
            rs.push_back(r);
        }
        const KeptSets k = keepBest(rs, 10, 4);
        QCOMPARE(k.byTime.size(), size_t{10});
        QCOMPARE(k.byMemory.size(), size_t{4});
        // Independently: sort the measured ones.
        std::vector<std::pair<double, std::string>> byTime;
        std::vector<std::pair<int64_t, std::string>> byMem;
        for (const auto& r : rs)
            if (r.status == CombinationStatus::Measured) {
                byTime.emplace_back(r.seconds, r.key);
                byMem.emplace_back(r.memoryBytes, r.key);
            }
        std::sort(byTime.begin(), byTime.end());
        std::sort(byMem.begin(), byMem.end());
        for (size_t i = 0; i < 10; ++i) QCOMPARE(k.byTime[i], byTime[i].second);
        for (size_t i = 0; i < 4; ++i) QCOMPARE(k.byMemory[i], byMem[i].second);
        QVERIFY(std::find(k.byTime.begin(), k.byTime.end(), "3") == k.byTime.end());

        // In a session: kept flags on results and in the DB match the sets.
        QTemporaryDir dir;
        SessionConfig cfg = config(m_type, dir.filePath("k.db").toStdString());
        cfg.protocol.keepBestByTime = 3;
        cfg.protocol.keepBestByMemory = 2;
        SimulatedBackend::Options o;
        o.seconds = [](const SegmentWorkPlan& w) { return fakeSeconds(w.combinationKey); };
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(o));
        auto report = must(s.run(), "run");
        const auto& t = report.types[0];
        QCOMPARE(t.keptByTime.size(), size_t{3});
        QCOMPARE(t.keptByMemory.size(), size_t{2});
        std::set<std::string> kept(t.keptByTime.begin(), t.keptByTime.end());
        kept.insert(t.keptByMemory.begin(), t.keptByMemory.end());
        for (const auto& r : report.results) QCOMPARE(r.kept, kept.count(r.key) > 0);
        for (const auto& r : s.partialResults()) QCOMPARE(r.kept, kept.count(r.key) > 0);
        auto db = must(ProfileDb::open(cfg.dbPath, ProfileDb::OpenMode::ReadOnly), "db");
        const auto hw = must(db.hardware(), "hw");
        for (const SegmentRecord& r : must(db.segments(hw[0].id), "segments")) QCOMPARE(r.kept, kept.count(r.combination) > 0);
    }

    void outOfMemoryMarksInfeasibleAndGoesOn() {
        SimulatedBackend::Options o;
        o.outOfMemory = [](const SegmentWorkPlan& w) { return w.combination.front() == 0; };
        ProfilerSession s(config(m_type), std::make_unique<SimulatedBackend>(o));
        auto report = must(s.run(), "run");
        int infeasible = 0;
        for (const auto& r : report.results) {
            if (r.combination.front() == 0) {
                QCOMPARE(r.status, CombinationStatus::Infeasible);
                QVERIFY(r.note.find("memory") != std::string::npos);
                ++infeasible;
            } else {
                QVERIFY(r.status != CombinationStatus::Infeasible);
            }
        }
        QVERIFY(infeasible > 0);
        QCOMPARE(static_cast<int64_t>(report.results.size()), combinationsOf(m_type));
        QCOMPARE(report.types[0].infeasible, infeasible);
    }

    // A second session on the same DB measures nothing again.
    void reuseThroughTheDb() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("r.db").toStdString();
        SimulatedBackend::Options o;
        o.seconds = [](const SegmentWorkPlan& w) { return fakeSeconds(w.combinationKey); };
        ProfilerSession first(config(m_type, path), std::make_unique<SimulatedBackend>(o));
        auto a = must(first.run(), "first");
        QVERIFY(a.opMeasurements > 0);
        auto backend = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim = backend.get();
        ProfilerSession second(config(m_type, path), std::move(backend));
        auto b = must(second.run(), "second");
        QCOMPARE(sim->prepares(), 0);
        QCOMPARE(sim->launches(), 0);
        QCOMPARE(b.results.size(), a.results.size());
        for (size_t i = 0; i < a.results.size(); ++i) {
            QVERIFY(b.results[i].reused);
            QCOMPARE(b.results[i].key, a.results[i].key);
            QCOMPARE(b.results[i].status, a.results[i].status);
            QCOMPARE(b.results[i].seconds, a.results[i].seconds);
        }
        QCOMPARE(b.types[0].reused, static_cast<int>(a.results.size()));
        // Without reuse everything is measured again.
        SessionConfig cfg = config(m_type, path);
        cfg.reuse = false;
        auto again = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim2 = again.get();
        ProfilerSession third(cfg, std::move(again));
        auto c = must(third.run(), "third");
        // (and the abandoned least-memory combinations once more, in full)
        QCOMPARE(static_cast<int64_t>(sim2->prepares()), combinationsOf(m_type) + c.types[0].remeasured);
    }

    // cancel() from another thread: run() returns within a second with what was measured, and the
    // DB keeps it. Case 1: launches finish quickly; case 2: a launch would run for minutes and is
    // aborted after the grace time.
    void cancellationWithinASecond_data() {
        QTest::addColumn<double>("secondsPerIteration");
        QTest::newRow("short launches") << 0.02;
        QTest::newRow("a launch that would take minutes") << 60.0;
    }
    void cancellationWithinASecond() {
        QFETCH(double, secondsPerIteration);
        QTemporaryDir dir;
        SessionConfig cfg = config(m_type, dir.filePath("c.db").toStdString());
        SimulatedBackend::Options o;
        o.realSecondsPerIteration = secondsPerIteration;
        auto backend = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim = backend.get();
        ProfilerSession s(cfg, std::move(backend));
        Result<ProfileReport> report = makeError("test", "not run");
        std::atomic<bool> finished{false};
        std::thread worker([&] {
            report = s.run();
            finished = true;
        });
        // Cancel once the session is under way — a result stored (short launches) or the long
        // launch started — however fast the machine (sanitizer builds are slow).
        const auto started = std::chrono::steady_clock::now();
        auto underWay = [&] { return secondsPerIteration > 1 ? sim->launches() > 0 : !s.partialResults().empty(); };
        while (!underWay() && !finished.load() && std::chrono::steady_clock::now() - started < std::chrono::seconds(120))
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QVERIFY(underWay());
        QVERIFY(!finished.load());
        const auto t0 = std::chrono::steady_clock::now();
        s.cancel();
        QVERIFY(s.cancelRequested());
        while (!finished.load() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        worker.join();
        QVERIFY2(waited < 1.0, qPrintable(QString("run() returned %1 s after cancel()").arg(waited)));
        QVERIFY(static_cast<bool>(report));
        QVERIFY(report->cancelled);
        QVERIFY(static_cast<int64_t>(report->results.size()) < combinationsOf(m_type));
        QCOMPARE(s.partialResults().size(), report->results.size());
        if (secondsPerIteration > 1) {
            QVERIFY(sim->aborted());
            QCOMPARE(report->results.size(), size_t{0});
        } else {
            QVERIFY(!report->results.empty());
            auto db = must(ProfileDb::open(cfg.dbPath, ProfileDb::OpenMode::ReadOnly), "db");
            const auto hw = must(db.hardware(), "hw");
            QCOMPARE(must(db.segments(hw[0].id), "segments").size(), report->results.size());
        }
    }

    // A launch that never finishes (a hung collective) becomes an error after the watchdog limit;
    // the backend is aborted and the results before it stay.
    void watchdogTurnsAHangIntoAnError() {
        SessionConfig cfg = config(m_type);
        cfg.protocol.watchdogSeconds = 0.3;
        cfg.protocol.watchdogFactor = 1;
        cfg.protocol.abandonFactor = 0;  // 5 launches per combination
        SimulatedBackend::Options o;
        o.hang = [](int launch) { return launch == 12; };  // the third combination's second timed round
        auto backend = std::make_unique<SimulatedBackend>(o);
        SimulatedBackend* sim = backend.get();
        ProfilerSession s(cfg, std::move(backend));
        const auto t0 = std::chrono::steady_clock::now();
        auto report = s.run();
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(!report);
        QCOMPARE(report.error().code, std::string("profiler.hang"));
        QVERIFY(report.error().message.find("did not finish") != std::string::npos);
        QVERIFY(sim->aborted());
        QVERIFY(took < 5.0);
        QCOMPARE(s.partialResults().size(), size_t{2});
        // An aborted backend cannot be reused.
        QCOMPARE(s.run().error().code, std::string("profiler.aborted"));
    }

    // One GPU for a mesh of 8: compute measured, collectives from the model, labelled so.
    void oneGpuModelsTheCommunication() {
        QTemporaryDir dir;
        SessionConfig cfg = config(m_type, dir.filePath("m.db").toStdString());
        SimulatedBackend::Options o;
        o.comm = CommMode::Modelled;
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(o));
        auto report = must(s.run(), "run");
        QCOMPARE(report.setup.comm, CommMode::Modelled);
        QCOMPARE(report.setup.fingerprint.gpuCount, 1);
        bool someComm = false;
        for (const auto& r : report.results) {
            QCOMPARE(r.comm, CommMode::Modelled);
            if (r.status != CombinationStatus::Measured) continue;
            // The simulated compute is the model's, so compute + modelled comm = the prediction.
            QVERIFY(std::abs(r.seconds - r.predictedSeconds) <= 1e-12 + 1e-9 * r.seconds);
            someComm = someComm || r.modelledCommSeconds > 0;
        }
        QVERIFY(someComm);
        auto db = must(ProfileDb::open(cfg.dbPath, ProfileDb::OpenMode::ReadOnly), "db");
        const auto hw = must(db.hardware(), "hw");
        for (const SegmentRecord& r : must(db.segments(hw[0].id), "segments")) QCOMPARE(r.comm, CommMode::Modelled);
    }

    // The per-op measurements of a session reach the planner through the DB.
    void measurementsReachThePlanner() {
        QTemporaryDir dir;
        SessionConfig cfg = config(m_type, dir.filePath("p.db").toStdString());
        cfg.segmentTypes.clear();  // every type
        cfg.protocol.abandonFactor = 0;
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
        auto report = must(s.run(), "run");
        QVERIFY(report.opMeasurements > 0);
        auto pm = must(planningMeasurements(cfg.dbPath, "h100-sxm"), "planning measurements");
        QVERIFY(!pm.measured.empty());
        PlannerOptions po;
        po.measurements.kernels = pm.measured;
        po.measurements.calibration = pm.calibration;
        po.baselines = Baselines::Skip;
        auto plan = must(planGraph(*cfg.graph, cluster(), cfp::test::meshOf("8"), po), "plan");
        QCOMPARE(plan.plan.step.provenance, Provenance::Mixed);
        // Simulated times are the model's own, so the plan's time hardly moves.
        auto base = must(planGraph(*cfg.graph, cluster(), cfp::test::meshOf("8"), [] {
                             PlannerOptions p;
                             p.baselines = Baselines::Skip;
                             return p;
                         }()),
                         "base plan");
        QVERIFY(std::abs(plan.plan.evaluatorStepSeconds - base.plan.evaluatorStepSeconds) < 0.02 * base.plan.evaluatorStepSeconds);
        QVERIFY(std::abs(plan.plan.predictedStepSeconds - plan.plan.evaluatorStepSeconds) < 1e-9 * plan.plan.evaluatorStepSeconds);
    }

    // The time left counts everything a combination costs, not only its launches: with 20 ms of
    // work per combination outside the measurement (here in the result callback; in a real run
    // the work plan and the DB writes), the estimate is about 20 ms × the combinations left.
    void estimateCountsTheWholeCombination() {
        QCOMPARE(remainingSecondsEstimate(2.0, 4, 10), 5.0);
        QVERIFY(remainingSecondsEstimate(0.0, 0, 10) < 0);
        static constexpr double kOverheadSeconds = 0.02;
        SessionConfig cfg = config(m_type);
        std::vector<SessionProgress> seen;
        ProfilerSession::Callbacks cb;
        cb.progress = [&](const SessionProgress& p) { seen.push_back(p); };
        cb.result = [](const CombinationResult&) { std::this_thread::sleep_for(std::chrono::duration<double>(kOverheadSeconds)); };
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(), cb);
        must(s.run(), "run");
        int checked = 0;
        for (const SessionProgress& p : seen) {
            if (p.stage != "profiling" || p.done < 2 || p.total - p.done < 2) continue;
            const double floor = 0.5 * kOverheadSeconds * static_cast<double>(p.total - p.done);
            QVERIFY2(p.remainingSeconds >= floor, qPrintable(QString("%1 s left estimated with %2 of %3 to do, at least %4 s")
                                                                 .arg(p.remainingSeconds)
                                                                 .arg(p.total - p.done)
                                                                 .arg(p.total)
                                                                 .arg(floor)));
            ++checked;
        }
        QVERIFY(checked > 0);
        QCOMPARE(seen.back().stage, std::string("done"));
        QCOMPARE(seen.back().remainingSeconds, 0.0);
    }

    // A type with more combinations than the limit is profiled on the cost model's candidates,
    // not refused: the fastest and the least-memory combinations by the model (compared with every
    // combination priced), and the summary says how many of how many.
    void largeTypeIsProfiledOnItsCandidates() {
        const Mesh mesh = must(assignLinkClasses(must(parseMesh("8"), "mesh"), 8), "links");
        const auto graph = tinyGpt(2);  // outlives the catalog
        auto catalog = must(SegmentCatalog::build(*graph, must(loadHardware("h100-sxm"), "hw"), mesh), "catalog");
        const int64_t n = combinationsOf(m_type);
        CandidateLimits limits;
        limits.maxCombinations = 4;
        limits.byTime = 3;
        limits.byMemory = 2;
        auto set = must(selectCandidates(catalog, m_type, limits), "candidates");
        QVERIFY(!set.complete);
        QCOMPARE(set.combinations, n);
        QVERIFY(set.count() >= 3 && set.count() <= 5);
        QVERIFY(set.priced > 0);
        // Brute force over every combination: the fastest and the least-memory are among them.
        int64_t fastest = -1, smallest = -1;
        double fastestSeconds = 0;
        int64_t smallestBytes = 0;
        std::map<int64_t, double> secondsOf;
        for (int64_t i = 0; i < n; ++i) {
            auto w = must(catalog.workPlan(m_type, catalog.combination(m_type, i)), "work");
            secondsOf[i] = w.predictedSeconds;
            if (fastest < 0 || w.predictedSeconds < fastestSeconds) fastest = i, fastestSeconds = w.predictedSeconds;
            if (smallest < 0 || w.memoryBytes() < smallestBytes) smallest = i, smallestBytes = w.memoryBytes();
        }
        QVERIFY(std::find(set.indices.begin(), set.indices.end(), fastest) != set.indices.end());
        QVERIFY(std::find(set.indices.begin(), set.indices.end(), smallest) != set.indices.end());
        for (size_t i = 1; i < set.indices.size(); ++i) QVERIFY(secondsOf[set.indices[i - 1]] <= secondsOf[set.indices[i]]);
        QVERIFY(QString::fromStdString(set.describe()).startsWith(QString("%1 of %2 combinations").arg(set.count()).arg(n)));
        // Deterministic.
        QCOMPARE(must(selectCandidates(catalog, m_type, limits), "again").indices, set.indices);
        // Within the limit: every combination, in order.
        limits.maxCombinations = n;
        auto all = must(selectCandidates(catalog, m_type, limits), "all");
        QVERIFY(all.complete);
        QCOMPARE(all.count(), n);
        QVERIFY(all.describe().empty());

        // A session profiles exactly the candidates and says so.
        SessionConfig cfg = config(m_type);
        cfg.candidates.maxCombinations = 4;
        cfg.candidates.byTime = 3;
        cfg.candidates.byMemory = 2;
        std::vector<std::string> logs;
        ProfilerSession::Callbacks cb;
        cb.log = [&](const std::string& line) { logs.push_back(line); };
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(), cb);
        auto report = must(s.run(), "run");
        QCOMPARE(report.types.size(), size_t{1});
        QCOMPARE(report.types[0].combinations, n);
        QCOMPARE(report.types[0].profiled, set.count());
        QCOMPARE(report.types[0].selection, set.describe());
        QCOMPARE(static_cast<int64_t>(report.results.size()), set.count());
        for (size_t i = 0; i < report.results.size(); ++i)
            QCOMPARE(report.results[i].combination, catalog.combination(m_type, set.indices[i]));
        QVERIFY(std::any_of(logs.begin(), logs.end(), [&](const std::string& l) { return l.find(set.describe()) != std::string::npos; }));
    }

    // Early abandonment judges by time; the least-memory combinations kept for memory are
    // measured in full all the same (before, a slow least-memory combination was abandoned and
    // the kept-by-memory set held only fast ones).
    void leastMemoryCombinationsAreMeasuredInFull() {
        QTemporaryDir dir;
        SessionConfig cfg = config(m_type, dir.filePath("mem.db").toStdString());
        cfg.protocol.abandonFactor = 1.0;  // anything slower than the best so far is abandoned
        cfg.protocol.keepBestByMemory = 3;
        SimulatedBackend::Options o;
        // The less memory, the slower: the least-memory combinations are the ones abandonment drops.
        o.seconds = [](const SegmentWorkPlan& w) { return 1e9 / static_cast<double>(std::max<int64_t>(1, w.memoryBytes())); };
        std::map<std::string, int> resultsPerKey;
        ProfilerSession::Callbacks cb;
        cb.result = [&](const CombinationResult& r) { ++resultsPerKey[r.key]; };
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(o), cb);
        auto report = must(s.run(), "run");
        std::vector<const CombinationResult*> byMemory;
        for (const auto& r : report.results) byMemory.push_back(&r);
        std::sort(byMemory.begin(), byMemory.end(), [](auto* a, auto* b) {
            if (a->memoryBytes != b->memoryBytes) return a->memoryBytes < b->memoryBytes;
            if (a->seconds != b->seconds) return a->seconds < b->seconds;
            return a->key < b->key;
        });
        QVERIFY(report.types[0].abandoned > 0);
        QVERIFY(report.types[0].remeasured > 0);
        for (size_t i = 0; i < 3; ++i) {
            QCOMPARE(byMemory[i]->status, CombinationStatus::Measured);
            QVERIFY(byMemory[i]->kept);
        }
        QCOMPARE(report.types[0].keptByMemory.size(), size_t{3});
        QCOMPARE(report.results.size(), s.partialResults().size());
        for (const auto& r : s.partialResults()) {
            const auto it = std::find_if(report.results.begin(), report.results.end(), [&](const auto& x) { return x.key == r.key; });
            QCOMPARE(r.status, it->status);
        }
        // The DB row says measured too.
        auto db = must(ProfileDb::open(cfg.dbPath, ProfileDb::OpenMode::ReadOnly), "db");
        const auto hw = must(db.hardware(), "hw");
        for (const SegmentRecord& r : must(db.segments(hw[0].id), "segments"))
            if (r.combination == byMemory[0]->key) QCOMPARE(r.status, CombinationStatus::Measured);
    }

    // Simulated runs never go into a DB of real measurements: the session refuses and names the
    // DB of their own; that one then takes them.
    void simulatedRunsKeepOutOfARealDb() {
        QTemporaryDir dir;
        const std::string real = dir.filePath("profile.db").toStdString();
        {
            SimulatedBackend::Options o;
            o.fingerprint.gpuModel = "NVIDIA H100 80GB HBM3";  // standing in for a real GPU
            o.fingerprint.driverVersion = "550";
            o.fingerprint.cudaVersion = "13000";
            o.fingerprint.interconnect = "nvlink";
            ProfilerSession s(config(m_type, real), std::make_unique<SimulatedBackend>(o));
            must(s.run(), "real run");
        }
        ProfilerSession simulated(config(m_type, real), std::make_unique<SimulatedBackend>());
        auto refused = simulated.run();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, std::string("profiler.simulated_into_real_db"));
        QVERIFY(refused.error().message.find(simulatedDbPath(real)) != std::string::npos);
        {
            auto db = must(ProfileDb::open(real, ProfileDb::OpenMode::ReadOnly), "db");
            const auto hw = must(db.hardware(), "hw");
            QCOMPARE(hw.size(), size_t{1});
            QVERIFY(!hw[0].fingerprint.simulated());
        }
        ProfilerSession own(config(m_type, simulatedDbPath(real)), std::make_unique<SimulatedBackend>());
        auto report = must(own.run(), "simulated run");
        QCOMPARE(report.dbPath, simulatedDbPath(real));
        QCOMPARE(must(planningMeasurements(real, "h100-sxm"), "plan").hardware.fingerprint.simulated(), false);
    }

    void badConfigurations() {
        {
            SessionConfig cfg = config(m_type);
            cfg.mesh = "auto";
            ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
            QCOMPARE(s.run().error().code, std::string("profiler.bad_config"));
        }
        {
            SessionConfig cfg = config(99);
            ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
            auto r = s.run();
            QCOMPARE(r.error().code, std::string("profiler.bad_config"));
            QVERIFY(r.error().message.find("T99") != std::string::npos);
        }
        {
            SessionConfig cfg = config(m_type);
            cfg.protocol.timedRounds = 0;
            ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
            QCOMPARE(s.run().error().code, std::string("profiler.bad_protocol"));
        }
        {
            SessionConfig cfg = config(m_type);
            cfg.graph.reset();
            ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
            QCOMPARE(s.run().error().code, std::string("profiler.bad_config"));
        }
        {
            SessionConfig cfg = config(m_type);
            cfg.mesh = "3";
            ProfilerSession s(cfg, std::make_unique<SimulatedBackend>());
            QVERIFY(!s.run());
        }
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
