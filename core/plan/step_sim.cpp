#include "plan/step_sim.h"

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

#include "cost/op_cost.h"

namespace cfp {

namespace {

// One step of a coalesced collective: its axis and kind, the bucket's bytes.
struct BucketStep {
    int axis = -1;
    CollectiveKind kind = CollectiveKind::AllReduce;
    int64_t bytes = 0;
    bool operator==(const BucketStep& o) const { return axis == o.axis && kind == o.kind; }
};

// The collective steps of one op (a gradient's reduction or a weight's gather), in order.
using Chain = std::vector<BucketStep>;

bool sameShape(const Chain& a, const Chain& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i])) return false;
    return true;
}

// A bucket being filled: the steps' shape and summed bytes.
struct Bucket {
    Chain steps;
    int64_t members = 0;
    size_t lastTask = 0;
    bool empty() const { return steps.empty(); }
    void add(const Chain& c) {
        ++members;
        if (steps.empty()) {
            steps = c;
            return;
        }
        for (size_t i = 0; i < c.size(); ++i) steps[i].bytes += c[i].bytes;
    }
    int64_t bytes() const { return steps.empty() ? 0 : steps.front().bytes; }
};

class Simulator {
public:
    Simulator(const CostModel& model, const MemoryPolicy& policy) : m_model(model) {
        m_bucketLimit = policy.bucketBytes > 0 ? policy.bucketBytes : kDefaultBucketBytes;
        m_slowdown = model.hardware().overlapSlowdown;
    }

    // Placements are recorded while `record` is set (the rounds the timeline shows).
    std::vector<SimPlacement>* placed = nullptr;
    bool record = false;
    int64_t round = 0;
    void place(SimPlacement p) {
        if (placed && record) {
            p.round = round;
            placed->push_back(p);
        }
    }

    // Runs `steps` one after another from `ready`, each on its channel when the channel is free;
    // returns the last one's end. Overlapped (async) when `async`. `what` is the placement's
    // kind, members and task.
    double issue(const Chain& steps, double ready, bool async, SimPlacement what = {}) {
        double t = ready;
        for (const BucketStep& s : steps) {
            const double d = m_model.collectiveSeconds(s.kind, static_cast<size_t>(s.axis), s.bytes);
            double& free = m_channelFree[channelOf(s.axis)];
            const double start = std::max(t, free);
            t = start + d;
            free = t;
            SimPlacement p = what;
            p.start = start;
            p.seconds = d;
            p.axis = s.axis;
            p.collective = s.kind;
            p.bytes = s.bytes;
            p.overlapped = async;
            place(p);
            if (async && d > 0) {
                m_inFlight[channelOf(s.axis)].emplace_back(start, t);
                m_asyncSeconds += d;
            }
        }
        return t;
    }

    // A kernel of `seconds` on the compute stream, not before `ready`; contention with the
    // overlapped communication in flight meanwhile.
    void compute(double seconds, double ready = 0, size_t task = 0) {
        const double start = std::max(m_now, ready);
        m_waitSeconds += start - m_now;
        double overlap = 0;
        for (auto& [channel, flights] : m_inFlight) {
            // A channel runs its collectives one after another: they end in issue order.
            while (!flights.empty() && flights.front().second <= start) flights.pop_front();
            for (const auto& [s, e] : flights) {
                if (s >= start + seconds) break;
                overlap += std::max(0.0, std::min(e, start + seconds) - std::max(s, start));
            }
        }
        const double slowed = m_slowdown * overlap;
        m_contention += slowed;
        m_computeSeconds += seconds;
        m_now = start + seconds + slowed;
        place({SimPlacement::Kind::Task, task, 0, 0, start, seconds + slowed});
    }

    // A GEMM with tensor-parallel communication run beside it in chunks (--tp-comm-overlap): the
    // kernel, then what of the communication outlasts it; the hidden part slows the kernel by the
    // contention factor.
    void computeBeside(double seconds, const std::vector<std::pair<size_t, double>>& comms, double ready, size_t task) {
        double at = std::max(m_now, ready), comm = 0;
        for (const auto& [t, d] : comms) {
            SimPlacement p{SimPlacement::Kind::Task, t, 0, 0, at, d};
            p.overlapped = true;
            place(p);
            at += d;
            comm += d;
        }
        compute(seconds, ready, task);
        if (comm <= 0) return;
        const double hidden = std::min(seconds, comm), slowed = m_slowdown * hidden;
        m_contention += slowed;
        m_asyncSeconds += hidden;
        m_now += slowed + (comm - hidden);
    }

