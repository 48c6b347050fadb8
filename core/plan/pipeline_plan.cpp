#include "plan/pipeline_plan.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cost/op_cost.h"
#include "io/atomic_file.h"
#include "plan/evaluator.h"

namespace cfp {

namespace {

Error splitError(const std::string& message) { return makeError("pipeline.split", message, "--config"); }

// A generated schedule's placement is its kind's; stored actions carry theirs.
PipePlacement placementOf(PipeScheduleKind kind, const std::vector<std::vector<PipeAction>>& actions, PipePlacement given) {
    return actions.empty() ? pipeSchedulePlacement(kind) : given;
}

// Chunks, memory and tails below place chunk c on the ranks the schedule runs it on (looped: c mod
// pp; zb-v and dualpipe-v: down the ranks and back up; dualpipe: c and pp − 1 − c,
// PipeSchedule::rankOf); parsePlannedScheduleKind says which schedules the planner prices.
Status checkPriced(PipeScheduleKind kind) {
    if (plannerPricesSchedule(kind)) return {};
    return parsePlannedScheduleKind(pipeScheduleName(kind)).error().withContext("--config");
}

// The schedule of a pipeline of `pp` ranks, `v` chunks each and `m` micro-batches: `actions`
// (custom, mip) checked as a schedule of that shape, or the kind's generated.
Result<PipeSchedule> scheduleFor(PipeScheduleKind kind, PipePlacement placement, const std::vector<std::vector<PipeAction>>& actions, int32_t pp,
                                 int32_t v, int32_t m) {
    CFP_TRY(checkPriced(kind));
    if (actions.empty()) {
        if (kind == PipeScheduleKind::Custom || kind == PipeScheduleKind::Mip)
            return makeError("schedule.shape", "a " + std::string(pipeScheduleName(kind)) + " schedule needs its actions", "--schedule");
        return makeSchedule(kind, pp, v, m);
    }
    if (placement == PipePlacement::Bidirectional)
        return makeError("schedule.unsupported", "a bidirectional schedule holds two copies of the parameters (DualPipe's): cfp schedule replays it",
                         "--schedule");
    auto checked = scheduleFromCsv(pipeActionsCsv(actions), pp, v, placement);
    if (!checked) return checked.error();
    if (checked->microBatches != m)
        return makeError("schedule.shape",
                         "the schedule runs " + std::to_string(checked->microBatches) + " micro-batches; the plan's step runs " + std::to_string(m) +
                             " (its gradient-accumulation rounds)",
                         "--schedule");
    checked->kind = kind;
    return checked;
}

}  // namespace

Status applyPipeline(const Graph& graph, Plan& plan, const Evaluation& ev, const CostModel& model, const PipelineSettings& settings) {
    const int32_t pp = settings.stages, v = settings.chunksPerRank, stages = pp * v;
    CFP_TRY(checkPriced(settings.schedule));
    // The layer chain is cut into `chunks` model chunks; DualPipe's 2P stages run two copies of P.
    const PipePlacement placement = placementOf(settings.schedule, settings.actions, settings.placement);
    const bool twoCopies = placement == PipePlacement::Bidirectional;
    const int32_t chunks = pipeModelChunks(placement, pp, v);
    const size_t n = static_cast<size_t>(graph.size());
    if (ev.tasks.empty() || ev.opMemory.size() != n) return makeError("pipeline.split", "the evaluation has no tasks for this graph");
    const std::vector<int32_t> layer = layerUnits(graph);
    const int32_t layers = layerCount(layer);
    if (layers == 0) return splitError("the model has no layers (scopes such as layers.N) to cut into pipeline stages");
    std::vector<int32_t> split = settings.chunkLayers;
    if (split.empty()) {
        if (layers % chunks != 0)
            return splitError(std::to_string(layers) + " layers do not split evenly into " +
                              (twoCopies ? "pp = " + std::to_string(pp) : "pp × vp = " + std::to_string(pp) + " × " + std::to_string(v)) + " chunks");
        split.assign(static_cast<size_t>(chunks), layers / chunks);
    }
    if (auto ok = checkSplit(split, chunks, layers); !ok) return ok.error().withContext("--config");
    // The chunk of every layer.
    std::vector<int32_t> chunkOfLayer;
    for (int32_t c = 0; c < chunks; ++c) chunkOfLayer.insert(chunkOfLayer.end(), static_cast<size_t>(split[static_cast<size_t>(c)]), c);

    // The chunk of every op; parameters and data inputs in every chunk that reads them.
    OpId firstForward = kNoOp, firstBackward = kNoOp;
    for (const Op& op : graph.ops()) {
        if (layer[static_cast<size_t>(op.id)] < 0 || op.kind == OpKind::Parameter) continue;
        if (op.phase == Phase::Forward && firstForward == kNoOp) firstForward = op.id;
        if (op.phase == Phase::Backward && firstBackward == kNoOp) firstBackward = op.id;
    }
    std::vector<int32_t> chunkOf(n, -1);
    std::vector<std::vector<int32_t>> sourceChunks(n);  // parameters: every chunk that reads them
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (op.kind == OpKind::Parameter) continue;
        if (layer[k] >= 0) chunkOf[k] = chunkOfLayer[static_cast<size_t>(layer[k])];
        else if (op.phase == Phase::Forward) chunkOf[k] = op.id < firstForward ? 0 : chunks - 1;
        else if (op.phase == Phase::Backward) chunkOf[k] = firstBackward != kNoOp && op.id < firstBackward ? chunks - 1 : 0;
        else {
            // An optimizer op: the chunk of the first operand that has one (its parameter's).
            chunkOf[k] = chunks - 1;
            for (OpId o : op.operands) {
                const auto ko = static_cast<size_t>(o);
                const int32_t c = graph.op(o).kind == OpKind::Parameter ? (sourceChunks[ko].empty() ? -1 : sourceChunks[ko].front()) : chunkOf[ko];
                if (c >= 0) {
                    chunkOf[k] = c;
                    break;
                }
            }
        }
        if (op.phase == Phase::Optimizer) continue;
        for (OpId o : op.operands) {
            const auto ko = static_cast<size_t>(o);
            if (graph.op(o).kind != OpKind::Parameter) continue;
            auto& list = sourceChunks[ko];
            const int32_t c = layer[ko] >= 0 ? chunkOfLayer[static_cast<size_t>(layer[ko])] : chunkOf[k];
            if (std::find(list.begin(), list.end(), c) == list.end()) list.push_back(c);
        }
    }
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Parameter && sourceChunks[static_cast<size_t>(op.id)].empty())
            sourceChunks[static_cast<size_t>(op.id)].push_back(layer[static_cast<size_t>(op.id)] >= 0 ? chunkOfLayer[static_cast<size_t>(layer[static_cast<size_t>(op.id)])] : chunks - 1);
    auto chunksOf = [&](OpId op) -> std::vector<int32_t> {
        const auto k = static_cast<size_t>(op);
        return graph.op(op).kind == OpKind::Parameter ? sourceChunks[k] : std::vector<int32_t>{chunkOf[k]};
    };

    // The schedule (its placement: the rank of every stage).
    const int32_t microBatches = static_cast<int32_t>(std::max<int64_t>(1, plan.policy.accumulation));
    auto schedule = scheduleFor(settings.schedule, settings.placement, settings.actions, pp, v, microBatches);
    if (!schedule) return schedule.error().withContext("--config");
    // The ranks that hold model chunk c: one, or DualPipe's two (c on rank c and P − 1 − c).
    auto ranksOf = [&](int32_t c) {
        std::vector<int32_t> rs{schedule->rankOf(c)};
        if (twoCopies) rs.push_back(schedule->rankOf(pp + c));
        return rs;
    };

    // The weight-gradient work (W): backward ops whose results reach only weight gradients and the
    // optimizer, in reverse op order — but never a gradient that flows to an activation (an
    // operand of its forward op that is not a parameter: the input-gradient chain, I), even where
    // it ends in a weight's gradient only (the first layer's input gradient ends in the
    // embedding's). Graphs without that provenance (derivedFrom) by the reach alone.
    auto activationGradient = [&](const Op& op) {
        if (op.derivedFrom == kNoOp || op.derivedOperand < 0) return false;
        const Op& forward = graph.op(op.derivedFrom);
        const auto k = static_cast<size_t>(op.derivedOperand);
        return k < forward.operands.size() && graph.op(forward.operands[k]).kind != OpKind::Parameter;
    };
    std::vector<char> weightOnly(n, 0), hasConsumer(n, 0), blocked(n, 0);
    for (size_t i = n; i-- > 0;) {
        const Op& op = graph.ops()[i];
        weightOnly[i] = op.phase == Phase::Backward && hasConsumer[i] && !blocked[i] && !activationGradient(op);
        for (OpId o : op.operands) {
            hasConsumer[static_cast<size_t>(o)] = 1;
            if (op.phase != Phase::Optimizer && !weightOnly[i]) blocked[static_cast<size_t>(o)] = 1;
        }
    }

    PipelinePlan out;
    out.stages = pp;
    out.chunksPerRank = v;
    out.schedule = settings.schedule;
    out.placement = schedule->placement;
    out.actions = settings.actions;
    out.scheduleOrigin = settings.scheduleOrigin;
    out.microBatches = microBatches;
    out.chunks.assign(static_cast<size_t>(stages), PipelineChunk{});
    for (int32_t c = 0, first = 0; c < chunks; first += split[static_cast<size_t>(c)], ++c) {
        PipelineChunk& ch = out.chunks[static_cast<size_t>(c)];
        ch.firstLayer = first;
        ch.layers = split[static_cast<size_t>(c)];
        ch.embedding = c == 0;
        ch.head = c == chunks - 1;
    }

    // Each rank's tasks for its tail; per chunk its round's kernels and blocking communication in
    // program order, split into forward, input-gradient and weight-gradient work.
    std::vector<std::vector<SimTask>> rankTasks(static_cast<size_t>(pp));
    enum Part : size_t { kForward, kInputGrad, kWeightGrad, kParts };
    std::vector<std::array<std::vector<SimTask>, kParts>> chunkParts(static_cast<size_t>(chunks));
    for (const SimTask& t : ev.tasks) {
        std::vector<int32_t> cs = chunksOf(t.op);
        std::vector<int32_t> rs;
        for (int32_t c : cs)
            for (int32_t r : ranksOf(c))
                if (std::find(rs.begin(), rs.end(), r) == rs.end()) rs.push_back(r);
        for (int32_t r : rs) rankTasks[static_cast<size_t>(r)].push_back(t);
        if (!t.perRound || (t.kind != SimTaskKind::Compute && t.kind != SimTaskKind::Blocking)) continue;
        const Op& op = graph.op(t.op);
        const Part part = op.phase == Phase::Forward && !t.again ? kForward : weightOnly[static_cast<size_t>(t.op)] ? kWeightGrad : kInputGrad;
        for (int32_t c : cs) chunkParts[static_cast<size_t>(c)][part].push_back(t);
    }
    // A part's time is its own simulation (one round, nothing else in flight), so communication the
    // schedule hides beside a GEMM (--tp-comm-overlap) is hidden in the stage times too.
    MemoryPolicy oneRound = plan.policy;
    oneRound.accumulation = 1;
    std::vector<StepSimulation> roundOf(static_cast<size_t>(pp));  // a rank's chunks' round work, summed
    for (int32_t c = 0; c < chunks; ++c) {
        PipelineChunk& ch = out.chunks[static_cast<size_t>(c)];
        double* seconds[kParts] = {&ch.forwardSeconds, &ch.inputGradSeconds, &ch.weightGradSeconds};
        for (size_t part = 0; part < kParts; ++part) {
            const auto& list = chunkParts[static_cast<size_t>(c)][part];
            if (list.empty()) continue;
            const StepSimulation s = simulateStep(graph, list, model, oneRound);
            *seconds[part] = s.seconds;
            for (int32_t r : ranksOf(c)) {
                StepSimulation& sum = roundOf[static_cast<size_t>(r)];
                sum.seconds += s.seconds;
                sum.computeSeconds += s.computeSeconds;
                sum.exposedCommSeconds += s.exposedCommSeconds;
                sum.contentionSeconds += s.contentionSeconds;
                sum.overlappedCommSeconds += s.overlappedCommSeconds;
            }
        }
    }

    // Memory: what each rank's parameters hold; activations per chunk and micro-batch.
    const OpRoles roles = opRoles(graph, plan.policy.attention, plan.policy.crossEntropy, plan.policy.fusion);
    out.ranks.assign(static_cast<size_t>(pp), PipelineRank{});
    const int64_t share = std::max<int64_t>(1, plan.policy.pipelineStages);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const MemoryBreakdown& held = ev.opMemory[k];
        if (op.kind == OpKind::Parameter) {
            std::vector<int32_t> rs;
            for (int32_t c : sourceChunks[k]) {
                out.chunks[static_cast<size_t>(c)].activationBytes += held.activations;
                for (int32_t r : ranksOf(c)) {
                    if (std::find(rs.begin(), rs.end(), r) != rs.end()) continue;
                    rs.push_back(r);
                    // The evaluation counted a parameter 1/P (MemoryPolicy::pipelineStages): its rank
                    // holds it whole (DualPipe: both ranks of its chunk, each whole).
                    MemoryBreakdown& m = out.ranks[static_cast<size_t>(r)].memory;
                    m.weights += held.weights * share;
                    m.gradients += held.gradients * share;
                    m.optimizer += held.optimizer * share;
                }
            }
            continue;
        }
        if (op.phase == Phase::Forward) out.chunks[static_cast<size_t>(chunkOf[k])].activationBytes += held.activations;
    }

    // The tensors that cross each cut between chunk c and c + 1 in the forward (their gradients
    // cross back): computed results, not folded constants; the widest cut is the transfer.
    std::vector<int64_t> cut(static_cast<size_t>(chunks), 0);
    {
        std::vector<int32_t> reach(n, -1);  // the latest chunk whose forward reads the result
        for (const Op& op : graph.ops()) {
            if (op.phase != Phase::Forward) continue;
            for (OpId o : op.operands) {
                const auto ko = static_cast<size_t>(o);
                if (graph.op(o).kind == OpKind::Parameter || roles.sourceLike[ko]) continue;
                reach[ko] = std::max(reach[ko], chunkOf[static_cast<size_t>(op.id)]);
            }
        }
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (reach[k] <= chunkOf[k] || chunkOf[k] < 0) continue;
            const int64_t bytes = shardBytes(op.type, plan.tensors[k].result, plan.mesh);
            for (int32_t c = chunkOf[k]; c < reach[k]; ++c) cut[static_cast<size_t>(c)] += bytes;
        }
    }
    out.transferBytes = *std::max_element(cut.begin(), cut.end());
    const HardwareSpec& hw = model.hardware();
    const int64_t perNode = settings.gpusPerNode > 0 ? settings.gpusPerNode : hw.gpusPerNode;
    const LinkSpec& link = plan.mesh.deviceCount() >= perNode ? hw.interNode : hw.intraNode;
    out.transferSeconds = out.transferBytes > 0 && link.bytesPerSecond > 0
                              ? link.latencySeconds + static_cast<double>(out.transferBytes) / link.bytesPerSecond
                              : 0.0;

    // DualPipe's second copy: stage P + c runs model chunk c.
    for (int32_t st = chunks; st < stages; ++st)
        out.chunks[static_cast<size_t>(st)] = out.chunks[static_cast<size_t>(pipeModelChunkOf(placement, pp, st))];

    // The schedule, replayed.
    std::vector<StageTimes> times;
    for (const PipelineChunk& ch : out.chunks)
        times.push_back({ch.forwardSeconds, ch.inputGradSeconds, ch.weightGradSeconds, static_cast<double>(ch.activationBytes)});
    auto replay = replaySchedule(*schedule, times, out.transferSeconds);
    if (!replay) return replay.error();

    // Each rank's tail: its chunks' last round and optimizer, simulated, beyond their round's work.
    std::vector<StepSimulation> tails(static_cast<size_t>(pp));
    for (int32_t r = 0; r < pp; ++r) {
        const auto kr = static_cast<size_t>(r);
        PipelineRank& rank = out.ranks[kr];
        rank.busySeconds = replay->busySeconds[kr];
        rank.endSeconds = replay->endSeconds[kr];
        tails[kr] = simulateStep(graph, rankTasks[kr], model, oneRound);
        rank.tailSeconds = std::max(0.0, tails[kr].seconds - roundOf[kr].seconds);
        if (twoCopies && link.bytesPerSecond > 0) {
            // DualPipe: each chunk's gradients summed with its copy's on rank P − 1 − r, an
            // all-reduce of two ranks after the last backward (as DeepSeek's example sums them):
            // each rank sends and receives half its gradients twice.
            const double sync = 2 * link.latencySeconds + static_cast<double>(rank.memory.gradients) / link.bytesPerSecond;
            rank.tailSeconds += sync;
            tails[kr].seconds += sync;
            tails[kr].exposedCommSeconds += sync;
        }
        rank.memory.activations = static_cast<int64_t>(replay->peakActivation[kr]);
        rank.memory.transient = ev.memory.transient;
        const double end = rank.endSeconds + rank.tailSeconds;
        if (end > out.seconds) {
            out.seconds = end;
            out.slowestRank = r;
        }
        if (rank.memory.total() > out.ranks[static_cast<size_t>(out.fullestRank)].memory.total()) out.fullestRank = r;
    }
    // The slowest rank's idle time: the step less its compute, communication and contention.
    const auto ks = static_cast<size_t>(out.slowestRank);
    // The rounds beyond the tail's one: each micro-batch passes every chunk of a rank once, but in
    // DualPipe only one of a rank's two copies (the round sums both: M/2 of them).
    const double m1 = twoCopies ? out.microBatches / 2.0 - 1 : static_cast<double>(out.microBatches - 1);
    const StepSimulation& round = roundOf[ks];
    const double busy = tails[ks].computeSeconds + tails[ks].exposedCommSeconds + tails[ks].contentionSeconds +
                        m1 * (round.computeSeconds + round.exposedCommSeconds + round.contentionSeconds);
    out.bubbleSeconds = std::max(0.0, out.seconds - busy);
    // The plan's step: the slowest rank's parts over every round; its memory: the fullest rank's.
    plan.simulated = tails[ks];
    plan.simulated.computeSeconds += m1 * round.computeSeconds;
    plan.simulated.exposedCommSeconds += m1 * round.exposedCommSeconds;
    plan.simulated.contentionSeconds += m1 * round.contentionSeconds;
    plan.simulated.overlappedCommSeconds += m1 * round.overlappedCommSeconds;
    plan.simulated.seconds = out.seconds;
    plan.memory = out.ranks[static_cast<size_t>(out.fullestRank)].memory;
    plan.pipeline = std::move(out);
    return {};
}

