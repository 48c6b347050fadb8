// Pipeline schedules (plan/pipeline.h): generators replayed against the published closed forms for
// uniform stages (1F1B, interleaved, ZB-H1, ZB-H2, ZB-V, DualPipeV, DualPipe), hand-worked
// timelines, activation memory in flight, placements, CSV round trips and the errors of a
// malformed or deadlocking schedule; the schedule optimiser (plan/pipeline_mip.h) against its own
// replay, its warm start, brute force over every order of tiny pipelines and the zero-bubble
// lower bound.

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include "must.h"
#include "plan/pipeline.h"
#include "plan/pipeline_mip.h"
#include "plan/pipeline_plan.h"
#include "plan/run_config.h"

using namespace cfp;
using cfp::test::must;

namespace {

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 + 1e-9 * std::abs(b); }

PipeReplay replay(PipeScheduleKind kind, int32_t p, int32_t v, int32_t m, StageTimes t, double transfer = 0,
                  PipeOverlap overlap = PipeOverlap::Serial) {
    auto s = must(makeSchedule(kind, p, v, m), "schedule");
    return must(replaySchedule(s, {t}, transfer, overlap), "replay");
}

// One rank's events as "action@start-end", in order: "0F0@0-1 3F2@1-2 …".
QString timeline(const PipeReplay& r, int32_t rank) {
    QStringList out;
    for (const PipeEvent& e : r.events)
        if (e.rank == rank)
            out << QString("%1@%2-%3").arg(QString::fromStdString(e.action.toString())).arg(e.start).arg(e.end);
    return out.join(' ');
}

// The most micro-batch stages a rank holds when activations are freed by I (or B), not by W: what
// the zero-bubble paper counts.
std::vector<int32_t> peakUntilInputGrad(const PipeReplay& r, size_t ranks) {
    std::vector<int32_t> held(ranks, 0), peak(ranks, 0);
    for (const PipeEvent& e : r.events) {
        const auto k = static_cast<size_t>(e.rank);
        if (e.action.kind == PipeActionKind::Forward || e.action.overlapped()) peak[k] = std::max(peak[k], ++held[k]);
        if (e.action.kind == PipeActionKind::Backward || e.action.kind == PipeActionKind::InputGrad || e.action.overlapped()) --held[k];
    }
    return peak;
}

QString label(const char* what, int32_t p, int32_t m, double got, double expected) {
    return QString("%1 p=%2 m=%3: %4, expected %5").arg(what).arg(p).arg(m).arg(got, 0, 'g', 12).arg(expected, 0, 'g', 12);
}

// Every order of a rank's actions that keeps F before I before W of one micro-batch on one stage
// and holds at most `limit` stage activations at once (the replay's count, a function of the
// order alone). `fifo`: only the orders that run each kind of a stage in micro-batch order.
void allOrders(const std::vector<PipeAction>& actions, int32_t limit, bool fifo, std::vector<PipeAction>& prefix, std::vector<bool>& used,
               int32_t held, std::vector<std::vector<PipeAction>>& out) {
    if (prefix.size() == actions.size()) {
        out.push_back(prefix);
        return;
    }
    for (size_t i = 0; i < actions.size(); ++i) {
        if (used[i]) continue;
        const PipeAction& a = actions[i];
        if (a.kind == PipeActionKind::Forward && held == limit) continue;
        bool ready = true;  // its F (for I) and I (for W) already placed; with fifo, the earlier micro-batches' of its kind
        for (size_t j = 0; j < actions.size(); ++j) {
            const PipeAction& b = actions[j];
            if (used[j] || b.stage != a.stage) continue;
            if (b.microBatch == a.microBatch && ((a.kind == PipeActionKind::InputGrad && b.kind == PipeActionKind::Forward) ||
                                                 (a.kind == PipeActionKind::WeightGrad && b.kind != PipeActionKind::WeightGrad)))
                ready = false;
            if (fifo && b.kind == a.kind && b.microBatch < a.microBatch) ready = false;
        }
        if (!ready) continue;
        used[i] = true;
        prefix.push_back(a);
        allOrders(actions, limit, fifo, prefix, used, held + (a.kind == PipeActionKind::Forward) - (a.kind == PipeActionKind::WeightGrad), out);
        prefix.pop_back();
        used[i] = false;
    }
}

// The shortest makespan of any schedule of the shape within `limit` stage activations per rank,
// by replaying every combination of per-rank orders (deadlocks skipped).
double bruteForceMakespan(PipePlacement placement, int32_t p, int32_t v, int32_t m, StageTimes t, double transfer, int32_t limit, bool fifo = false) {
    PipeSchedule shape;
    shape.kind = PipeScheduleKind::Custom;
    shape.placement = placement;
    shape.ranks = p;
    shape.chunks = v;
    shape.microBatches = m;
    std::vector<std::vector<std::vector<PipeAction>>> orders(static_cast<size_t>(p));
    for (int32_t r = 0; r < p; ++r) {
        std::vector<PipeAction> actions;
        for (int32_t st = 0; st < shape.stages(); ++st)
            for (int32_t mb = 0; mb < m; ++mb)
                if (shape.rankOf(st) == r && shape.runsOn(st, mb))
                    for (const auto k : {PipeActionKind::Forward, PipeActionKind::InputGrad, PipeActionKind::WeightGrad})
                        actions.push_back(PipeAction{k, st, mb});
        std::vector<PipeAction> prefix;
        std::vector<bool> used(actions.size(), false);
        allOrders(actions, limit, fifo, prefix, used, 0, orders[static_cast<size_t>(r)]);
    }
    double best = std::numeric_limits<double>::infinity();
    std::vector<size_t> pick(static_cast<size_t>(p), 0);
    for (;;) {
        shape.actions.clear();
        for (int32_t r = 0; r < p; ++r) shape.actions.push_back(orders[static_cast<size_t>(r)][pick[static_cast<size_t>(r)]]);
        if (auto replayed = replaySchedule(shape, {t}, transfer)) best = std::min(best, replayed->seconds);
        size_t r = 0;
        while (r < pick.size() && ++pick[r] == orders[r].size()) pick[r++] = 0;
        if (r == pick.size()) break;
    }
    return best;
}