    bool intraNode(int axis) const { return axis >= 0 && channelOf(axis) == 0; }

    void block(double seconds, size_t task = 0) {
        place({SimPlacement::Kind::Task, task, 0, 0, m_now, seconds});
        m_now += seconds;
    }

    void waitUntil(double t) {
        if (t > m_now) {
            m_waitSeconds += t - m_now;
            m_now = t;
        }
    }

    double now() const { return m_now; }
    int64_t bucketLimit() const { return m_bucketLimit; }

    StepSimulation finish(int64_t buckets, int64_t gathers) {
        StepSimulation s;
        double end = m_now;
        for (const auto& [ch, free] : m_channelFree) end = std::max(end, free);
        s.seconds = end;
        s.computeSeconds = m_computeSeconds;
        s.contentionSeconds = m_contention;
        s.exposedCommSeconds = std::max(0.0, end - m_computeSeconds - m_contention);
        s.overlappedCommSeconds = std::max(0.0, m_asyncSeconds - (m_waitSeconds + (end - m_now)));
        s.gradientBuckets = buckets;
        s.gatherCollectives = gathers;
        return s;
    }

private:
    int channelOf(int axis) const { return intraNodeAxis(m_model, static_cast<size_t>(axis)) ? 0 : 1; }
    const CostModel& m_model;
    int64_t m_bucketLimit = kDefaultBucketBytes;
    double m_slowdown = 0;
    double m_now = 0;
    std::map<int, double> m_channelFree;
    std::map<int, std::deque<std::pair<double, double>>> m_inFlight;  // overlapped collectives per channel, by start
    double m_computeSeconds = 0, m_waitSeconds = 0, m_contention = 0, m_asyncSeconds = 0;
};

// Weight gathers grouped into collectives: per phase (forward, backward), units in first-use order,
// each a bucket of weights (its steps coalesced; `waitAt` below says which kernels wait for it).
using GatherUnit = Bucket;

}  // namespace