Status checkSplit(const std::vector<int32_t>& split, int64_t chunks, int32_t layers) {
    int64_t total = 0;
    for (int32_t l : split) {
        if (l < 1) return makeError("pipeline.split", "every chunk needs at least one layer");
        total += l;
    }
    if (static_cast<int64_t>(split.size()) != chunks || total != layers)
        return makeError("pipeline.split", "the split names " + std::to_string(split.size()) + " chunks of " + std::to_string(total) +
                                               " layers; the pipeline has " + std::to_string(chunks) + " chunks and the model " +
                                               std::to_string(layers) + " layers");
    return {};
}

namespace {
PipePlacement placementOf(const PipelinePlan& pl) { return placementOf(pl.schedule, pl.actions, pl.placement); }
}  // namespace

std::vector<int32_t> chunkLayers(const PipelinePlan& pl) {
    std::vector<int32_t> out;
    const auto model = static_cast<size_t>(pipeModelChunks(placementOf(pl), pl.stages, pl.chunksPerRank));
    for (size_t c = 0; c < pl.chunks.size() && c < model; ++c) out.push_back(pl.chunks[c].layers);
    return out;
}

std::string pipelineChunksText(const PipelinePlan& pl) {
    if (placementOf(pl) == PipePlacement::Bidirectional) return ", two copies (rank r holds chunks r and " + std::to_string(pl.stages - 1) + " − r)";
    return pl.chunksPerRank > 1 ? " × " + std::to_string(pl.chunksPerRank) + " chunks per rank" : std::string();
}