PipeMipRequest mipRequest(PipePlacement placement, int32_t p, int32_t v, int32_t m, StageTimes t, double transfer = 0,
                          std::optional<int32_t> limit = std::nullopt) {
    PipeMipRequest q;
    q.placement = placement;
    q.ranks = p;
    q.chunks = v;
    q.microBatches = m;
    q.times = {t};
    q.transferSeconds = transfer;
    q.memoryLimit = limit;
    return q;
}

PipeMipOptions quick() {
    PipeMipOptions o;
    o.timeLimitSeconds = 20;
    return o;
}

// The MIP's result replays to its makespan, keeps to its limit and is no worse than its warm start.
void checkMipResult(const PipeMipResult& r, const QString& what) {
    QVERIFY2(r.schedule.kind == PipeScheduleKind::Mip, qPrintable(what));
    const int32_t peak = *std::max_element(r.replay.peakInFlight.begin(), r.replay.peakInFlight.end());
    QVERIFY2(peak <= r.memoryLimit, qPrintable(what + QString(": peak %1 over the limit %2").arg(peak).arg(r.memoryLimit)));
    QVERIFY2(r.replay.seconds <= r.warmStartSeconds + 1e-9, qPrintable(what));
    QVERIFY2(r.boundSeconds <= r.objectiveSeconds + 1e-9, qPrintable(what));
    // Its CSV reads back as the same actions: every F, I and W once, on the rank that holds its stage.
    auto back = scheduleFromCsv(r.schedule.toCsv(), r.schedule.ranks, r.schedule.chunks, r.schedule.placement);
    QVERIFY2(back, qPrintable(what + ": " + QString::fromStdString(back ? std::string() : back.error().toString())));
    QVERIFY2(back->actions == r.schedule.actions, qPrintable(what));
    // Replayed, the MIP's schedule takes at most the MIP's makespan (as soon as possible in its
    // order closes any slack a solution cut short by the time limit has), and exactly that when
    // the MIP's own solution is the proven optimum. (A solution cut short can replay down to the
    // bound, which proves the result optimal but not the MIP's makespan: seen under a sanitizer
    // build on a loaded machine, replay 20.5 for a makespan of 22.5.)
    QVERIFY2(r.replay.seconds <= r.mipMakespanSeconds + 1e-9, qPrintable(what));
    if (r.exactGrid && r.status == PipeMipStatus::Optimal && r.mipMakespanSeconds <= r.boundSeconds + 1e-9)
        QVERIFY2(close(r.replay.seconds, r.mipMakespanSeconds),
                 qPrintable(what + QString(": replay %1, the MIP's makespan %2").arg(r.replay.seconds).arg(r.mipMakespanSeconds)));
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

    // ZB-H2 (arXiv 2401.10241): for M ≥ 2P − 1 and F ≥ min(I, W) the step is
    // M(F + I + W) + (P − 1)·max(F, F + I − 2W) and no rank idles more than
    // (P − 1)·max(0, F + I − 2W) between its first and last action (rank 0 exactly: the paper's
    // (p − 1)(T_F + T_B − 2T_W), T_B its I).
    void zeroBubbleH2MatchesTheClosedForm() {
        const StageTimes cases[] = {{1, 1, 1}, {1, 1, 0.5}, {1, 1.5, 0.5}, {2, 1, 1}, {1, 1, 1.5}, {1, 0.5, 1}, {1.2, 1.0, 0.9}, {1, 2, 1}};
        for (const StageTimes& t : cases)
            for (const int32_t p : {1, 2, 3, 4, 8})
                for (const int32_t m : {2 * p - 1, 2 * p, 3 * p + 1}) {
                    const double F = t.forward, I = t.inputGrad, W = t.weightGrad;
                    QVERIFY(F >= std::min(I, W));
                    const PipeReplay r = replay(PipeScheduleKind::ZeroBubbleH2, p, 1, m, t);
                    const double step = m * (F + I + W) + (p - 1) * std::max(F, F + I - 2 * W), inSpan = (p - 1) * std::max(0.0, F + I - 2 * W);
                    QVERIFY2(close(r.seconds, step), qPrintable(label("zb-h2 step", p, m, r.seconds, step)));
                    QVERIFY2(close(r.spanBubbleSeconds(), inSpan), qPrintable(label("zb-h2 span", p, m, r.spanBubbleSeconds(), inSpan)));
                    QVERIFY(close(r.endSeconds[0] - r.startSeconds[0] - r.busySeconds[0], inSpan));
                }
    }

    // With F = I = W every rank r is busy without a gap from rF to rF + M(F + I + W) (the
    // parallelogram): zero bubble in each rank's span, the ramp (P − 1)F in the makespan. Counted
    // until W, 2P − 1 micro-batches on every rank; counted until I (the paper), 2P − 1 − 2r.
    void zeroBubbleH2IsAParallelogram() {
        for (const int32_t p : {2, 4, 8})
            for (const int32_t m : {2 * p - 1, 3 * p}) {
                const double f = 0.7;
                const PipeReplay r = replay(PipeScheduleKind::ZeroBubbleH2, p, 1, m, {f, f, f});
                QVERIFY(close(r.bubbleSeconds(), (p - 1) * f));
                QVERIFY(close(r.spanBubbleSeconds(), 0));
                const std::vector<int32_t> untilI = peakUntilInputGrad(r, static_cast<size_t>(p));
                for (int32_t k = 0; k < p; ++k) {
                    const auto kr = static_cast<size_t>(k);
                    QVERIFY(close(r.startSeconds[kr], k * f));
                    QVERIFY(close(r.endSeconds[kr], k * f + 3 * m * f));
                    QCOMPARE(r.peakInFlight[kr], 2 * p - 1);
                    QCOMPARE(untilI[kr], 2 * p - 1 - 2 * k);
                }
            }
    }

    // Two ranks, three micro-batches, F = I = W = 1, worked by hand: rank 0 runs 2P − 1 = 3
    // forwards, rank 1 one; rank 1 defers its W's to the end and rank 0 gets each I as it frees up.
    void zeroBubbleH2ByHand() {
        auto s = must(makeSchedule(PipeScheduleKind::ZeroBubbleH2, 2, 1, 3), "schedule");
        QCOMPARE(QString::fromStdString(s.toCsv()), QString("0F0,0F1,0F2,0I0,0W0,0I1,0W1,0I2,0W2\n1F0,1I0,1F1,1I1,1F2,1I2,1W0,1W1,1W2\n"));
        const PipeReplay r = must(replaySchedule(s, {StageTimes{1, 1, 1}}, 0), "replay");
        QCOMPARE(timeline(r, 0), QString("0F0@0-1 0F1@1-2 0F2@2-3 0I0@3-4 0W0@4-5 0I1@5-6 0W1@6-7 0I2@7-8 0W2@8-9"));
        QCOMPARE(timeline(r, 1), QString("1F0@1-2 1I0@2-3 1F1@3-4 1I1@4-5 1F2@5-6 1I2@6-7 1W0@7-8 1W1@8-9 1W2@9-10"));
        QCOMPARE(r.seconds, 10.0);  // (P − 1)F + M(F + I + W)
        QCOMPARE(r.spanBubbleSeconds(), 0.0);
    }

    // ZB-V with per-chunk F = I = W = f and M ≥ 2P − 1: (P − 1)f + 6Mf, each rank busy without a gap
    // from its first action to its last; 2P chunks in flight per rank at most, which at half a
    // rank's layers each is P micro-batches — 1F1B's peak (on its first rank).
    void zeroBubbleVMatchesTheClosedForm() {
        for (const int32_t p : {1, 2, 3, 4, 8})
            for (const int32_t m : {2 * p - 1, 2 * p, 3 * p + 1, 5 * p}) {
                const double f = 0.5;
                const PipeReplay r = replay(PipeScheduleKind::ZeroBubbleV, p, 2, m, {f, f, f, 0.5});
                const double step = (p - 1) * f + 6 * m * f;
                QVERIFY2(close(r.seconds, step), qPrintable(label("zb-v", p, m, r.seconds, step)));
                QVERIFY(close(r.bubbleSeconds(), (p - 1) * f));
                QVERIFY(close(r.spanBubbleSeconds(), 0));
                const PipeReplay one = replay(PipeScheduleKind::OneFOneB, p, 1, m, {2 * f, 2 * f, 2 * f, 1.0});
                for (int32_t k = 0; k < p; ++k) {
                    const auto kr = static_cast<size_t>(k);
                    QCOMPARE(r.peakInFlight[kr], 2 * p);
                    QVERIFY(close(r.peakActivation[kr], one.peakActivation[0]));
                    QVERIFY(close(r.startSeconds[kr], k * f));
                }
            }
    }

    // ZB-V on two ranks, three micro-batches (= 2P − 1), f = i = w = 1, worked by hand. Rank 0 holds
    // stages 0 and 3, rank 1 stages 1 and 2; the turn from stage 1 to 2 stays on rank 1.
    //   rank 0: F0 of stage 0 for micro-batches 0–2 [0,3]; stage 3's F I W of micro-batch 0 as soon
    //           as rank 1's 2F0 ends at 3; its 0I0 waits for rank 1's 1I0, which ends at 9.
    //   rank 1: 1F0 [1,2] and, with no transfer, 2F0 [2,3]; its first I (2I0) after rank 0's 3I0 [4,5].
    void zeroBubbleVByHand() {
        auto s = must(makeSchedule(PipeScheduleKind::ZeroBubbleV, 2, 2, 3), "schedule");
        QCOMPARE(s.placement, PipePlacement::VShape);
        const PipeReplay r = must(replaySchedule(s, {StageTimes{1, 1, 1}}, 0), "replay");
        QCOMPARE(timeline(r, 0), QString("0F0@0-1 0F1@1-2 0F2@2-3 3F0@3-4 3I0@4-5 3W0@5-6 3F1@6-7 3I1@7-8 3W1@8-9 0I0@9-10 0W0@10-11 "
                                         "3F2@11-12 3I2@12-13 3W2@13-14 0I1@14-15 0W1@15-16 0I2@16-17 0W2@17-18"));
        QCOMPARE(timeline(r, 1), QString("1F0@1-2 2F0@2-3 1F1@3-4 2F1@4-5 2I0@5-6 2W0@6-7 1F2@7-8 1I0@8-9 1W0@9-10 2F2@10-11 2I1@11-12 "
                                         "2W1@12-13 1I1@13-14 2I2@14-15 1I2@15-16 1W1@16-17 2W2@17-18 1W2@18-19"));
        QCOMPARE(r.seconds, 19.0);  // (P − 1)f + 6Mf
    }

    // DualPipeV (DeepSeek's dualpipev.py) against the DualPipe README's bubble (PP/2 − 1)(F&B + B − 3W)
    // with PP = 2P stages, for per-chunk I = F ≥ W and F&B = F + B (serial) or max(F, B) (full
    // overlap); 2P + 1 chunks' activations per rank at the peak (the README's PP + 1).
    void dualPipeVMatchesTheReadme() {
        const StageTimes cases[] = {{1, 1, 1}, {1, 1, 0.5}, {2, 2, 0.4}, {0.8, 0.8, 0.8}};
        for (const StageTimes& t : cases)
            for (const PipeOverlap overlap : {PipeOverlap::Serial, PipeOverlap::Full})
                for (const int32_t p : {1, 2, 3, 4, 8})
                    for (const int32_t m : {2 * p, 2 * p + 3, 4 * p}) {
                        const double F = t.forward, B = t.inputGrad + t.weightGrad, W = t.weightGrad;
                        const double fb = overlap == PipeOverlap::Serial ? F + B : std::max(F, B);
                        const PipeReplay r = replay(PipeScheduleKind::DualPipeV, p, 2, m, t, 0, overlap);
                        const double bubble = (p - 1) * (fb + B - 3 * W);
                        QVERIFY2(close(r.bubbleSeconds(), bubble), qPrintable(label("dualpipe-v", p, m, r.bubbleSeconds(), bubble)));
                        for (int32_t k = 0; k < p; ++k) QCOMPARE(r.peakInFlight[static_cast<size_t>(k)], 2 * p + 1);
                    }
    }

    // DualPipe (dualpipe.py): (P/2 − 1)(F&B + B − 3W) under the same conditions, P + 1 stages'
    // activations per rank (the README's PP + 1).
    void dualPipeMatchesTheReadme() {
        const StageTimes cases[] = {{1, 1, 1}, {1, 1, 0.5}, {2, 2, 0.4}};
        for (const StageTimes& t : cases)
            for (const PipeOverlap overlap : {PipeOverlap::Serial, PipeOverlap::Full})
                for (const int32_t p : {2, 4, 6, 8})
                    for (const int32_t m : {2 * p, 2 * p + 4, 4 * p}) {
                        const double F = t.forward, B = t.inputGrad + t.weightGrad, W = t.weightGrad;
                        const double fb = overlap == PipeOverlap::Serial ? F + B : std::max(F, B);
                        const PipeReplay r = replay(PipeScheduleKind::DualPipe, p, 2, m, t, 0, overlap);
                        const double bubble = (p / 2 - 1) * (fb + B - 3 * W);
                        QVERIFY2(close(r.bubbleSeconds(), bubble), qPrintable(label("dualpipe", p, m, r.bubbleSeconds(), bubble)));
                        for (int32_t k = 0; k < p; ++k) QCOMPARE(r.peakInFlight[static_cast<size_t>(k)], p + 1);
                    }
    }

    // DualPipeV on two ranks, four micro-batches, F = I = W = 1, pairs serial, worked by hand from
    // dualpipev.py's steps. Rank 0 (stages 0 and 3): two F0, then F0 F1, I1 W F1, the pairs
    // F0&B1 and F1&B0 (each 3 units: F + B), B1 F1&B0, B1 I0, W I0, W. 0B0 waits for rank 1's
    // pair with 1B0, which ends at 11; 0I2 for rank 1's 1B2, which ends at 21.
    void dualPipeVByHand() {
        auto s = must(makeSchedule(PipeScheduleKind::DualPipeV, 2, 2, 4), "schedule");
        QCOMPARE(QString::fromStdString(s.toCsv()),
                 QString("0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,3B2,(3F3;0B1)OVERLAP_F_B,3B3,0I2,0W2,0I3,0W3\n"
                         "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2B2,1B2,2I3,1I3,2W3,1W3\n"));
        const PipeReplay r = must(replaySchedule(s, {StageTimes{1, 1, 1}}, 0), "replay");
        QCOMPARE(timeline(r, 0), QString("0F0@0-1 0F1@1-2 0F2@2-3 3F0@3-4 3I0@4-5 3W0@5-6 3F1@6-7 (0F3;3B1)OVERLAP_F_B@7-10 "
                                         "(3F2;0B0)OVERLAP_F_B@11-14 3B2@14-16 (3F3;0B1)OVERLAP_F_B@17-20 3B3@20-22 0I2@22-23 0W2@23-24 "
                                         "0I3@24-25 0W3@25-26"));
        QCOMPARE(timeline(r, 1), QString("1F0@1-2 2F0@2-3 1F1@3-4 2F1@4-5 1F2@5-6 2B0@6-8 (2F2;1B0)OVERLAP_F_B@8-11 "
                                         "(1F3;2B1)OVERLAP_F_B@11-14 (2F3;1B1)OVERLAP_F_B@14-17 2B2@17-19 1B2@19-21 2I3@22-23 1I3@23-24 "
                                         "2W3@24-25 1W3@25-26"));
        QCOMPARE(r.seconds, 26.0);
        QCOMPARE(r.bubbleSeconds(), 2.0);  // (P − 1)(F&B + B − 3W) = 1 × (3 + 2 − 3)
        QCOMPARE(r.peakInFlight, (std::vector<int32_t>{5, 5}));
    }

    // DualPipe on two ranks, four micro-batches (0 and 1 down from rank 0, 2 and 3 up from rank 1),
    // F = I = W = 1, pairs serial, worked by hand: rank 1 mirrors rank 0 and neither idles — the
    // README's bubble (P/2 − 1)(…) is 0 for P = 2.
    //   rank 0: 0F0 [0,1] 3F2 [1,2] (rank 1's 2F2 ended at 1) 0F1 [2,3] 3B2 [3,5] (the up path's
    //           loss) 3F3&0B0 [5,8] (rank 1's 1B0 ended at 5) 3B3 [8,10] 0I1 [10,11] (1B1 at 10) 0W1.
    void dualPipeByHand() {
        auto s = must(makeSchedule(PipeScheduleKind::DualPipe, 2, 2, 4), "schedule");
        QCOMPARE(s.placement, PipePlacement::Bidirectional);
        const PipeReplay r = must(replaySchedule(s, {StageTimes{1, 1, 1}}, 0), "replay");
        QCOMPARE(timeline(r, 0), QString("0F0@0-1 3F2@1-2 0F1@2-3 3B2@3-5 (3F3;0B0)OVERLAP_F_B@5-8 3B3@8-10 0I1@10-11 0W1@11-12"));
        QCOMPARE(timeline(r, 1), QString("2F2@0-1 1F0@1-2 2F3@2-3 1B0@3-5 (1F1;2B2)OVERLAP_F_B@5-8 1B1@8-10 2I3@10-11 2W3@11-12"));
        QCOMPARE(r.seconds, 12.0);
        QCOMPARE(r.bubbleSeconds(), 0.0);
        QCOMPARE(r.peakInFlight, (std::vector<int32_t>{3, 3}));
        // Full overlap: each pair takes max(F, B) = 2.
        const PipeReplay full = must(replaySchedule(s, {StageTimes{1, 1, 1}}, 0, PipeOverlap::Full), "replay");
        QCOMPARE(full.seconds, 11.0);
    }

    // Every generated schedule has each micro-batch's F and backward once per stage of its path, on
    // the rank its placement gives (scheduleFromCsv checks that), and replays without a deadlock
    // for uneven times with transfers, on every shape it accepts.
    void everyActionOnceOnItsRank() {
        const StageTimes uneven{1.0, 1.3, 0.7};
        for (const PipeScheduleKind kind : {PipeScheduleKind::ZeroBubbleH2, PipeScheduleKind::ZeroBubbleV, PipeScheduleKind::DualPipeV, PipeScheduleKind::DualPipe})
            for (int32_t p = 1; p <= 8; ++p)
                for (int32_t m = 1; m <= 3 * p + 2; ++m) {
                    const int32_t v = pipeSchedulePlacement(kind) == PipePlacement::Looped ? 1 : 2;
                    auto s = makeSchedule(kind, p, v, m);
                    if (!s) {
                        QCOMPARE(QString::fromStdString(s.error().code), QString("schedule.shape"));
                        QVERIFY(kind == PipeScheduleKind::DualPipeV || kind == PipeScheduleKind::DualPipe);
                        continue;
                    }
                    const std::string name(pipeScheduleName(kind));
                    auto back = scheduleFromCsv(s->toCsv(), p, v, s->placement);
                    QVERIFY2(back, qPrintable(QString::fromStdString(name + ": " + (back ? std::string() : back.error().toString()))));
                    QCOMPARE(back->actions, s->actions);
                    QCOMPARE(back->microBatches, m);
                    // Forwards: one per micro-batch and stage of its path (P·V; dualpipe P).
                    size_t forwards = 0;
                    for (const auto& rank : s->actions)
                        for (const PipeAction& a : rank) forwards += a.kind == PipeActionKind::Forward || a.overlapped();
                    QCOMPARE(forwards, static_cast<size_t>(s->pathStages()) * static_cast<size_t>(m));
                    for (const PipeOverlap overlap : {PipeOverlap::Serial, PipeOverlap::Full}) {
                        auto r = replaySchedule(*s, {uneven}, 0.2, overlap);
                        QVERIFY2(r, qPrintable(QString::fromStdString(name + " p=" + std::to_string(p) + " m=" + std::to_string(m))));
                    }
                }
        // Read back under the looped placement, a V schedule names stages on the wrong ranks.
        auto v = must(makeSchedule(PipeScheduleKind::ZeroBubbleV, 4, 2, 8), "zb-v");
        auto looped = scheduleFromCsv(v.toCsv(), 4, 2);
        QVERIFY(!looped);
        QVERIFY(QString::fromStdString(looped.error().message).contains("held by rank"));
    }

    // Where the placements put the stages, and the paths of a bidirectional pipeline.
    void placements() {
        PipeSchedule s;
        s.ranks = 4;
        s.chunks = 2;
        s.microBatches = 8;
        std::vector<int32_t> ranks;
        for (int32_t st = 0; st < 8; ++st) ranks.push_back(s.rankOf(st));
        QCOMPARE(ranks, (std::vector<int32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
        s.placement = PipePlacement::VShape;
        ranks.clear();
        for (int32_t st = 0; st < 8; ++st) ranks.push_back(s.rankOf(st));
        QCOMPARE(ranks, (std::vector<int32_t>{0, 1, 2, 3, 3, 2, 1, 0}));
        QCOMPARE(s.nextStage(3), 4);  // the turn on rank 3
        QCOMPARE(s.nextStage(7), -1);
        QCOMPARE(s.pathStages(), 8);
        s.placement = PipePlacement::Bidirectional;
        QCOMPARE(s.rankOf(4), 3);  // model stage 0 of the upward copy
        QCOMPARE(s.nextStage(3), -1);
        QCOMPARE(s.previousStage(4), -1);
        QCOMPARE(s.previousStage(5), 4);
        QCOMPARE(s.pathStages(), 4);
        QVERIFY(s.runsOn(0, 3) && !s.runsOn(0, 4) && s.runsOn(4, 4) && !s.runsOn(7, 0));
        QCOMPARE(must(parsePipePlacement("v"), "v"), PipePlacement::VShape);
        QVERIFY(!parsePipePlacement("zigzag"));
    }

    // Overlapped pairs in CSV: PyTorch's "(F;B)OVERLAP_F_B", read back; malformed pairs and pairs
    // of the wrong kinds are errors.
    void overlappedPairsInCsv() {
        const PipeAction pair = overlappedPair({PipeActionKind::Forward, 2, 4}, {PipeActionKind::Backward, 1, 0});
        QCOMPARE(QString::fromStdString(pair.toString()), QString("(2F4;1B0)OVERLAP_F_B"));
        QCOMPARE(pair.forwardPart(), (PipeAction{PipeActionKind::Forward, 2, 4}));
        QCOMPARE(pair.backwardPart(), (PipeAction{PipeActionKind::Backward, 1, 0}));
        auto s = must(makeSchedule(PipeScheduleKind::DualPipe, 4, 2, 12), "dualpipe");
        auto back = must(scheduleFromCsv(s.toCsv(), 4, 2, PipePlacement::Bidirectional), "csv");
        QCOMPARE(back.actions, s.actions);
        const PipeReplay a = must(replaySchedule(s, {StageTimes{1, 2, 0.5}}, 0.1, PipeOverlap::Full), "replay");
        const PipeReplay b = must(replaySchedule(back, {StageTimes{1, 2, 0.5}}, 0.1, PipeOverlap::Full), "replay");
        QCOMPARE(a.seconds, b.seconds);
        for (const char* bad : {"(0F0;1I0)OVERLAP_F_B,1B0\n1F0\n", "(0F0;1B0)OVERLAP,1B0\n1F0\n", "(0F0)OVERLAP_F_B\n1F0,1B0\n"}) {
            auto r = scheduleFromCsv(bad, 2, 1);
            QVERIFY2(!r, bad);
            QCOMPARE(QString::fromStdString(r.error().code), QString("schedule.csv"));
        }
        // A bidirectional schedule: micro-batch 0 runs down, so it has no business on stage 2.
        auto wrongPath = scheduleFromCsv("0F0,0B0,3F1,3B1\n1F0,1B0,2F1,2B1,2F0\n", 2, 2, PipePlacement::Bidirectional);
        QVERIFY(!wrongPath);
        QVERIFY(QString::fromStdString(wrongPath.error().message).contains("does not run on stage 2"));
        auto odd = scheduleFromCsv("0F0,0B0,3F2,3B2\n1F0,1B0,2F2,2B2\n", 2, 2, PipePlacement::Bidirectional);
        QVERIFY(!odd);
        QVERIFY(QString::fromStdString(odd.error().message).contains("half its micro-batches"));
    }

    // What the planner prices: every generated schedule (looped, the V ones, DualPipe's two copies),
    // and mip and custom ones given their actions; a name it does not know is refused in one line.
    void plannerRefusesWhatItCannotPrice() {
        QCOMPARE(must(parsePlannedScheduleKind("zb-h2"), "zb-h2"), PipeScheduleKind::ZeroBubbleH2);
        QCOMPARE(must(parsePlannedScheduleKind("zb-v"), "zb-v"), PipeScheduleKind::ZeroBubbleV);
        QCOMPARE(must(parsePlannedScheduleKind("dualpipe-v"), "dualpipe-v"), PipeScheduleKind::DualPipeV);
        QCOMPARE(must(parsePlannedScheduleKind("dualpipe"), "dualpipe"), PipeScheduleKind::DualPipe);
        QCOMPARE(must(parsePlannedScheduleKind("mip"), "mip"), PipeScheduleKind::Mip);
        QCOMPARE(must(parsePlannedScheduleKind("custom"), "custom"), PipeScheduleKind::Custom);
        QCOMPARE(QString::fromStdString(parsePlannedScheduleKind("chimera").error().code), QString("schedule.unknown"));
        // `schedule=` of a configuration, and a pipeline handed to the planner's replay.
        QVERIFY(RunConfig::parse("pp=2,schedule=zb-h2"));
        QVERIFY(RunConfig::parse("pp=2,vp=2,schedule=dualpipe-v"));
        QVERIFY(RunConfig::parse("pp=2,schedule=dualpipe"));
        auto unknown = RunConfig::parse("pp=2,schedule=chimera");
        QVERIFY(!unknown);
        QVERIFY2(QString::fromStdString(unknown.error().message).contains("dualpipe-v or dualpipe"), unknown.error().toString().c_str());
        // The optimiser's and a CSV's schedules are cfp plan's, not a configuration's.
        for (const char* text : {"pp=2,schedule=mip", "pp=2,schedule=custom"}) {
            auto refused = RunConfig::parse(text);
            QVERIFY(!refused);
            QCOMPARE(QString::fromStdString(refused.error().code), QString("schedule.unsupported"));
            QVERIFY(QString::fromStdString(refused.error().message).contains("--schedule mip"));
        }
        PipelinePlan pl;
        pl.stages = 2;
        pl.chunksPerRank = 2;
        pl.schedule = PipeScheduleKind::DualPipe;
        pl.microBatches = 4;
        pl.chunks.assign(4, PipelineChunk{});
        for (PipelineChunk& c : pl.chunks) c.forwardSeconds = c.inputGradSeconds = c.weightGradSeconds = 1;
        // DualPipe replays from the plan: each rank runs its two copies' stages for half of the
        // micro-batches each, 2 × 2 × 3 s; its split is the model's two chunks.
        const PipeReplay dual = must(replayPipeline(pl), "dualpipe replay");
        QCOMPARE(dual.busySeconds[0], 2 * 2 * 3.0);
        QCOMPARE(dual.busySeconds[1], 2 * 2 * 3.0);
        QCOMPARE(chunkLayers(pl).size(), size_t{2});
        // A V replays from the plan: the first and the last chunk on rank 0.
        pl.schedule = PipeScheduleKind::ZeroBubbleV;
        const PipeReplay v = must(replayPipeline(pl), "zb-v replay");
        QCOMPARE(v.busySeconds.size(), size_t{2});
        QCOMPARE(v.busySeconds[0], v.busySeconds[1]);  // two chunks each, 4 micro-batches × 3 s
        QCOMPARE(v.busySeconds[0], 2 * 4 * 3.0);
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

    // The schedule optimiser on tiny pipelines against brute force over every per-rank order (not
    // only first-in-first-out ones, which the MIP assumes): looped with 2 and 3 ranks, bidirectional
    // with 2, uneven times, transfers and memory limits; there the generated and greedy warm starts
    // are already optimal and the MIP proves it. With three micro-batches on three ranks under a
    // limit of 2 they are not: the MIP finds the optimum of brute force over first-in-first-out
    // orders (21 per rank).
    void mipMatchesBruteForce() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        struct Case {
            PipePlacement placement;
            int32_t p, m;
            StageTimes t;
            double transfer;
            int32_t limit;
        };
        const Case cases[] = {
            {PipePlacement::Looped, 2, 2, {1, 1, 1}, 0, 1},      {PipePlacement::Looped, 2, 2, {1, 2, 1}, 1, 2},
            {PipePlacement::Looped, 3, 2, {1, 1, 1}, 0, 1},      {PipePlacement::Looped, 3, 2, {2, 1, 3}, 1, 2},
            {PipePlacement::Looped, 3, 2, {1, 3, 1}, 0, 2},      {PipePlacement::Bidirectional, 2, 2, {1, 1, 1}, 0, 1},
            {PipePlacement::Bidirectional, 2, 2, {1, 2, 2}, 1, 2},
        };
        for (const Case& c : cases) {
            const int32_t v = c.placement == PipePlacement::Looped ? 1 : 2;
            const QString what = QString("%1 p=%2 m=%3 F=%4 I=%5 W=%6 transfer %7 limit %8")
                                     .arg(QString::fromStdString(std::string(pipePlacementName(c.placement))))
                                     .arg(c.p).arg(c.m).arg(c.t.forward).arg(c.t.inputGrad).arg(c.t.weightGrad).arg(c.transfer).arg(c.limit);
            const PipeMipResult r = must(optimizePipeSchedule(mipRequest(c.placement, c.p, v, c.m, c.t, c.transfer, c.limit), quick()), "mip");
            checkMipResult(r, what);
            QVERIFY2(r.status == PipeMipStatus::Optimal, qPrintable(what));
            const double best = bruteForceMakespan(c.placement, c.p, v, c.m, c.t, c.transfer, c.limit);
            QVERIFY2(close(r.replay.seconds, best), qPrintable(what + QString(": mip %1, brute force %2").arg(r.replay.seconds).arg(best)));
        }
        for (const StageTimes t : {StageTimes{1, 1, 1}, StageTimes{1, 3, 1}}) {
            const PipeMipResult r = must(optimizePipeSchedule(mipRequest(PipePlacement::Looped, 3, 1, 3, t, 1, 2), quick()), "mip");
            checkMipResult(r, "looped p=3 m=3");
            QVERIFY(r.improved);
            QCOMPARE(r.status, PipeMipStatus::Optimal);
            const double best = bruteForceMakespan(PipePlacement::Looped, 3, 1, 3, t, 1, 2, true);
            QVERIFY2(close(r.replay.seconds, best), qPrintable(QString("mip %1, brute force %2").arg(r.replay.seconds).arg(best)));
            QVERIFY(close(r.replay.seconds, r.mipMakespanSeconds));
        }
    }

    // Where the warm start is not optimal — tight memory limits, uneven times, transfers — the MIP
    // improves on it or proves it optimal, and its schedule replays to the MIP's own makespan (an
    // exact grid: whole seconds, halves).
    void mipImprovesOnItsWarmStart() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        struct Case {
            PipePlacement placement;
            int32_t p, v, m;
            StageTimes t;
            double transfer;
            std::optional<int32_t> limit;
        };
        const Case cases[] = {
            {PipePlacement::Looped, 3, 1, 4, {1, 2, 1}, 0.5, 2},
            {PipePlacement::Looped, 3, 1, 4, {2, 1, 3}, 1, 3},
            {PipePlacement::VShape, 2, 2, 3, {0.5, 0.5, 0.5}, 1, 2},
            {PipePlacement::VShape, 2, 2, 3, {1, 2, 1}, 0, 3},
        };
        int improved = 0;
        for (const Case& c : cases) {
            const QString what = QString("%1 p=%2 m=%3").arg(QString::fromStdString(std::string(pipePlacementName(c.placement)))).arg(c.p).arg(c.m);
            const PipeMipResult r = must(optimizePipeSchedule(mipRequest(c.placement, c.p, c.v, c.m, c.t, c.transfer, c.limit), quick()), "mip");
            checkMipResult(r, what);
            QVERIFY2(r.exactGrid, qPrintable(what));
            if (c.limit) QCOMPARE(r.memoryLimit, *c.limit);
            improved += r.improved ? 1 : 0;
            QVERIFY2(r.replay.seconds < r.warmStartSeconds || r.status == PipeMipStatus::Optimal, qPrintable(what));
        }
        QVERIFY(improved >= 3);
        // With a memory weight the objective is the step + weight × the largest peak: ZB-H1 (P in
        // flight) beats ZB-H2 (2P − 1) at a quarter second per activation.
        PipeMipRequest weighted = mipRequest(PipePlacement::Looped, 3, 1, 4, {1, 1, 1});
        weighted.memoryWeightSeconds = 0.25;
        const PipeMipResult w = must(optimizePipeSchedule(weighted, quick()), "weighted");
        checkMipResult(w, "weighted");
        const int32_t peak = *std::max_element(w.replay.peakInFlight.begin(), w.replay.peakInFlight.end());
        QVERIFY(close(w.objectiveSeconds, w.replay.seconds + 0.25 * peak));
        QCOMPARE(w.warmStart, std::string("zb-h1"));
        QVERIFY(w.objectiveSeconds <= 14 + 0.25 * 3 + 1e-9);
        QCOMPARE(w.status, PipeMipStatus::Optimal);
    }

    // With F = I = W the zero-bubble lower bound — rank P − 1 starts after P − 1 forwards and then
    // works without a gap — is met by ZB-V (v) and ZB-H2 (looped): the MIP returns it as proven
    // optimal without running CBC, with half of DualPipeV's bubble at DualPipeV's memory.
    void mipMeetsTheZeroBubbleBound() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        const double f = 0.5;
        const int32_t p = 4, m = 8;
        const PipeMipResult v = must(optimizePipeSchedule(mipRequest(PipePlacement::VShape, p, 2, m, {f, f, f}), quick()), "mip v");
        checkMipResult(v, "v");
        QCOMPARE(v.status, PipeMipStatus::Optimal);
        QCOMPARE(v.memoryLimitFrom, std::string("dualpipe-v"));
        QCOMPARE(v.memoryLimit, 2 * p + 1);
        QCOMPARE(v.warmStart, std::string("zb-v"));
        QVERIFY(!v.solverRan);
        QVERIFY(close(v.replay.seconds, (p - 1) * f + 6 * m * f));
        QVERIFY(close(v.boundSeconds, v.replay.seconds));
        const PipeReplay dual = replay(PipeScheduleKind::DualPipeV, p, 2, m, {f, f, f});
        QVERIFY(close(v.replay.bubbleSeconds(), 0.5 * dual.bubbleSeconds()));
        const PipeMipResult looped = must(optimizePipeSchedule(mipRequest(PipePlacement::Looped, p, 1, m, {1, 1, 1}), quick()), "mip looped");
        checkMipResult(looped, "looped");
        QCOMPARE(looped.status, PipeMipStatus::Optimal);
        // ZB-H2 meets the bound; of the warm starts as fast, the one that holds the fewest stages.
        const PipeReplay h2 = replay(PipeScheduleKind::ZeroBubbleH2, p, 1, m, {1, 1, 1});
        QVERIFY(close(looped.replay.seconds, h2.seconds));
        QVERIFY(looped.warmStartPeak <= *std::max_element(h2.peakInFlight.begin(), h2.peakInFlight.end()));
        QVERIFY(close(looped.replay.seconds, (p - 1) + 3.0 * m));
    }

    // Every memory limit from the smallest possible up keeps the replay's peak within it; a larger
    // limit never makes the proven optimum slower; below the smallest, a clear error.
    void mipKeepsToTheMemoryLimit() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        const int32_t p = 3, m = 3;
        QCOMPARE(minimumPipeMemoryLimit(PipePlacement::VShape, p, 2), 2);
        QCOMPARE(minimumPipeMemoryLimit(PipePlacement::Looped, p, 1), 1);
        QCOMPARE(minimumPipeMemoryLimit(PipePlacement::Looped, p, 3), 3);
        QCOMPARE(minimumPipeMemoryLimit(PipePlacement::Bidirectional, 4, 2), 1);
        double previous = std::numeric_limits<double>::infinity();
        for (int32_t limit = 2; limit <= 2 * p + 1; ++limit) {
            const PipeMipResult r = must(optimizePipeSchedule(mipRequest(PipePlacement::VShape, p, 2, m, {1, 1, 1}, 0, limit), quick()), "mip");
            checkMipResult(r, QString("limit %1").arg(limit));
            if (r.status == PipeMipStatus::Optimal) {
                QVERIFY(r.replay.seconds <= previous + 1e-9);
                previous = r.replay.seconds;
            }
        }
        auto tight = optimizePipeSchedule(mipRequest(PipePlacement::VShape, p, 2, m, {1, 1, 1}, 0, 1), quick());
        QVERIFY(!tight);
        QCOMPARE(QString::fromStdString(tight.error().code), QString("schedule.memory_limit"));
        QVERIFY(QString::fromStdString(tight.error().message).contains("holds 2 stages"));
        auto zero = optimizePipeSchedule(mipRequest(PipePlacement::Looped, p, 1, m, {1, 1, 0}), quick());
        QVERIFY(!zero);
        QCOMPARE(QString::fromStdString(zero.error().code), QString("schedule.shape"));
        QVERIFY(!optimizePipeSchedule(mipRequest(PipePlacement::Bidirectional, 2, 2, 3, {1, 1, 1}), quick()));  // M odd
        QVERIFY(!makeSchedule(PipeScheduleKind::Mip, 2, 1, 4));
        QCOMPARE(must(parsePipeScheduleKind("mip"), "mip"), PipeScheduleKind::Mip);
    }

    // Cancelled before it starts: the warm start comes back, marked cancelled. Cancelled while CBC
    // runs (its child process killed), or given a second on a model it cannot close in one: back
    // within about the grace period, with a valid schedule at least as good as the warm start.
    void mipHonoursCancelAndTimeLimit() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        std::atomic<bool> cancel{true};
        PipeMipOptions o = quick();
        o.cancel = &cancel;
        const PipeMipRequest hard = mipRequest(PipePlacement::VShape, 6, 2, 12, {1, 1, 1}, 0, 8);
        const PipeMipResult before = must(optimizePipeSchedule(hard, o), "mip");
        QCOMPARE(before.status, PipeMipStatus::Cancelled);
        QVERIFY(!before.solverRan);
        checkMipResult(before, "cancelled before");
        cancel = false;
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancel = true;
        });
        const PipeMipResult during = must(optimizePipeSchedule(hard, o), "mip");
        stopper.join();
        checkMipResult(during, "cancelled during");
        QVERIFY2(during.status == PipeMipStatus::Cancelled || during.status == PipeMipStatus::Optimal, pipeMipStatusName(during.status));
        QVERIFY2(during.solveSeconds < 3, qPrintable(QString::number(during.solveSeconds)));
        PipeMipOptions brief;
        brief.timeLimitSeconds = 1;
        const PipeMipResult limited = must(optimizePipeSchedule(hard, brief), "mip");
        checkMipResult(limited, "one second");
        QVERIFY2(limited.solveSeconds < 3.5, qPrintable(QString::number(limited.solveSeconds)));
    }

    void shapesAreChecked() {
        QVERIFY(!makeSchedule(PipeScheduleKind::Interleaved, 4, 2, 6));   // M not a multiple of P
        QVERIFY(!makeSchedule(PipeScheduleKind::Interleaved, 4, 1, 8));   // one chunk
        QVERIFY(!makeSchedule(PipeScheduleKind::OneFOneB, 4, 2, 8));      // chunks on 1F1B
        QVERIFY(!makeSchedule(PipeScheduleKind::OneFOneB, 0, 1, 8));
        QVERIFY(!makeSchedule(PipeScheduleKind::ZeroBubbleH2, 4, 2, 8));  // chunks on zb-h2
        QVERIFY(!makeSchedule(PipeScheduleKind::ZeroBubbleV, 4, 1, 8));   // V needs 2 chunks
        QVERIFY(!makeSchedule(PipeScheduleKind::DualPipeV, 4, 3, 8));
        QVERIFY(!makeSchedule(PipeScheduleKind::DualPipeV, 4, 2, 7));     // M < 2P
        QVERIFY(!makeSchedule(PipeScheduleKind::DualPipe, 3, 2, 12));     // P odd
        QVERIFY(!makeSchedule(PipeScheduleKind::DualPipe, 4, 2, 9));      // M odd
        QVERIFY(!makeSchedule(PipeScheduleKind::DualPipe, 4, 2, 6));      // M < 2P
        QVERIFY(makeSchedule(PipeScheduleKind::DualPipe, 4, 2, 8));
        for (const char* name : {"zb-h2", "zb-v", "dualpipe-v", "dualpipe"})
            QCOMPARE(QString::fromStdString(std::string(pipeScheduleName(must(parsePipeScheduleKind(name), name)))), QString(name));
        QVERIFY(!parsePipeScheduleKind("chimera"));
        QVERIFY(!parsePipeScheduleKind("custom"));
        QCOMPARE(must(parsePipeScheduleKind("interleaved-1f1b"), "kind"), PipeScheduleKind::Interleaved);
        auto s = must(makeSchedule(PipeScheduleKind::OneFOneB, 2, 1, 2), "schedule");
        QVERIFY(!replaySchedule(s, {StageTimes{}, StageTimes{}, StageTimes{}}, 0));
    }
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