StepSimulation simulateStep(const Graph& graph, const std::vector<SimTask>& tasks, const CostModel& model, const MemoryPolicy& policy,
                            std::vector<SimPlacement>* placed) {
    Simulator sim(model, policy);
    sim.placed = placed;
    auto gatherOfUnit = [](const GatherUnit& u) { return SimPlacement{SimPlacement::Kind::Gather, 0, u.members}; };
    const int64_t rounds = std::max<int64_t>(1, policy.accumulation);
    const int zero = zeroStageOf(policy);
    const bool fsdp = zero >= 3;

    // The round's tasks (forward and backward, in order), the step's once tasks after the rounds
    // (optimizer), the gradient chains per op, the weight gathers per parameter.
    std::vector<size_t> roundTasks, afterTasks;
    std::map<OpId, Chain> gatherOf;
    std::vector<OpId> gatherOrder;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const SimTask& t = tasks[i];
        if (t.kind == SimTaskKind::WeightGather) {
            auto [it, inserted] = gatherOf.try_emplace(t.op);
            if (inserted) gatherOrder.push_back(t.op);
            it->second.push_back({t.axis, t.collective, t.bytes});
            continue;
        }
        const Phase ph = graph.op(t.op).phase;
        if (ph == Phase::Optimizer) afterTasks.push_back(i);
        else roundTasks.push_back(i);
    }

    // Weight gathers: which parameters each kernel reads directly, and the units.
    std::vector<std::vector<OpId>> paramsRead(gatherOf.empty() ? 0 : tasks.size());
    if (!gatherOf.empty()) {
        for (size_t idx : roundTasks) {
            const SimTask& t = tasks[idx];
            if (t.kind != SimTaskKind::Compute) continue;
            for (OpId o : graph.op(t.op).operands)
                if (gatherOf.count(o)) paramsRead[idx].push_back(o);
        }
    }
    // Units per phase: FSDP groups a layer's weights (the layer of the first kernel reading them);
    // ZeRO-1/2 fill buckets in first-use order.
    const std::vector<int32_t> layer = fsdp ? layerUnits(graph) : std::vector<int32_t>{};
    auto buildUnits = [&](Phase phase, std::vector<GatherUnit>& units, std::map<size_t, std::vector<size_t>>& waitAt) {
        std::vector<char> seen(static_cast<size_t>(graph.size()), 0);
        int32_t openLayer = INT32_MIN;
        for (size_t pos = 0; pos < roundTasks.size(); ++pos) {
            const size_t idx = roundTasks[pos];
            if (graph.op(tasks[idx].op).phase != phase) continue;
            for (OpId p : paramsRead[idx]) {
                if (seen[static_cast<size_t>(p)]) continue;
                seen[static_cast<size_t>(p)] = 1;
                const Chain& c = gatherOf.at(p);
                const int32_t unitKey = fsdp ? layer[static_cast<size_t>(tasks[idx].op)] : 0;
                const bool startNew = units.empty() || !sameShape(units.back().steps, c) ||
                                      (fsdp ? unitKey != openLayer : units.back().steps.front().bytes >= sim.bucketLimit());
                if (startNew) {
                    units.emplace_back();
                    openLayer = unitKey;
                }
                units.back().add(c);
                waitAt[pos].push_back(units.size() - 1);
            }
        }
        // Weights no kernel of this phase reads directly: one more unit, waited for by none.
        Bucket rest;
        for (OpId p : gatherOrder)
            if (!seen[static_cast<size_t>(p)] && (phase == Phase::Forward || fsdp)) {
                if (!rest.empty() && !sameShape(rest.steps, gatherOf.at(p))) {
                    units.push_back(rest);
                    rest = {};
                }
                rest.add(gatherOf.at(p));
            }
        if (!rest.empty()) units.push_back(rest);
    };
    std::vector<GatherUnit> fwdUnits, bwdUnits;
    std::map<size_t, std::vector<size_t>> fwdWait, bwdWait;  // round position → units to wait for
    if (!gatherOf.empty()) {
        buildUnits(Phase::Forward, fwdUnits, fwdWait);
        if (fsdp) buildUnits(Phase::Backward, bwdUnits, bwdWait);
    }
    // A unit's gather is priced on its bytes (one latency term per unit): FSDP runs each twice per
    // round (forward, backward), ZeRO-1/2 once per step (the evaluator's weightGatherRepeats).
    int64_t gathers = 0;

    int64_t buckets = 0;
    double gradDone = 0;
    // ZeRO-1/2 with overlap: the previous update's gathers run under this step's forward, issued
    // at its start in first-use order.
    std::vector<double> fwdGatherEnd(fwdUnits.size(), 0.0);
    if (!fsdp && !fwdUnits.empty() && policy.overlapParamGather) {
        sim.record = true;
        for (size_t u = 0; u < fwdUnits.size(); ++u) fwdGatherEnd[u] = sim.issue(fwdUnits[u].steps, 0.0, true, gatherOfUnit(fwdUnits[u]));
        gathers += static_cast<int64_t>(fwdUnits.size());
    }

    double firstRoundEnd = 0;
    for (int64_t r = 0; r < rounds; ++r) {
        const bool last = r == rounds - 1;
        sim.round = r;
        sim.record = r == 0 || last;
        if (last && rounds > 2 && placed)  // the rounds between, folded
            placed->push_back({SimPlacement::Kind::Rounds, 0, rounds - 2, 1, firstRoundEnd, sim.now() - firstRoundEnd});
        Bucket open;
        std::vector<Bucket> deferred;  // without overlap: run after the backward
        auto launch = [&](Bucket& b) {
            if (b.empty()) return;
            ++buckets;
            if (policy.overlapGradReduce)
                gradDone = std::max(gradDone, sim.issue(b.steps, sim.now(), true, {SimPlacement::Kind::Bucket, b.lastTask, b.members}));
            else deferred.push_back(b);
            b = {};
        };
        // FSDP: this round's gathers, per phase, prefetched one unit ahead with overlap.
        std::vector<double> fEnd(fwdUnits.size(), -1.0), bEnd(bwdUnits.size(), -1.0);
        size_t fNext = 0, bNext = 0;
        auto issueUnit = [&](std::vector<GatherUnit>& units, std::vector<double>& ends, size_t& next) {
            if (next >= units.size()) return;
            ends[next] = sim.issue(units[next].steps, sim.now(), policy.overlapParamGather, gatherOfUnit(units[next]));
            ++gathers;
            ++next;
        };
        bool inBackward = false;
        // Communication waiting for the next kernel to run beside it (SimTask::beside).
        std::vector<std::pair<size_t, double>> pendingTp;  // (task, seconds)
        if (fsdp && policy.overlapParamGather) issueUnit(fwdUnits, fEnd, fNext);
        OpId gradOp = kNoOp;
        size_t gradTask = 0;
        Chain gradChain;
        auto closeGrad = [&]() {
            if (gradOp == kNoOp) return;
            if (!open.empty() && !sameShape(open.steps, gradChain)) launch(open);
            open.add(gradChain);
            open.lastTask = gradTask;
            if (open.bytes() >= sim.bucketLimit()) launch(open);
            gradOp = kNoOp;
            gradChain.clear();
        };
        for (size_t pos = 0; pos < roundTasks.size(); ++pos) {
            const SimTask& t = tasks[roundTasks[pos]];
            const Phase ph = graph.op(t.op).phase;
            if (ph == Phase::Backward && !inBackward) {
                inBackward = true;
                if (fsdp) {
                    // Forward gathers nobody waited for still run; then the backward's.
                    while (fNext < fwdUnits.size()) issueUnit(fwdUnits, fEnd, fNext);
                    if (policy.overlapParamGather) issueUnit(bwdUnits, bEnd, bNext);
                }
            }
            if (t.kind != SimTaskKind::GradReduce) closeGrad();
            switch (t.kind) {
                case SimTaskKind::Compute: {
                    double ready = 0;
                    if (ph == Phase::Forward) {
                        auto it = fwdWait.find(pos);
                        if (it != fwdWait.end())
                            for (size_t u : it->second) {
                                if (fsdp) {
                                    while (fNext <= u) issueUnit(fwdUnits, fEnd, fNext);
                                    ready = std::max(ready, fEnd[u]);
                                    if (policy.overlapParamGather) issueUnit(fwdUnits, fEnd, fNext);  // prefetch the next
                                } else if (r == 0 && policy.overlapParamGather) {
                                    ready = std::max(ready, fwdGatherEnd[u]);
                                }
                            }
                    } else if (fsdp) {
                        auto it = bwdWait.find(pos);
                        if (it != bwdWait.end())
                            for (size_t u : it->second) {
                                while (bNext <= u) issueUnit(bwdUnits, bEnd, bNext);
                                ready = std::max(ready, bEnd[u]);
                                if (policy.overlapParamGather) issueUnit(bwdUnits, bEnd, bNext);
                            }
                    }
                    // The kernel's own collectives that run beside it (after a row-parallel GEMM;
                    // an attention matmul's gradient passed on around the context ring).
                    const size_t kernelTask = roundTasks[pos];
                    while (pos + 1 < roundTasks.size()) {
                        const SimTask& n = tasks[roundTasks[pos + 1]];
                        if (n.kind != SimTaskKind::Blocking || n.reshard || n.op != t.op || !n.beside) break;
                        pendingTp.emplace_back(roundTasks[pos + 1], n.seconds);
                        ++pos;
                    }
                    sim.computeBeside(t.seconds, pendingTp, ready, kernelTask);
                    pendingTp.clear();
                    break;
                }
                case SimTaskKind::Blocking:
                    // Into a kernel it runs beside (the all-gather of a column-parallel layer's
                    // input, keys and values around the context ring): beside it.
                    if (t.reshard && t.beside) {
                        pendingTp.emplace_back(roundTasks[pos], t.seconds);
                        break;
                    }
                    sim.block(t.seconds, roundTasks[pos]);
                    break;
                case SimTaskKind::GradReduce:
                    if (!t.perRound && !last) break;
                    if (t.op != gradOp) closeGrad();
                    gradOp = t.op;
                    gradTask = roundTasks[pos];
                    gradChain.push_back({t.axis, t.collective, t.bytes});
                    break;
                case SimTaskKind::WeightGather: break;
            }
        }
        closeGrad();
        launch(open);
        if (fsdp) {
            while (fNext < fwdUnits.size()) issueUnit(fwdUnits, fEnd, fNext);
            while (bNext < bwdUnits.size()) issueUnit(bwdUnits, bEnd, bNext);
        }
        // Without overlap: the round's buckets after its backward, on the critical path.
        for (Bucket& b : deferred) sim.waitUntil(sim.issue(b.steps, sim.now(), false, {SimPlacement::Kind::Bucket, b.lastTask, b.members}));
        if (r == 0) firstRoundEnd = sim.now();
    }
    sim.round = rounds;
    sim.record = true;
    // The optimizer waits for every gradient.
    sim.waitUntil(gradDone);
    for (size_t idx : afterTasks) {
        const SimTask& t = tasks[idx];
        if (t.kind == SimTaskKind::Compute) sim.compute(t.seconds, 0, idx);
        else if (t.kind == SimTaskKind::Blocking) sim.block(t.seconds, idx);
    }
    // ZeRO-1/2 without overlap: the updated weights' gathers close the step.
    if (!fsdp && !fwdUnits.empty() && !policy.overlapParamGather) {
        for (const GatherUnit& u : fwdUnits) sim.waitUntil(sim.issue(u.steps, sim.now(), false, gatherOfUnit(u)));
        gathers += static_cast<int64_t>(fwdUnits.size());
    }
    return sim.finish(buckets, gathers);
}

}  // namespace cfp