std::string splitText(const PipelinePlan& pl) {
    std::string out;
    const std::vector<int32_t> split = chunkLayers(pl);
    for (size_t i = 0; i < split.size();) {
        size_t j = i;
        while (j < split.size() && split[j] == split[i]) ++j;
        if (!out.empty()) out += ", ";
        out += std::to_string(split[i]) + (j - i > 1 ? " x " + std::to_string(j - i) : std::string());
        i = j;
    }
    return out;
}

int32_t chunkRank(const PipelinePlan& pl, int32_t chunk) { return pipeRankOf(placementOf(pl), pl.stages, chunk); }

std::vector<std::vector<int32_t>> unevenSplits(const PipelinePlan& even, int32_t keep) {
    const auto p = static_cast<int32_t>(even.chunks.size());
    const PipePlacement placement = placementOf(even);
    if (!(even.chunksPerRank == 1 || (placement == PipePlacement::VShape && even.chunksPerRank == 2)) || p < 2 || keep <= 0) return {};
    const int32_t ranks = even.stages;
    const int32_t per = even.chunks.front().layers, layers = per * p;
    auto work = [](const PipelineChunk& c) { return c.forwardSeconds + c.inputGradSeconds + c.weightGradSeconds; };
    // A layer's time: an inner chunk's per layer (the first chunk's when there are only two).
    double unit = 0;
    for (int32_t c = 1; c + 1 < p; ++c) unit += work(even.chunks[static_cast<size_t>(c)]) / per / (p - 2);
    if (p == 2) unit = work(even.chunks.front()) / per;
    if (unit <= 0) return {};
    const double firstExtra = std::max(0.0, work(even.chunks.front()) - per * unit);
    const double lastExtra = std::max(0.0, work(even.chunks.back()) - per * unit);
    // The busiest rank's work under a split.
    auto largest = [&](const std::vector<int32_t>& split) {
        std::vector<double> rank(static_cast<size_t>(ranks), 0.0);
        for (int32_t c = 0; c < p; ++c)
            rank[static_cast<size_t>(chunkRank(even, c))] +=
                (c == 0 ? firstExtra : 0.0) + (c == p - 1 ? lastExtra : 0.0) + split[static_cast<size_t>(c)] * unit;
        return *std::max_element(rank.begin(), rank.end());
    };
    struct Option {
        double largest;
        std::vector<int32_t> split;
    };
    std::vector<Option> options;
    for (int32_t f = 1; f < layers; ++f)
        for (int32_t l = 1; f + l <= layers; ++l) {
            const int32_t rest = layers - f - l;
            if (p == 2 ? rest != 0 : rest < p - 2 || rest % (p - 2) != 0) continue;
            const int32_t inner = p == 2 ? 0 : rest / (p - 2);
            if (f == per && l == per && (p == 2 || inner == per)) continue;  // the even split
            std::vector<int32_t> split(static_cast<size_t>(p), inner);
            split.front() = f;
            split.back() = l;
            options.push_back({largest(split), std::move(split)});
        }
    std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) { return a.largest < b.largest; });
    // Only splits more balanced than the even one by the same measure.
    const double evenLargest = largest(std::vector<int32_t>(static_cast<size_t>(p), per));
    std::vector<std::vector<int32_t>> out;
    for (const Option& o : options) {
        if (static_cast<int32_t>(out.size()) >= keep || o.largest >= evenLargest * (1 - 1e-9)) break;
        out.push_back(o.split);
    }
    return out;
}

