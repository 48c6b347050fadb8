// Pipeline schedules (plan/pipeline.h): generators replayed against the published closed forms for
// uniform stages, a hand-worked 1F1B timeline with transfers, activation memory in flight, CSV
// round trips and the errors of a malformed or deadlocking schedule.

#include <QtTest>

#include "must.h"
#include "plan/pipeline.h"

using namespace cfp;
using cfp::test::must;

namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 + 1e-9 * std::abs(b); }

PipeReplay replay(PipeScheduleKind kind, int32_t p, int32_t v, int32_t m, StageTimes t, double transfer = 0) {
    auto s = must(makeSchedule(kind, p, v, m), "schedule");
    return must(replaySchedule(s, {t}, transfer), "replay");
}

}  // namespace

class TestPipeline : public QObject {
    Q_OBJECT
private slots:
    // GPipe and 1F1B: (M + P − 1)(F + B), bubble (P − 1)(F + B) on every shape tried.
    void oneFOneBAndGPipeMatchTheClosedForm() {
        for (const auto kind : {PipeScheduleKind::GPipe, PipeScheduleKind::OneFOneB})
            for (const int32_t p : {1, 2, 4, 8})
                for (const int32_t m : {1, 3, 8, 20}) {
                    const StageTimes t{1.0, 1.5, 0.5};
                    const PipeReplay r = replay(kind, p, 1, m, t);
                    QVERIFY2(close(r.seconds, (m + p - 1) * 3.0), qPrintable(QString("%1 p=%2 m=%3: %4").arg(QString::fromStdString(std::string(pipeScheduleName(kind)))).arg(p).arg(m).arg(r.seconds)));
                    QVERIFY(close(r.bubbleSeconds(), (p - 1) * 3.0));
                }
    }

    // 1F1B holds at most P − r micro-batches on rank r; GPipe holds all M.
    void activationsInFlight() {
        const int32_t p = 4, m = 8;
        const PipeReplay a = replay(PipeScheduleKind::OneFOneB, p, 1, m, {1, 2, 0});
        const PipeReplay g = replay(PipeScheduleKind::GPipe, p, 1, m, {1, 2, 0});
        for (int32_t r = 0; r < p; ++r) {
            QCOMPARE(a.peakInFlight[static_cast<size_t>(r)], p - r);
            QCOMPARE(g.peakInFlight[static_cast<size_t>(r)], m);
        }
        StageTimes heavy{1, 2, 0, 3.0};
        const PipeReplay b = replay(PipeScheduleKind::OneFOneB, p, 1, m, heavy);
        QCOMPARE(b.peakActivation[0], 3.0 * p);
    }

    // Megatron-LM's interleaved schedule: M(F + B) + (P − 1)(F + B)/V with chunks of F/V and B/V.
    void interleavedMatchesTheClosedForm() {
        for (const int32_t p : {2, 4, 8})
            for (const int32_t v : {2, 3, 4})
                for (const int32_t m : {p, 2 * p, 4 * p}) {
                    const double F = 1.2, B = 2.4;
                    const PipeReplay r = replay(PipeScheduleKind::Interleaved, p, v, m, {F / v, B / v, 0});
                    const double expected = m * (F + B) + (p - 1) * (F + B) / v;
                    QVERIFY2(close(r.seconds, expected), qPrintable(QString("p=%1 v=%2 m=%3: %4 vs %5").arg(p).arg(v).arg(m).arg(r.seconds).arg(expected)));
                }
    }

    // ZB-H1: M(F + B) + (P − 1)(F + I − W). Counting a micro-batch's activations until its W, a
    // rank holds at most P micro-batches (rank r defers r weight gradients).
    void zeroBubbleH1MatchesTheClosedForm() {
        for (const int32_t p : {2, 4, 8})
            for (const int32_t m : {p, 2 * p, 3 * p + 1}) {
                const double F = 1.0, I = 1.0, W = 0.8;
                const PipeReplay r = replay(PipeScheduleKind::ZeroBubbleH1, p, 1, m, {F, I, W});
                const double expected = m * (F + I + W) + (p - 1) * (F + I - W);
                QVERIFY2(close(r.seconds, expected), qPrintable(QString("p=%1 m=%2: %3 vs %4").arg(p).arg(m).arg(r.seconds).arg(expected)));
                for (int32_t k = 0; k < p; ++k) QVERIFY(r.peakInFlight[static_cast<size_t>(k)] <= p);
            }
    }