Status loadScheduleCsv(const std::string& path, std::optional<PipePlacement> placement, PipelineSettings& settings) {
    if (placement == PipePlacement::Bidirectional)
        return makeError("schedule.unsupported", "a bidirectional schedule holds two copies of the parameters (DualPipe's): cfp schedule replays it",
                         path);
    auto text = readFileLimited(path, 64 << 20);
    if (!text) return text.error();
    auto read = scheduleFromCsv(*text, settings.stages, settings.chunksPerRank, placement.value_or(PipePlacement::Looped));
    if (!read && !placement && settings.chunksPerRank == 2)
        if (auto v = scheduleFromCsv(*text, settings.stages, 2, PipePlacement::VShape)) read = std::move(v);
    if (!read) return read.error().withContext(path);
    settings.schedule = PipeScheduleKind::Custom;
    settings.placement = read->placement;
    settings.actions = std::move(read->actions);
    settings.scheduleOrigin = "read from " + std::filesystem::path(path).filename().string();
    return {};
}

Result<PipeSchedule> pipelineSchedule(const PipelinePlan& pl) {
    return scheduleFor(pl.schedule, pl.placement, pl.actions, pl.stages, pl.chunksPerRank, pl.microBatches);
}

namespace {

std::vector<StageTimes> chunkTimes(const PipelinePlan& pl) {
    std::vector<StageTimes> times;
    for (const PipelineChunk& c : pl.chunks)
        times.push_back({c.forwardSeconds, c.inputGradSeconds, c.weightGradSeconds, static_cast<double>(c.activationBytes)});
    return times;
}

}  // namespace

Result<PipeReplay> replayPipeline(const PipelinePlan& pl) {
    auto schedule = pipelineSchedule(pl);
    if (!schedule) return schedule.error();
    return replaySchedule(*schedule, chunkTimes(pl), pl.transferSeconds);
}

Result<PipelineReschedule> reschedulePipeline(const Graph& graph, Plan& plan, const Evaluation& ev, const CostModel& model,
                                             const PipelineSettings& settings, int64_t limit, const PipeMipOptions& options) {
    if (!plan.pipeline) return makeError("schedule.shape", "the plan has no pipeline to schedule", "--schedule");
    const PipelinePlan& pl = *plan.pipeline;
    PipeMipRequest request;
    request.placement = placementOf(pl);
    request.ranks = pl.stages;
    request.chunks = pl.chunksPerRank;
    request.microBatches = pl.microBatches;
    request.times = chunkTimes(pl);
    request.transferSeconds = pl.transferSeconds;
    // The stage activations in flight a rank may hold: as many as the fastest generated schedule
    // of the placement holds on its fullest rank among those whose every rank fits in `limit` (the
    // optimiser then searches for a faster order at the memory a framework's schedule would use,
    // not for a sliver of time at many times the memory); never more than fit beside what the rank
    // holds throughout (parameters, gradients, optimizer state, working set), each its largest
    // chunk's; no fewer than the placement needs.
    std::vector<int64_t> fixed(static_cast<size_t>(pl.stages));
    int32_t allowed = pl.microBatches * pl.chunksPerRank;
    for (int32_t r = 0; r < pl.stages; ++r) {
        const MemoryBreakdown& m = pl.ranks[static_cast<size_t>(r)].memory;
        fixed[static_cast<size_t>(r)] = m.total() - m.activations;
        int64_t largest = 1;
        for (int32_t c = 0; c < static_cast<int32_t>(pl.chunks.size()); ++c)
            if (chunkRank(pl, c) == r) largest = std::max(largest, pl.chunks[static_cast<size_t>(c)].activationBytes);
        allowed = static_cast<int32_t>(std::min<int64_t>(allowed, std::max<int64_t>(0, (limit - fixed[static_cast<size_t>(r)]) / largest)));
    }
    std::vector<PipeScheduleKind> generators;
    if (request.placement == PipePlacement::VShape) generators = {PipeScheduleKind::ZeroBubbleV, PipeScheduleKind::DualPipeV};
    else if (pl.chunksPerRank > 1) generators = {PipeScheduleKind::Interleaved};
    else generators = {PipeScheduleKind::OneFOneB, PipeScheduleKind::ZeroBubbleH1, PipeScheduleKind::ZeroBubbleH2};
    double fastest = 0;
    int32_t reference = 0;
    for (PipeScheduleKind k : generators) {
        auto s = makeSchedule(k, pl.stages, pl.chunksPerRank, pl.microBatches);
        if (!s) continue;
        auto r = replaySchedule(*s, request.times, request.transferSeconds);
        if (!r) continue;
        bool fits = true;
        for (int32_t rank = 0; rank < pl.stages; ++rank)
            fits = fits && fixed[static_cast<size_t>(rank)] + static_cast<int64_t>(r->peakActivation[static_cast<size_t>(rank)]) <= limit;
        const int32_t peak = *std::max_element(r->peakInFlight.begin(), r->peakInFlight.end());
        if (fits && (reference == 0 || r->seconds < fastest || (r->seconds == fastest && peak < reference))) {
            fastest = r->seconds;
            reference = peak;
        }
    }
    if (reference > 0) allowed = std::min(allowed, reference);
    request.memoryLimit = std::max(allowed, minimumPipeMemoryLimit(request.placement, pl.stages, pl.chunksPerRank));
    for (const StageTimes& t : request.times)
        if (!(t.forward > 0 && t.inputGrad > 0 && t.weightGrad > 0))
            return makeError("schedule.shape", "a chunk of the pipeline has no forward, input-gradient or weight-gradient work to schedule", "--schedule");
    PipelineReschedule out;
    auto mip = optimizePipeSchedule(request, options);
    if (!mip) return mip.error().withContext("--schedule mip");
    out.mip = std::move(*mip);
    PipelineSettings applied = settings;
    applied.schedule = PipeScheduleKind::Mip;
    applied.placement = request.placement;
    applied.actions = out.mip.schedule.actions;
    applied.chunkLayers = chunkLayers(pl);
    char origin[240];
    std::snprintf(origin, sizeof origin,
                  "schedule optimiser (CBC, %s after %.1f s; warm start %s; at most %d stage activations per rank, as the fastest generated "
                  "schedule that fits; %.1f%% above its bound)",
                  pipeMipStatusName(out.mip.status), out.mip.solveSeconds, out.mip.warmStart.c_str(), out.mip.memoryLimit, 100 * out.mip.gap());
    applied.scheduleOrigin = origin;
    Plan candidate = plan;
    if (auto ok = applyPipeline(graph, candidate, ev, model, applied); !ok) return ok.error();
    // Kept where it fits and is no slower than the generated schedule (a limit below what that
    // one holds on its fullest rank can make it slower).
    out.kept = candidate.memory.total() <= limit && candidate.pipeline->seconds <= pl.seconds;
    if (out.kept) plan = std::move(candidate);
    return out;
}