    // Two ranks, three micro-batches, F = 1, B = 2, transfer 0.5, worked by hand:
    //   rank 0: F0 [0,1] F1 [1,2] · B0 [5,7] F2 [7,8] B1 [8,10] · B2 [12,14]
    //   rank 1: F0 [1.5,2.5] B0 [2.5,4.5] F1 [4.5,5.5] B1 [5.5,7.5] · F2 [8.5,9.5] B2 [9.5,11.5]
    // (rank 1's B0 reaches rank 0 at 5, its B1 at 8, its B2 at 12; rank 0's F2 reaches rank 1 at 8.5.)
    void oneFOneBWithTransfersByHand() {
        auto s = must(makeSchedule(PipeScheduleKind::OneFOneB, 2, 1, 3), "schedule");
        QCOMPARE(QString::fromStdString(s.toCsv()), QString("0F0,0F1,0B0,0F2,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n"));
        const PipeReplay r = must(replaySchedule(s, {StageTimes{1, 2, 0}}, 0.5), "replay");
        std::map<std::string, std::pair<double, double>> at;
        for (const PipeEvent& e : r.events) at[std::to_string(e.rank) + ":" + e.action.toString()] = {e.start, e.end};
        QCOMPARE(at["0:0B0"].first, 5.0);
        QCOMPARE(at["0:0F2"].first, 7.0);
        QCOMPARE(at["0:0B1"].first, 8.0);
        QCOMPARE(at["1:1F2"].first, 8.5);
        QCOMPARE(at["1:1B2"].second, 11.5);
        QCOMPARE(at["0:0B2"].first, 12.0);
        QCOMPARE(r.seconds, 14.0);
        QCOMPARE(r.busySeconds[0], 9.0);
        QCOMPARE(r.bubbleSeconds(), 5.0);
    }

    void csvRoundTripAndErrors() {
        auto s = must(makeSchedule(PipeScheduleKind::Interleaved, 2, 2, 4), "schedule");
        auto back = must(scheduleFromCsv(s.toCsv(), 2, 2), "csv");
        QCOMPARE(back.actions, s.actions);
        QCOMPARE(back.microBatches, 4);
        const PipeReplay a = must(replaySchedule(s, {StageTimes{1, 2, 0}}, 0.1), "replay");
        const PipeReplay b = must(replaySchedule(back, {StageTimes{1, 2, 0}}, 0.1), "replay");
        QCOMPARE(a.seconds, b.seconds);

        auto bad = scheduleFromCsv("0F0,0X0\n1F0,1B0\n", 2, 1);
        QVERIFY(!bad);
        QCOMPARE(QString::fromStdString(bad.error().code), QString("schedule.csv"));
        QCOMPARE(QString::fromStdString(bad.error().where), QString("line 1"));
        auto wrongRank = scheduleFromCsv("1F0,0B0\n0F0,1B0\n", 2, 1);
        QVERIFY(!wrongRank);
        QVERIFY(QString::fromStdString(wrongRank.error().message).contains("held by rank"));
        auto missing = scheduleFromCsv("0F0\n1F0,1B0\n", 2, 1);
        QVERIFY(!missing);
        QVERIFY(QString::fromStdString(missing.error().message).contains("needs one backward"));
        // Rank 0 waits for its own backward before the forward rank 1 needs for it: a deadlock.
        auto stuck = must(scheduleFromCsv("0B0,0F0\n1F0,1B0\n", 2, 1), "csv");
        auto dead = replaySchedule(stuck, {StageTimes{1, 1, 0}}, 0);
        QVERIFY(!dead);
        QCOMPARE(QString::fromStdString(dead.error().code), QString("schedule.deadlock"));
        QVERIFY(QString::fromStdString(dead.error().message).contains("0B0"));
    }

    void shapesAreChecked() {
        QVERIFY(!makeSchedule(PipeScheduleKind::Interleaved, 4, 2, 6));   // M not a multiple of P
        QVERIFY(!makeSchedule(PipeScheduleKind::Interleaved, 4, 1, 8));   // one chunk
        QVERIFY(!makeSchedule(PipeScheduleKind::OneFOneB, 4, 2, 8));      // chunks on 1F1B
        QVERIFY(!makeSchedule(PipeScheduleKind::OneFOneB, 0, 1, 8));
        QVERIFY(!parsePipeScheduleKind("dualpipe"));
        QCOMPARE(must(parsePipeScheduleKind("interleaved-1f1b"), "kind"), PipeScheduleKind::Interleaved);
        auto s = must(makeSchedule(PipeScheduleKind::OneFOneB, 2, 1, 2), "schedule");
        QVERIFY(!replaySchedule(s, {StageTimes{}, StageTimes{}, StageTimes{}}, 0));
    }
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