std::vector<TimelineEvent> pipelineTimeline(const PipelinePlan& pl, const PipeReplay& replay) {
    std::vector<TimelineEvent> out;
    out.reserve(replay.events.size() + pl.ranks.size());
    for (const PipeEvent& e : replay.events) {
        TimelineEvent t;
        const PipeActionKind k = e.action.kind;
        t.name = std::string(1, pipeActionLetter(k)) + " mb " + std::to_string(e.action.microBatch) + " (stage " + std::to_string(e.action.stage) + ")";
        t.track = "rank " + std::to_string(e.rank);
        t.category = k == PipeActionKind::Forward ? "forward" : k == PipeActionKind::Backward ? "backward"
                     : k == PipeActionKind::InputGrad ? "input-grad" : k == PipeActionKind::WeightGrad ? "weight-grad" : "overlapped";
        t.startSeconds = e.start;
        t.durationSeconds = e.end - e.start;
        const PipelineChunk& c = pl.chunks[static_cast<size_t>(e.action.stage)];
        t.detail = "layers " + std::to_string(c.firstLayer) + "-" + std::to_string(c.firstLayer + c.layers - 1) +
                   (c.embedding ? " + embedding" : "") + (c.head ? " + head and loss" : "") + ", " + e.action.toString();
        out.push_back(std::move(t));
    }
    for (size_t r = 0; r < pl.ranks.size(); ++r) {
        const PipelineRank& rank = pl.ranks[r];
        if (rank.tailSeconds <= 0) continue;
        TimelineEvent t;
        t.name = "gradient reduction and optimizer";
        t.track = "rank " + std::to_string(r);
        t.category = "tail";
        t.startSeconds = rank.endSeconds;
        t.durationSeconds = rank.tailSeconds;
        t.detail = "after the last backward: the data-parallel gradient reduction not hidden by it, the optimizer, ZeRO gathers";
        out.push_back(std::move(t));
    }
    // The point-to-point transfers on each sending rank's communication track; a send that starts
    // before the rank's previous one has arrived goes on a further lane ("rank 0 comm (lane 2)"),
    // as a trace track holds one slice at a time.
    std::vector<PipeTransfer> sends = pipelineTransfers(pl, replay);
    std::stable_sort(sends.begin(), sends.end(), [](const PipeTransfer& a, const PipeTransfer& b) { return a.start < b.start; });
    std::map<int32_t, std::vector<double>> laneFree;  // per sending rank: when each lane is free
    for (const PipeTransfer& x : sends) {
        auto& lanes = laneFree[x.fromRank];
        size_t lane = 0;
        while (lane < lanes.size() && lanes[lane] > x.start + 1e-15) ++lane;
        if (lane == lanes.size()) lanes.push_back(0.0);
        lanes[lane] = x.end;
        TimelineEvent t;
        t.name = std::string(x.gradient ? "send gradient" : "send activation") + " mb " + std::to_string(x.microBatch) + " to rank " +
                 std::to_string(x.toRank);
        t.track = "rank " + std::to_string(x.fromRank) + " comm" + (lane == 0 ? std::string() : " (lane " + std::to_string(lane + 1) + ")");
        t.category = "transfer";
        t.startSeconds = x.start;
        t.durationSeconds = x.end - x.start;
        t.detail = std::to_string(pl.transferBytes) + " bytes from stage " + std::to_string(x.fromStage) + " (point-to-point)";
        out.push_back(std::move(t));
    }
    return out;
}

std::vector<PipeTransfer> pipelineTransfers(const PipelinePlan& pl, const PipeReplay& replay) {
    std::vector<PipeTransfer> out;
    if (pl.stages < 2 || pl.transferSeconds <= 0) return out;
    auto schedule = pipelineSchedule(pl);
    if (!schedule) return out;
    // Along the micro-batch's path (a V turns on the last rank, DualPipe's second copy runs up the
    // ranks); a stage that follows on the same rank sends nothing.
    for (const PipeEvent& e : replay.events) {
        const PipeActionKind k = e.action.kind;
        const int32_t c = e.action.stage;
        int32_t to = -1;
        if (k == PipeActionKind::Forward) to = schedule->nextStage(c);
        else if (k == PipeActionKind::Backward || k == PipeActionKind::InputGrad) to = schedule->previousStage(c);
        if (to < 0 || schedule->rankOf(to) == schedule->rankOf(c)) continue;
        out.push_back({schedule->rankOf(c), schedule->rankOf(to), e.action.microBatch, c, k != PipeActionKind::Forward, e.end, e.end + pl.transferSeconds});
    }
    return out;
}

std::vector<std::vector<MemoryStep>> pipelineMemoryOverTime(const PipelinePlan& pl, const PipeReplay& replay) {
    std::vector<std::vector<MemoryStep>> out(pl.ranks.size());
    // Per rank: (time, change); at one instant what a backward gives back comes before what the
    // next forward takes, as the replay counts them.
    std::vector<std::vector<std::pair<double, int64_t>>> changes(pl.ranks.size());
    for (const PipeEvent& e : replay.events) {
        const auto r = static_cast<size_t>(e.rank);
        if (r >= changes.size() || static_cast<size_t>(e.action.stage) >= pl.chunks.size()) continue;
        const int64_t bytes = pl.chunks[static_cast<size_t>(e.action.stage)].activationBytes;
        switch (e.action.kind) {
            case PipeActionKind::Forward: changes[r].emplace_back(e.start, bytes); break;
            case PipeActionKind::Backward:
            case PipeActionKind::WeightGrad: changes[r].emplace_back(e.end, -bytes); break;
            default: break;
        }
    }
    for (size_t r = 0; r < pl.ranks.size(); ++r) {
        const MemoryBreakdown& m = pl.ranks[r].memory;
        int64_t held = m.total() - m.activations;
        auto& steps = out[r];
        steps.push_back({0.0, held});
        std::stable_sort(changes[r].begin(), changes[r].end(), [](const auto& a, const auto& b) {
            return a.first < b.first || (a.first == b.first && a.second < b.second);
        });
        for (const auto& [t, d] : changes[r]) {
            held += d;
            if (steps.back().seconds == t) steps.back().bytes = held;
            else steps.push_back({t, held});
        }
        steps.push_back({std::max(steps.back().seconds, pl.ranks[r].endSeconds + pl.ranks[r].tailSeconds), held});
    }
    return out;
}

}  // namespace cfp
