#include "workflow/workflow.h"

#include <algorithm>
#include <filesystem>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "cost/op_cost.h"
#include "hardware/hardware.h"
#include "plan/evaluator.h"
#include "plan/plan_json.h"
#include "profiler/profile_db.h"

namespace cfp {

Result<LoadedModel> loadRequestedModel(const ModelRequest& model) {
    ImportOptions importOptions;
    importOptions.training = model.training;
    return loadModel(model.source, model.build, importOptions);
}

Result<Cluster> requestedCluster(const PlanRequest& request) {
    auto hw = loadHardware(request.hardware);
    if (!hw) return hw.error().withContext("--hardware");
    auto cluster = makeCluster(*hw, request.nodes);
    if (!cluster) return cluster.error().withContext("--nodes");
    return cluster;
}

Result<RequestMeasurements> requestedMeasurements(const PlanRequest& request) {
    RequestMeasurements out;
    if (!request.profile) return out;
    const ProfileSource& db = *request.profile;
    auto pm = profiler::planningMeasurements(db.database, request.hardware, db.fingerprint);
    if (!pm) return pm.error().withContext("--db");
    out.measurements.kernels = pm->measured;
    out.measurements.calibration = pm->calibration;
    ProfileUse use;
    use.database = db.database;
    use.fingerprint = pm->hardware.key;
    use.hardwareSpec = pm->hardware.hardwareSpec;
    use.simulated = pm->hardware.fingerprint.interconnect == "simulated";
    use.opMeasurements = pm->measured.size();
    use.calibrated = !pm->calibration.empty();
    out.profile = std::move(use);
    return out;
}

std::string ProfileUse::note() const {
    return "profile DB " + database + ": " + std::to_string(opMeasurements) + " measured ops, " +
           (calibrated ? "calibrated model" : "no calibration") + " of '" + fingerprint + "'" + (simulated ? " (SIMULATED measurements)" : "");
}

PlannerOptions plannerOptionsFor(const PlanRequest& request, const PlanHooks& hooks) {
    PlannerOptions o;
    o.memoryLimitBytes = request.memoryLimitBytes;
    o.memoryReserveBytes = request.memoryReserveBytes;
    o.pins = request.pins;
    o.policy = request.policy;
    o.baselines = request.baselines;
    o.blockCheck = request.blockCheck;
    o.search = request.search;
    o.hooks = hooks;
    o.searchSequenceParallel = request.searchSequenceParallel;
    return o;
}

void stampPlan(Plan& plan, const LoadedModel& model, const PlanRequest& request) {
    plan.modelSource = model.spec;
    plan.build = model.options;
    plan.importTraining = model.trainingAppended;
    plan.hardware = request.hardware;
}

namespace {

bool rebuildable(const LoadedModel& model) { return model.options && (model.kind == ModelSourceKind::Builtin || model.kind == ModelSourceKind::HfConfig); }

// Gradient-accumulation counts to try, ascending: every divisor of the global batch for a model
// the builders can build at any batch; the request's count when it fixes one; else one round.
Result<std::vector<int64_t>> accumulationCandidates(const PlanRequest& request, const LoadedModel& model) {
    const bool builder = rebuildable(model);
    const int64_t global = builder ? request.model.build.batch : 0;
    if (request.accumulation) {
        const int64_t a = *request.accumulation;
        if (a < 1) return makeError("request.accumulation", "must be at least 1, got " + std::to_string(a), "--accumulation");
        if (builder && global % a != 0)
            return makeError("request.accumulation",
                             std::to_string(a) + " accumulation steps do not divide the global batch of " + std::to_string(global) +
                                 " sequences",
                             "--accumulation");
        return std::vector<int64_t>{a};
    }
    if (!builder) return std::vector<int64_t>{1};
    std::vector<int64_t> out;
    for (int64_t a = 1; a <= global; ++a)
        if (global % a == 0) out.push_back(a);
    return out;
}

// The graph of one round when a step runs `a` rounds: built again at batch / a where the builders
// can, else the model as it is (its graph is a round).
Result<std::shared_ptr<const LoadedModel>> modelForRounds(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model,
                                                          int64_t a) {
    if (a == 1 || !rebuildable(*model)) return model;
    ModelRequest m = request.model;
    m.build.batch = request.model.build.batch / a;
    auto loaded = loadRequestedModel(m);
    if (!loaded) return loaded.error();
    return std::make_shared<const LoadedModel>(std::move(*loaded));
}

// The round's model built again with kShorterModelLayers layers, for mesh auto to tell the meshes
// where nothing fits (ShorterModel); null where the search plans one mesh (`mesh`), the builders
// do not make the model, it has few layers, or its layers are not all alike (MoE layers every
// k > 1 layers); null too when the request's SearchOptions::shorterModel is off.
std::shared_ptr<ShorterModel> shorterModel(const PlanRequest& request, const MeshChoice& mesh, const LoadedModel& round) {
    if (!request.search.shorterModel || !mesh.isAuto() || !rebuildable(round) || !round.config || !round.options) return nullptr;
    ModelConfig config = *round.config;
    if (config.numLayers < 2 * kShorterModelLayers || (config.family == ModelFamily::Moe && config.moeEvery != 1)) return nullptr;
    const int64_t layers = config.numLayers;
    config.numLayers = kShorterModelLayers;
    auto built = buildTrainingStep(config, *round.options);
    if (!built) return nullptr;
    auto out = std::make_shared<ShorterModel>();
    out->graph = std::make_shared<const Graph>(std::move(built->graph));
    out->layersLeftOut = layers - kShorterModelLayers;
    return out;
}

// Whether an error means "nothing fits at this accumulation count" (try more rounds) rather than
// a problem with the request.
bool doesNotFit(const Error& e) { return e.code == "plan.infeasible"; }

// The error of the highest ZeRO stage tried where nothing fits (the nearest to fitting).
struct StageError {
    Error error;
    int zeroStage = 1;
};

// Progress of several planning calls in a row as one: call k of about n takes the k-th share of
// PlanProgress::overall, never decreasing (a call repeated or skipped keeps it where it is or
// moves it on); with the gradient-accumulation count the call plans and the best plan so far.
class ProgressShares {
public:
    explicit ProgressShares(const PlanHooks& hooks) : m_hooks(hooks) {}
    // Call k of n, stage si of ns within it (ZeRO stages searched at each count): the si-th share of
    // the k-th.
    std::function<void(const PlanProgress&)> share(size_t k, size_t n, int64_t accumulation, std::function<double()> bestSeconds,
                                                   size_t si = 0, size_t ns = 1) {
        if (!m_hooks.progress) return nullptr;
        return [this, k, n, accumulation, si, ns, bestSeconds = std::move(bestSeconds)](const PlanProgress& p) {
            PlanProgress q = p;
            if (n > 1) {
                q.accumulation = accumulation;
                q.accumulationIndex = static_cast<int>(k);
                q.accumulationCount = static_cast<int>(n);
            }
            const double within = (static_cast<double>(si) + std::clamp(p.overall, 0.0, 1.0)) / static_cast<double>(std::max<size_t>(1, ns));
            m_reported = std::max(m_reported, (static_cast<double>(k) + within) / static_cast<double>(std::max<size_t>(1, n)));
            q.overall = m_reported;
            const double best = bestSeconds ? bestSeconds() : 0.0;
            if (best > 0 && (q.bestSeconds == 0 || best < q.bestSeconds)) q.bestSeconds = best;
            m_last = q;
            m_hooks.progress(q);
        };
    }
    // The search ended before the shares it was given (ZeRO stages not needed): the bar at its end.
    void finish() {
        if (!m_hooks.progress || !m_last || m_reported >= 1.0) return;
        m_reported = m_last->overall = 1.0;
        m_hooks.progress(*m_last);
    }

private:
    const PlanHooks& m_hooks;
    double m_reported = 0;
    std::optional<PlanProgress> m_last;
};

// The end of a search that found a plan: the profile used, the counts tried, the search time and
// where the plan came from; a cancelled search's plan marked as stopped.
PlanRun finishRun(PlanRun best, std::optional<ProfileUse> profile, std::vector<AccumulationTry> tried,
                  std::chrono::steady_clock::time_point start, const PlanRequest& request, const PlanHooks& hooks) {
    if (hooks.cancelled()) best.outcome.stopped = true;
    best.profile = std::move(profile);
    best.accumulationTried = std::move(tried);
    best.outcome.plan.searchSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stampPlan(best.outcome.plan, *best.model, request);
    return best;
}

// One pipeline stage's cluster (of `pp`): whole nodes, or part of one node (its GPUs as the
// stage's "node").
Result<Cluster> stageCluster(const Cluster& cluster, int64_t pp) {
    const int64_t devices = cluster.devices(), perNode = cluster.hardware.gpusPerNode;
    if (devices % pp != 0)
        return makeError("pipeline.devices", std::to_string(pp) + " pipeline stages do not divide the " + std::to_string(devices) + " devices", "--pp");
    Cluster stage = cluster;
    const int64_t stageDevices = devices / pp;
    if (stageDevices % perNode == 0) {
        stage.nodes = stageDevices / perNode;
    } else if (perNode % stageDevices == 0) {
        stage.nodes = 1;
        stage.hardware.gpusPerNode = stageDevices;
    } else {
        return makeError("pipeline.devices",
                         "a stage of " + std::to_string(stageDevices) + " devices neither fills whole nodes of " + std::to_string(perNode) +
                             " GPUs nor divides one",
                         "--pp");
    }
    return stage;
}

// The mesh the first micro-batch count chose, for the later counts: a search's ring variant's
// axis named cp (one sequence per round split over it) gets its plain name back, as a batch of more
// sequences may split something else over it, and an axis named cp is context parallel wherever
// it is planned (planningAnalysis).
Mesh meshForLaterCounts(const Mesh& chosen) {
    if (!chosen.findAxis(kContextParallelAxis)) return chosen;
    for (const char* name : {"x", "y", "z", "w", "v"})
        if (!chosen.findAxis(name)) {
            if (auto renamed = withAxisRenamed(chosen, kContextParallelAxis, name)) return *renamed;
            break;
        }
    return chosen;
}

// runPlan with pipeline stages (PlanRequest::pipeline): the search plans one stage's program (every
// layer, on devices / P) with a rank's share of the parameters (MemoryPolicy::pipelineStages: 1/P
// of them, and one micro-batch of every layer's activations, which 1F1B's first rank holds too),
// the plan is cut into stages and scheduled (plan/pipeline_plan.h), and the fullest rank's memory
// is checked against the limit; when it does not fit, the program's limit is lowered by twice the
// overshoot and the search runs again (at most four times). Accumulation counts (micro-batches, at
// least P where the batch allows) are searched locally (below), the fastest pipelined step that
// fits kept; after the first plan its mesh is kept for the later searches. No baselines (they are
// not pipelined).
// Uneven stage splits tried beside the even one (unevenSplits: the most balanced by stage time).
constexpr int32_t kUnevenSplitsTried = 3;

Result<PlanRun> runPipelinedPlan(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const PlanHooks& hooks) {
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    auto measured = requestedMeasurements(request);
    if (!measured) return measured.error();
    const int64_t pp = request.pipeline.stages, devices = cluster->devices(), perNode = cluster->hardware.gpusPerNode;
    if (zeroStageOf(request.policy) >= 2)
        return makeError("config.unsupported", "ZeRO-2/3 with pipeline stages is not modelled yet (Megatron-LM runs pp with ZeRO-1)", "--zero");
    if (devices % pp != 0)
        return makeError("pipeline.devices", std::to_string(pp) + " pipeline stages do not divide the " + std::to_string(devices) + " devices", "--pp");
    auto stageOf = stageCluster(*cluster, pp);
    if (!stageOf) return stageOf.error();
    const Cluster& stage = *stageOf;
    const int64_t stageDevices = devices / pp;
    PipelineSettings settings = request.pipeline;
    settings.gpusPerNode = perNode;
    // A fixed split, checked before any search.
    if (!settings.chunkLayers.empty())
        if (auto ok = checkSplit(settings.chunkLayers,
                                 pipeModelChunks(pipeSchedulePlacement(settings.schedule), static_cast<int32_t>(pp), std::max<int32_t>(1, settings.chunksPerRank)),
                                 layerCount(model->graph));
            !ok)
            return ok.error().withContext("--pp-split");
    auto all = accumulationCandidates(request, *model);
    if (!all) return all.error();
    // The schedule's shape (zb-v and dualpipe-v: two chunks per rank), then the counts it runs
    // (interleaved: multiples of P; dualpipe-v: at least 2P), at least P where the batch allows.
    // mip: the plan is searched with Megatron-LM's schedule for the chunks, then its schedule
    // optimised (reschedulePipeline, below). custom: the CSV's micro-batches are the rounds.
    const int32_t v = std::max<int32_t>(1, settings.chunksPerRank);
    const bool optimised = settings.schedule == PipeScheduleKind::Mip;
    if (optimised) {
        // In a V (two chunks per rank, PipelineSettings::placement): searched with ZB-V.
        if (settings.placement == PipePlacement::VShape && v != 2)
            return makeError("schedule.shape", "a V places 2 chunks on every rank: give --vp 2 with it", "--placement");
        settings.schedule = settings.placement == PipePlacement::VShape ? PipeScheduleKind::ZeroBubbleV : defaultPipeSchedule(v);
        settings.actions.clear();
    }
    std::optional<int64_t> csvRounds;
    if (settings.schedule == PipeScheduleKind::Custom) {
        auto read = scheduleFromCsv(pipeActionsCsv(settings.actions), static_cast<int32_t>(pp), v, settings.placement);
        if (!read) return makeError(read.error().code, read.error().message + (read.error().where.empty() ? "" : " (" + read.error().where + ")"), "--schedule-csv");
        csvRounds = read->microBatches;
    }
    auto shapeAt = [&](int64_t a) -> Status {
        if (csvRounds) {
            if (a == *csvRounds) return {};
            return makeError("schedule.shape", "the schedule CSV runs " + std::to_string(*csvRounds) + " micro-batches");
        }
        auto shaped = makeSchedule(settings.schedule, static_cast<int32_t>(pp), v, static_cast<int32_t>(a));
        if (!shaped) return shaped.error();
        return {};
    };
    if (!csvRounds)
        if (auto shape = shapeAt(4 * pp); !shape) return makeError(shape.error().code, shape.error().message, "--schedule");
    std::vector<int64_t> counts, runnable;
    std::optional<Error> shapeError;
    for (int64_t a : *all) {
        if (auto shaped = shapeAt(a); !shaped) {
            shapeError = shaped.error();
            continue;
        }
        runnable.push_back(a);
        if (a >= pp || csvRounds) counts.push_back(a);
    }
    if (runnable.empty())
        return makeError(shapeError->code,
                         shapeError->message + " (at every gradient-accumulation count of the batch of " + std::to_string(request.model.build.batch) +
                             " sequences)",
                         "--schedule");
    if (counts.empty()) counts = runnable;
    const auto start = std::chrono::steady_clock::now();
    std::optional<PlanRun> best;
    std::optional<Error> firstMiss;
    std::vector<AccumulationTry> tried;
    const int64_t limit = memoryLimitFor(plannerOptionsFor(request, hooks), cluster->hardware);
    // After the first plan, its mesh for every later search (unless the request fixes one).
    MeshChoice mesh = request.mesh;
    int64_t bestCount = 0;
    ProgressShares shares(hooks);
    size_t calls = 0;  // counts planned so far (progress: about one call per count, and the best count again)
    // One count: the stage program planned, cut into stages and scheduled; retried with a lower
    // program limit while the fullest rank does not fit. True when it is the best so far.
    auto tryCount = [&](int64_t a) -> Result<bool> {
        auto roundModel = modelForRounds(request, model, a);
        if (!roundModel) return roundModel.error();
        PlannerOptions options = plannerOptionsFor(request, hooks);
        options.measurements = measured->measurements;
        options.policy.accumulation = a;
        options.baselines = Baselines::Skip;
        // The search counts a rank's share of the parameters (MemoryPolicy::pipelineStages) and
        // one micro-batch of every layer's activations, which 1F1B's first rank holds too.
        options.policy.pipelineStages = pp;
        options.memoryLimitBytes = limit;
        options.shorter = shorterModel(request, mesh, **roundModel);
        options.hooks.progress = shares.share(calls++, counts.size() + (optimised ? 2 : 1), a, [&] { return best ? best->outcome.plan.stepSeconds() : 0.0; });
        std::optional<PlanOutcome> fitted;
        std::string why;
        for (int attempt = 0; attempt < 5 && !fitted; ++attempt) {
            auto outcome = planGraph((*roundModel)->graph, stage, mesh, options);
            if (!outcome) {
                if (outcome.error().code == "plan.cancelled") break;
                if (!doesNotFit(outcome.error()) && outcome.error().code != "plan.dominated") return outcome.error();
                why = outcome.error().message;
                break;
            }
            if (mesh.isAuto()) mesh = MeshChoice::fixed(meshForLaterCounts(outcome->plan.mesh));
            Plan& plan = outcome->plan;
            plan.nodes = cluster->nodes;
            plan.gpusPerNode = perNode;
            plan.memoryLimitBytes = limit;
            const int64_t programBytes = plan.memory.total();
            const Plan unstaged = plan;
            if (auto ok = applyPipeline((*roundModel)->graph, plan, outcome->evaluation, outcome->problem->model(), settings); !ok)
                return ok.error();
            // The split: even, or the first and last stage with other layer counts where that is
            // faster and fits (or fits where the even split does not; of two that do not, the
            // smaller). A split the request fixes is kept.
            if (settings.chunkLayers.empty())
                for (const std::vector<int32_t>& split : unevenSplits(*plan.pipeline, kUnevenSplitsTried)) {
                    Plan other = unstaged;
                    PipelineSettings uneven = settings;
                    uneven.chunkLayers = split;
                    if (!applyPipeline((*roundModel)->graph, other, outcome->evaluation, outcome->problem->model(), uneven)) continue;
                    const bool fits = other.memory.total() <= limit, kept = plan.memory.total() <= limit;
                    if (fits != kept ? fits
                                     : fits ? other.stepSeconds() < plan.stepSeconds() : other.memory.total() < plan.memory.total())
                        plan = std::move(other);
                }
            const int64_t over = plan.memory.total() - limit;
            if (over <= 0) {
                fitted = std::move(*outcome);
                break;
            }
            why = "the fullest rank needs " + std::to_string(plan.memory.total() >> 20) + " MiB of " + std::to_string(limit >> 20) + " MiB";
            // Lower the program's limit by twice the overshoot: a rank's activations do not follow the
            // program's one for one.
            const int64_t next = programBytes - 2 * over;
            if (next <= 0) break;
            options.memoryLimitBytes = next;
        }
        if (!fitted) {
            tried.push_back({a, false, 0, 0, why, zeroStageOf(options.policy)});
            if (!firstMiss) firstMiss = makeError("plan.infeasible", why.empty() ? "no plan fits" : why, "--pp");
            return false;
        }
        tried.push_back({a, true, fitted->plan.stepSeconds(), fitted->plan.memory.total(), {}, zeroStageOf(options.policy)});
        if (best && fitted->plan.stepSeconds() >= best->outcome.plan.stepSeconds()) return false;
        PlanRun run;
        run.model = *roundModel;
        run.outcome = std::move(*fitted);
        best = std::move(run);
        bestCount = a;
        return true;
    };
    // Counts searched locally from Megatron-LM's usual layout — tensor parallel over a node, one
    // sequence per data-parallel rank and micro-batch: round = stage devices / GPUs per node —
    // towards more micro-batches, then fewer, each way until a count is no better.
    const int64_t global = request.model.build.batch;
    const int64_t naturalRound = std::max<int64_t>(1, stageDevices / std::min(perNode, stageDevices));
    size_t first = 0;
    for (size_t i = 0; i < counts.size(); ++i)
        if (std::llabs(global / counts[i] - naturalRound) < std::llabs(global / counts[first] - naturalRound)) first = i;
    auto firstTry = tryCount(counts[first]);
    if (!firstTry) return firstTry.error();
    for (size_t i = first + 1; i < counts.size() && !hooks.cancelled(); ++i) {
        auto better = tryCount(counts[i]);
        if (!better) return better.error();
        if (!*better && best) break;
    }
    for (size_t i = first; i-- > 0 && !hooks.cancelled();) {
        auto better = tryCount(counts[i]);
        if (!better) return better.error();
        if (!*better && best) break;
    }
    // The first count's mesh suits its micro-batch (tensor parallelism where a round is one
    // sequence); the best count gets every mesh again.
    if (best && request.mesh.isAuto() && bestCount != counts[first] && !hooks.cancelled()) {
        mesh = request.mesh;
        // One report line per count: the plan kept.
        const auto earlier = std::find_if(tried.begin(), tried.end(), [&](const AccumulationTry& t) { return t.steps == bestCount; });
        std::optional<AccumulationTry> kept;
        if (earlier != tried.end()) {
            kept = *earlier;
            tried.erase(earlier);
        }
        auto again = tryCount(bestCount);
        if (!again) return again.error();
        if (!*again && kept) tried.back() = *kept;
    }
    if (!best) {
        if (hooks.cancelled()) return makeError("plan.cancelled", "the search was cancelled");
        Error e = firstMiss ? *firstMiss : makeError("plan.infeasible", "no plan fits", "--pp");
        e.message += " (pipeline of " + std::to_string(pp) + " stages; micro-batch counts tried:";
        for (const AccumulationTry& t : tried) e.message += " " + std::to_string(t.steps);
        e.message += ")";
        return e;
    }
    if (optimised && !hooks.cancelled()) {
        // The best plan's schedule searched again by the schedule optimiser (at its stage times).
        if (auto report = shares.share(calls++, counts.size() + 2, bestCount, [&] { return best->outcome.plan.stepSeconds(); })) {
            PlanProgress p;
            p.stage = "schedule optimiser";
            p.mesh = best->outcome.plan.mesh.toString();
            report(p);
        }
        PipeMipOptions mip;
        mip.timeLimitSeconds = request.pipeline.optimiserSeconds;
        mip.cancel = hooks.cancel;
        Plan& plan = best->outcome.plan;
        const PipeScheduleKind generated = plan.pipeline->schedule;
        auto found = reschedulePipeline(best->model->graph, plan, best->outcome.evaluation, best->outcome.problem->model(), settings, limit, mip);
        if (!found) return found.error();
        if (!found->kept) {
            // Said in the plan: what the optimiser found and why the generated schedule stands.
            char why[200];
            std::snprintf(why, sizeof why, "the schedule optimiser's (%.1f ms replayed, %s) was no faster or did not fit: %s kept",
                          found->mip.replay.seconds * 1e3, pipeMipStatusName(found->mip.status), std::string(pipeScheduleName(generated)).c_str());
            plan.pipeline->scheduleOrigin = why;
        }
    }
    std::sort(tried.begin(), tried.end(), [](const AccumulationTry& x, const AccumulationTry& y) { return x.steps < y.steps; });
    return finishRun(std::move(*best), std::move(measured->profile), std::move(tried), start, request, hooks);
}

// The pipelines `tries` (stages and chunks per rank; stages 1: none), each planned as runPlan
// plans it with them fixed; the fastest plan that fits is kept and every try is reported
// (PlanOutcome::stagesTried). `what` names the searched setting in the error where none fits.
Result<PlanRun> runPipelineTries(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const PlanHooks& hooks,
                                 const std::vector<std::pair<int32_t, int32_t>>& tries, const std::string& what, const std::string& where) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<PlanRun> best;
    std::vector<StagesTry> tried;
    double reported = 0;
    auto label = [](int32_t p, int32_t v) {
        return p == 1 ? std::string("without stages") : "pp " + std::to_string(p) + (v > 1 ? " x vp " + std::to_string(v) : std::string());
    };
    for (size_t i = 0; i < tries.size() && !hooks.cancelled(); ++i) {
        const auto [p, v] = tries[i];
        PlanRequest r = request;
        if (p == 1) {
            r.pipeline = PipelineSettings{};
        } else {
            r.pipeline.stages = p;
            r.pipeline.chunksPerRank = v;
            if (request.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks) r.pipeline.schedule = defaultPipeSchedule(v);
        }
        PlanHooks sub = hooks;
        if (hooks.progress)
            sub.progress = [&, i, p](const PlanProgress& inner) {
                PlanProgress q = inner;
                q.pipelineStages = p;
                q.stagesIndex = static_cast<int>(i);
                q.stagesCount = static_cast<int>(tries.size());
                reported = std::max(reported, (static_cast<double>(i) + std::clamp(inner.overall, 0.0, 1.0)) / static_cast<double>(tries.size()));
                q.overall = reported;
                if (best && (q.bestSeconds == 0 || best->outcome.plan.stepSeconds() < q.bestSeconds)) q.bestSeconds = best->outcome.plan.stepSeconds();
                hooks.progress(q);
            };
        auto run = runPlan(r, model, sub);
        if (!run) {
            if (run.error().code == "plan.cancelled") break;
            // Without stages a request error is the request's; a pipeline may just not fit.
            if (p == 1 && !doesNotFit(run.error()) && run.error().code != "plan.dominated") return run.error();
            tried.push_back({p, false, 0, 0, run.error().message, std::max<int32_t>(1, v)});
            continue;
        }
        const Plan& plan = run->outcome.plan;
        const bool fits = plan.memory.total() <= plan.memoryLimitBytes;
        tried.push_back({p, fits, plan.stepSeconds(), plan.memory.total(), fits ? std::string() : "needs more than the memory limit",
                         std::max<int32_t>(1, v)});
        if (!fits || (best && plan.stepSeconds() >= best->outcome.plan.stepSeconds())) continue;
        best = std::move(*run);
    }
    if (!best) {
        if (hooks.cancelled()) return makeError("plan.cancelled", "the search was cancelled");
        std::string why = "no plan fits with any " + what + ":";
        for (const StagesTry& t : tried) why += " " + label(t.stages, t.chunks) + ": " + t.note + ";";
        why.pop_back();
        return makeError("plan.infeasible", why, where);
    }
    if (hooks.cancelled()) best->outcome.stopped = true;
    best->outcome.stagesTried = std::move(tried);
    best->outcome.plan.searchSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(*best);
}

// runPlan with the pipeline stages searched (PipelineSettings::kSearchedStages, `cfp plan --pp
// auto`): no stages, then every count P the cluster and the model allow — a stage whole nodes or
// a part of one node, P × V dividing the layers — ascending (runPipelineTries).
Result<PlanRun> runStagesSearch(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const PlanHooks& hooks) {
    if (!request.mesh.isAuto())
        return makeError("request.pipeline", "with the pipeline stages searched every count plans its own stage meshes: give mesh auto",
                         "--mesh");
    if (!request.pipeline.chunkLayers.empty())
        return makeError("request.pipeline", "a split names the layers of a fixed number of stages: give --pp P with it", "--pp-split");
    if (request.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks)
        return makeError("request.pipeline", "the chunks per rank are searched for a fixed number of stages: give --pp P with --vp auto", "--vp");
    if (request.pipeline.schedule == PipeScheduleKind::Mip || request.pipeline.schedule == PipeScheduleKind::Custom)
        return makeError("request.pipeline",
                         "a " + std::string(pipeScheduleName(request.pipeline.schedule)) +
                             " schedule is made for a fixed number of stages: give --pp P with it",
                         "--schedule");
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    const int64_t devices = cluster->devices();
    const int32_t v = std::max<int32_t>(1, request.pipeline.chunksPerRank), layers = layerCount(model->graph);
    std::vector<std::pair<int32_t, int32_t>> tries{{1, 1}};
    for (int64_t p = 2; p <= devices && p <= layers; ++p)
        if (devices % p == 0 && stageCluster(*cluster, p) && layers % (p * v) == 0) tries.emplace_back(static_cast<int32_t>(p), v);
    return runPipelineTries(request, model, hooks, tries, "number of pipeline stages", "--pp");
}

// runPlan with the chunks per rank searched (PipelineSettings::kSearchedChunks, `cfp plan --pp P
// --vp auto`): one chunk per rank (1F1B) and every V > 1 with P × V dividing the layers
// (interleaved 1F1B), each planned with V fixed (runPipelineTries).
Result<PlanRun> runChunksSearch(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const PlanHooks& hooks) {
    if (request.pipeline.schedule != PipeScheduleKind::OneFOneB && request.pipeline.schedule != PipeScheduleKind::Interleaved)
        return makeError("request.pipeline", "with the chunks per rank searched the schedule is 1F1B, interleaved with more than one chunk",
                         "--schedule");
    if (!request.pipeline.chunkLayers.empty())
        return makeError("request.pipeline", "a split names the layers of fixed chunks: give --vp V with it", "--pp-split");
    const int32_t p = request.pipeline.stages, layers = layerCount(model->graph);
    std::vector<std::pair<int32_t, int32_t>> tries;
    for (int32_t v = 1; static_cast<int64_t>(p) * v <= layers; ++v)
        if (layers % (p * v) == 0) tries.emplace_back(p, v);
    if (tries.empty())
        return makeError("pipeline.split", std::to_string(layers) + " layers do not split evenly into " + std::to_string(p) + " stages", "--pp");
    return runPipelineTries(request, model, hooks, tries, "number of chunks per rank", "--vp");
}

}  // namespace

Result<PlanRun> runPlan(const PlanRequest& request, std::shared_ptr<const LoadedModel> model, const PlanHooks& hooks,
                        std::optional<AnalysisReport> analysis) {
    if (request.pipeline.stages == PipelineSettings::kSearchedStages) return runStagesSearch(request, model, hooks);
    if (request.pipeline.stages > 1 && request.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks) return runChunksSearch(request, model, hooks);
    if (request.pipeline.stages > 1) return runPipelinedPlan(request, model, hooks);
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    auto measured = requestedMeasurements(request);
    if (!measured) return measured.error();
    auto candidates = accumulationCandidates(request, *model);
    if (!candidates) return candidates.error();
    // ZeRO stages (PlanRequest::searchZero): the request's, then 2 and 3 where the memory limit
    // shapes the plan at a count or none fits. A higher stage only adds communication (gathers and
    // scatters every round), so it pays only where it lets a faster plan fit.
    std::vector<int> stages{zeroStageOf(request.policy)};
    if (request.searchZero)
        for (int z = 2; z <= 3; ++z)
            if (z > stages.front()) stages.push_back(z);
    // Ascending counts: for a fixed plan a step only gets slower with more rounds (more launches
    // and latencies, weights read again per round), so more rounds pay only where they let a
    // faster plan fit. The search stops at the first count whose plan the memory limit did not
    // shape (its mesh's fastest plan fits), else two counts after the last improvement.
    const auto start = std::chrono::steady_clock::now();
    std::optional<PlanRun> best;
    std::optional<StageError> firstMiss;
    std::vector<AccumulationTry> tried;
    ProgressShares shares(hooks);
    // Count by count, ascending; at each count the first stage, and the higher ones where the
    // memory limit shaped its plan or none fit (all of them then: a ZeRO-3 plan can beat a ZeRO-2
    // one that fits unshaped, its weights gathered per round instead of after the update). A stage
    // dominated at a count does not end the count: the bound may be its memory-priced one, which a
    // higher stage's smaller memory can beat (one whose fastest plan, memory aside, was dominated
    // is dominated again at once).
    int sinceImproved = 0;
    // What each search learns about the meshes, for the later ones (plan/planner.h).
    const auto memo = request.search.reuseBounds ? std::make_shared<SearchMemo>() : nullptr;
    for (size_t i = 0; i < candidates->size(); ++i) {
        const int64_t a = (*candidates)[i];
        if (best && sinceImproved >= 2) break;
        if (hooks.cancelled()) break;
        auto roundModel = modelForRounds(request, model, a);
        if (!roundModel) return roundModel.error();
        std::shared_ptr<const LoadedModel> round = *roundModel;
        bool improved = false;
        if (memo) memo->forgetAnalyses();
        const auto shorter = shorterModel(request, request.mesh, *round);
        for (size_t si = 0; si < stages.size(); ++si) {
            if (hooks.cancelled()) break;
            const int stage = stages[si];
            // The meshes' analyses kept for the count's later stages (not after its last).
            if (memo) memo->keepAnalyses = si + 1 < stages.size();
            PlannerOptions options = plannerOptionsFor(request, hooks);
            options.measurements = measured->measurements;
            options.policy.accumulation = a;
            options.policy.zeroStage = stage;
            options.policy.optimizerSharding = stage >= 1;
            options.memo = memo;
            options.shorter = shorter;
            // Only a faster plan than the best count's or stage's is of use (exact pruning, SearchOptions).
            if (best) options.search.cutoffSeconds = best->outcome.plan.predictedStepSeconds;
            options.hooks.progress = shares.share(i, candidates->size(), a, [&] { return best ? best->outcome.plan.predictedStepSeconds : 0.0; },
                                                  si, stages.size());
            // This search's entry in `tried`: its time and what the memo counted during it.
            const auto tryStart = std::chrono::steady_clock::now();
            struct Counts {
                int64_t skipped = 0, reused = 0, shorter = 0, deeper = 0;
            };
            auto counts = [&] { return memo ? Counts{memo->skipped, memo->analysesReused, memo->shorterSkips, memo->deeperSearches} : Counts{}; };
            const Counts before = counts();
            auto entry = [&](bool planned, double seconds, int64_t bytes, std::string note) {
                const Counts now = counts();
                const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - tryStart).count();
                return AccumulationTry{a, planned, seconds, bytes, std::move(note), stage, took,
                                       now.skipped - before.skipped, now.reused - before.reused, now.shorter - before.shorter,
                                       now.deeper - before.deeper};
            };
            const bool reuse = analysis && !request.mesh.isAuto() && round == model;
            Result<PlanOutcome> outcome = reuse ? planAnalysed(round->graph, *cluster, *analysis, options)
                                                : planGraph(round->graph, *cluster, request.mesh, options);
            if (!outcome && best && outcome.error().code == "plan.dominated") {
                tried.push_back(entry(false, 0, 0, outcome.error().message));
                continue;
            }
            if (!outcome) {
                if (!doesNotFit(outcome.error())) {
                    if (best && outcome.error().code == "plan.cancelled") break;
                    return outcome.error();
                }
                if (!firstMiss || stage > firstMiss->zeroStage) firstMiss = StageError{outcome.error(), stage};
                tried.push_back(entry(false, 0, 0, outcome.error().message));
                continue;
            }
            tried.push_back(entry(true, outcome->plan.predictedStepSeconds, outcome->plan.memory.total(), {}));
            const bool shaped = outcome->memoryBound;
            if (!best || outcome->plan.predictedStepSeconds < best->outcome.plan.predictedStepSeconds) {
                PlanRun run;
                run.model = round;
                run.outcome = std::move(*outcome);
                best = std::move(run);
                improved = true;
            }
            if (!shaped && si == 0) break;
        }
        sinceImproved = improved ? 0 : sinceImproved + (best ? 1 : 0);
        // The memory limit shaped nothing at the first stage: more rounds are only slower.
        if (improved && !best->outcome.memoryBound && zeroStageOf(best->outcome.plan.policy) == stages.front()) break;
    }
    if (!best) {
        if (hooks.cancelled()) return makeError("plan.cancelled", "the search was cancelled");
        Error e = firstMiss->error;
        std::vector<std::string> tries;
        if (candidates->size() > 1)
            tries.push_back("with every gradient-accumulation count from 1 to " + std::to_string(candidates->back()) + " rounds per step");
        if (stages.size() > 1) tries.push_back("at ZeRO stages " + std::to_string(stages.front()) + " to 3");
        if (!tries.empty()) e.message += " (" + tries.front() + (tries.size() > 1 ? ", " + tries.back() : std::string()) + ")";
        return e;
    }
    if (!hooks.cancelled()) shares.finish();
    // Cancelled part way: the best plan so far, said as such (PlanOutcome::stopped).
    return finishRun(std::move(*best), std::move(measured->profile), std::move(tried), start, request, hooks);
}

namespace {

// Whether estimate `p` is preferable to `other`: one that fits over one that does not; of two that
// fit the faster, of two that do not the one that needs less memory.
bool preferable(const Plan& p, const Plan& other) {
    const bool fits = p.memory.total() <= p.memoryLimitBytes, otherFits = other.memory.total() <= other.memoryLimitBytes;
    return fits ? (!otherFits || p.stepSeconds() < other.stepSeconds()) : (!otherFits && p.memory.total() < other.memory.total());
}

// The round models (graph at global batch / rounds) of one estimate, built once per count.
using RoundModels = std::map<int64_t, std::shared_ptr<const LoadedModel>>;

// One configuration whose keys are all set but mbs (runEstimate below).
Result<PlanRun> estimateOne(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const Cluster& cluster,
                            const RequestMeasurements& measured, const RunConfig& config, const PlanHooks& hooks, RoundModels& rounds) {
    PlanRequest r = request;
    if (config.microBatch) {
        // Rounds from the micro-batch: global = rounds × mbs × dp.
        const int64_t perRound = *config.microBatch * configuredDataParallel(config, cluster);
        if (!rebuildable(*model))
            return makeError("config.batch", "mbs needs a model the builders make (builtin: or config.json); an imported graph is one round",
                             "--config");
        if (request.model.build.batch % perRound != 0)
            return makeError("config.batch",
                             "the global batch of " + std::to_string(request.model.build.batch) + " sequences is not a multiple of mbs × dp = " +
                                 std::to_string(perRound),
                             "--config");
        r.accumulation = request.model.build.batch / perRound;
    }
    auto candidates = accumulationCandidates(r, *model);
    if (!candidates) return candidates.error();
    const bool pipelined = config.pp.value_or(1) > 1;
    // The fewest rounds whose estimate fits (with a pipeline: the fastest that fits); when none
    // does, the one that needs the least memory.
    std::optional<PlanRun> chosen;
    std::vector<AccumulationTry> tried;
    const auto start = std::chrono::steady_clock::now();
    const int64_t dp = configuredDataParallel(config, cluster);
    for (const int64_t a : *candidates) {
        if (hooks.cancelled()) return makeError("plan.cancelled", "the estimate was cancelled");
        // A round the data-parallel ranks cannot share evenly has no such strategy (the first
        // count is priced whatever it is: its errors are the configuration's).
        if (a != candidates->front() && rebuildable(*model) && (request.model.build.batch / a) % dp != 0) continue;
        auto cached = rounds.find(a);
        if (cached == rounds.end()) {
            auto built = modelForRounds(r, model, a);
            if (!built) return built.error();
            cached = rounds.emplace(a, *built).first;
        }
        const std::shared_ptr<const LoadedModel>* round = &cached->second;
        PlannerOptions options = plannerOptionsFor(r, hooks);
        options.measurements = measured.measurements;
        options.policy.accumulation = a;
        auto outcome = planConfigured((*round)->graph, cluster, config, options);
        if (!outcome) {
            // A round too small to split dp ways has no such strategy: more rounds will not help.
            if (chosen) break;
            if (candidates->size() == 1 || outcome.error().code != "plan.baseline") return outcome.error();
            tried.push_back({a, false, 0, 0, outcome.error().message, zeroStageOf(options.policy)});
            continue;
        }
        const Plan& p = outcome->plan;
        const bool fits = p.memory.total() <= p.memoryLimitBytes;
        tried.push_back({a, fits, p.stepSeconds(), p.memory.total(), fits ? std::string() : "does not fit", zeroStageOf(p.policy)});
        if (!chosen || preferable(p, chosen->outcome.plan)) {
            PlanRun run;
            run.model = *round;
            run.outcome = std::move(*outcome);
            chosen = std::move(run);
        }
        // Without a pipeline the fewest rounds that fit are the fastest; with one, more rounds
        // shrink the bubble, so every count is tried.
        if (fits && !pipelined) break;
    }
    if (!chosen)
        return makeError("config.batch", "no micro-batch size gives every block a " + config.toString() + " strategy" +
                                             (tried.empty() ? std::string() : " (at " + std::to_string(tried.front().steps) + " round" +
                                                                                  (tried.front().steps == 1 ? "" : "s") + ": " + tried.front().note + ")"),
                         "--config");
    chosen->profile = measured.profile;
    chosen->accumulationTried = std::move(tried);
    chosen->outcome.plan.searchSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stampPlan(chosen->outcome.plan, *chosen->model, r);
    return std::move(*chosen);
}

// The completions of a configuration's left-out keys that the search tries (runEstimate): tp and
// dp (tp over the divisors of a node's GPUs that divide the devices), the ZeRO stage 0–3,
// recomputation none, per op and full (in that order: each slower and leaner than the one
// before), sequence parallelism off and on where tp > 1. mbs is left to the rounds search.
// `flash`: the request's attention is flash (context parallelism's ring by default, else all-gather).
std::vector<RunConfig> completions(const RunConfig& c, const Cluster& cluster, bool flash) {
    // tp and dp share what the pipeline stages and the context-parallel ranks leave: devices / (pp · cp).
    const int64_t groups = c.pp.value_or(1) * c.cp.value_or(1);  // stages × context-parallel ranks
    const int64_t devices = cluster.devices() % groups == 0 ? cluster.devices() / groups : cluster.devices();
    std::vector<std::pair<int64_t, int64_t>> shapes;  // (tp, dp)
    if (c.tp || c.dp) {
        // The one given fixes the other (dp ≥ 1 by RunConfig::parse); planConfigured names a mismatch.
        const int64_t tp = c.tp ? *c.tp : (devices % *c.dp == 0 ? devices / *c.dp : 1);
        shapes.push_back({tp, c.dp.value_or(devices / tp)});
    } else {
        for (int64_t t = 1; t <= std::min(cluster.hardware.gpusPerNode, devices); t *= 2)
            if (devices % t == 0 && cluster.hardware.gpusPerNode % t == 0) shapes.push_back({t, devices / t});
    }
    std::vector<RunConfig> out;
    for (const auto& [tp, dp] : shapes)
        for (const bool sp : c.sequenceParallel ? std::vector<bool>{*c.sequenceParallel} : tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
            for (int zero = 0; zero <= 3; ++zero) {
                if (c.zero && zero != *c.zero) continue;
                for (const RecomputeMode rc : c.recompute ? std::vector<RecomputeMode>{*c.recompute}
                                                          : std::vector<RecomputeMode>{RecomputeMode::None, RecomputeMode::Op, RecomputeMode::Full}) {
                    RunConfig x = c;
                    x.tp = tp;
                    x.dp = dp;
                    x.sequenceParallel = sp;
                    x.zero = zero;
                    x.recompute = rc;
                    if (c.cp.value_or(1) > 1) x.cpRing = c.cpRing.value_or(flash);  // the ring unless told, or eager
                    else if (!c.cp) x.cpRing.reset();  // no context parallelism chosen (yet): nothing to pass
                    out.push_back(x);
                }
            }
    return out;
}

// Prices each of `tries` (completions) and keeps the preferable in `best` (the first error in
// `firstError`). Along one recomputation chain (none, op, full) the first that fits is the fastest
// that does.
Status priceCompletions(const PlanRequest& request, const std::shared_ptr<const LoadedModel>& model, const Cluster& cluster,
                        const RequestMeasurements& measured, const std::vector<RunConfig>& tries, const PlanHooks& hooks, RoundModels& rounds,
                        std::optional<PlanRun>& best, std::optional<Error>& firstError) {
    bool chainFits = false;
    for (size_t i = 0; i < tries.size(); ++i) {
        const RunConfig& c = tries[i];
        const bool chainStart = i == 0 || c.tp != tries[i - 1].tp || c.sequenceParallel != tries[i - 1].sequenceParallel ||
                                c.zero != tries[i - 1].zero;
        if (chainStart) chainFits = false;
        if (chainFits) continue;
        if (hooks.cancelled()) return makeError("plan.cancelled", "the estimate was cancelled");
        auto run = estimateOne(request, model, cluster, measured, c, hooks, rounds);
        if (!run) {
            if (run.error().code == "plan.cancelled") return run.error();
            if (!firstError) firstError = run.error();
            continue;
        }
        const Plan& p = run->outcome.plan;
        const bool fits = p.memory.total() <= p.memoryLimitBytes;
        chainFits = fits;
        RunConfig priced = c;
        if (const auto batch = planBatch(p, run->model->graph)) priced.microBatch = batch->microBatch();
        run->estimatedConfig = priced;
        if (best && !preferable(p, best->outcome.plan)) continue;
        best = std::move(*run);
    }
    return {};
}

}  // namespace

Result<PlanRun> runEstimate(const PlanRequest& request, const RunConfig& config, const PlanHooks& hooks) {
    auto loadedModel = loadRequestedModel(request.model);
    if (!loadedModel) return loadedModel.error();
    auto model = std::make_shared<const LoadedModel>(std::move(*loadedModel));
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    auto measured = requestedMeasurements(request);
    if (!measured) return measured.error();
    // Keys left out are chosen: the fastest completion that fits, else the one that needs the
    // least memory (priceCompletions).
    const auto start = std::chrono::steady_clock::now();
    const bool flash = fusedAttention(request.policy.attention);
    std::optional<PlanRun> best;
    std::optional<Error> firstError;
    RoundModels rounds;
    auto bestFits = [&] { return best && best->outcome.plan.memory.total() <= best->outcome.plan.memoryLimitBytes; };
    // The configuration as given (cp left out: 1); then, where cp was left out, nothing fits and
    // there are no pipeline stages, context parallelism at 2, 4, 8, … ranks (the sequence split,
    // the keys and values in a ring), up to the first degree at which a completion fits.
    CFP_TRY(priceCompletions(request, model, *cluster, *measured, completions(config, *cluster, flash), hooks, rounds, best, firstError));
    if (!config.cp && config.pp.value_or(1) == 1)
        for (int64_t cp = 2; cp <= std::min<int64_t>(cluster->devices(), 64) && !bestFits() && !hooks.cancelled(); cp *= 2) {
            if (cluster->devices() % cp != 0) break;
            RunConfig withCp = config;
            withCp.cp = cp;
            CFP_TRY(priceCompletions(request, model, *cluster, *measured, completions(withCp, *cluster, flash), hooks, rounds, best, firstError));
        }
    if (!best) return *firstError;
    best->outcome.plan.searchSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(*best);
}


Result<PlanRun> runPlan(const PlanRequest& request, const PlanHooks& hooks) {
    auto model = loadRequestedModel(request.model);
    if (!model) return model.error();
    return runPlan(request, std::make_shared<const LoadedModel>(std::move(*model)), hooks);
}

namespace {

// Equal up to the last bits of a sum taken in another order.
bool sameSeconds(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({std::abs(a), std::abs(b), 1e-12}); }

}  // namespace

Result<PlanRun> restorePlan(const PlanRequest& request, std::shared_ptr<const LoadedModel> model, Plan plan,
                            const std::vector<std::string>* tensorNames, const PlanHooks& hooks) {
    const auto start = std::chrono::steady_clock::now();
    auto stale = [](const std::string& what) { return makeError("plan.stale", "the saved plan no longer prices the same: " + what); };
    const int64_t rounds = plan.policy.accumulation;
    if (rounds < 1) return makeError("plan.mismatch", "the plan's accumulation_steps must be at least 1");
    auto round = modelForRounds(request, model, rounds);
    if (!round) return round.error();
    CFP_TRY(checkPlanAgainstGraph(plan, (*round)->graph, tensorNames));
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    const bool pipelined = plan.pipeline && plan.pipeline->stages > 1;
    // The request's stages, chunks and schedule (any stages where the request searched them).
    if (request.pipeline.stages != PipelineSettings::kSearchedStages) {
        const int32_t wanted = std::max<int32_t>(1, request.pipeline.stages), has = pipelined ? plan.pipeline->stages : 1;
        const bool chunksSearched = request.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks;
        if (wanted != has || (pipelined && !chunksSearched &&
                              (plan.pipeline->chunksPerRank != request.pipeline.chunksPerRank || plan.pipeline->schedule != request.pipeline.schedule)))
            return makeError("plan.mismatch", "the plan has " + std::to_string(has) + " pipeline stage(s)" +
                                                  (pipelined ? std::string(" (") + std::string(pipeScheduleName(plan.pipeline->schedule)) + ", " +
                                                                   std::to_string(plan.pipeline->chunksPerRank) + " chunk(s) per rank)"
                                                             : std::string()) +
                                                  ", the request asks for " + std::to_string(wanted));
    }
    if (pipelined && !request.pipeline.chunkLayers.empty()) {
        if (chunkLayers(*plan.pipeline) != request.pipeline.chunkLayers) return makeError("plan.mismatch", "the plan's stages hold " + splitText(*plan.pipeline) + " layers, not the request's split");
    }
    Cluster planned = *cluster;
    if (pipelined) {
        auto stage = stageCluster(*cluster, plan.pipeline->stages);
        if (!stage) return stage.error();
        planned = *stage;
    }
    if (auto st = checkDeviceCount(plan.mesh, planned.devices()); !st) return st.error().withContext("plan mesh");
    auto measured = requestedMeasurements(request);
    if (!measured) return measured.error();
    // The problem the search solved on the plan's mesh, with the plan's policy (its accumulation,
    // sequence-parallel axis and pipeline share are the search's choices).
    PlannerOptions options = plannerOptionsFor(request, hooks);
    options.policy = plan.policy;
    options.measurements = measured->measurements;
    auto analysis = planningAnalysis((*round)->graph, plan.mesh, options);
    if (!analysis) return analysis.error();
    auto problem = planningProblem((*round)->graph, planned.hardware, plan.mesh, options, std::make_shared<const AnalysisReport>(std::move(*analysis)));
    if (!problem) return problem.error();
    if (hooks.cancelled()) return makeError("plan.cancelled", "the restore was cancelled");
    // The search's choice per block, as the plan states it, and the pins' restriction.
    if (plan.blocks.size() != static_cast<size_t>(problem->blockCount()))
        return makeError("plan.mismatch", "the plan has " + std::to_string(plan.blocks.size()) + " blocks, the model's analysis " +
                                              std::to_string(problem->blockCount()) + " on mesh " + plan.mesh.toString());
    Assignment assignment;
    assignment.reserve(plan.blocks.size());
    for (const BlockChoice& b : plan.blocks) assignment.push_back({b.strategy, b.recompute});
    CFP_TRY(problem->checkAssignment(assignment));
    auto pinned = problem->applyPins(plan.pins);
    if (!pinned) return pinned.error();
    // The problem must give the plan's shardings, and the evaluator (and a pipeline's replay) its
    // step: otherwise the rules or the cost model changed since the plan was saved.
    Plan fresh;
    problem->fillPlan(assignment, *pinned, fresh);
    if (fresh.tensors.size() != plan.tensors.size()) return stale("another number of ops");
    for (size_t i = 0; i < fresh.tensors.size(); ++i) {
        const TensorPlan &a = fresh.tensors[i], &b = plan.tensors[i];
        if (a.result != b.result || a.operands != b.operands || a.ownCollectiveAxes != b.ownCollectiveAxes || a.recompute != b.recompute ||
            a.block != b.block)
            return stale("op " + std::to_string(i) + " is sharded otherwise");
    }
    auto ev = evaluatePlan((*round)->graph, plan, problem->model(), false, options.search.threads);
    if (!ev) return ev.error().withContext("evaluator");
    if (!sameSeconds(ev->step.total(), plan.evaluatorStepSeconds)) return stale("the evaluator's step differs");
    if (pipelined) {
        // The plan's own stages, chunks and schedule (a request with the stages searched has none).
        PipelineSettings settings;
        settings.stages = plan.pipeline->stages;
        settings.chunksPerRank = plan.pipeline->chunksPerRank;
        settings.schedule = plan.pipeline->schedule;
        settings.gpusPerNode = cluster->hardware.gpusPerNode;
        settings.chunkLayers = chunkLayers(*plan.pipeline);
        Plan replayed = plan;
        if (auto st = applyPipeline((*round)->graph, replayed, *ev, problem->model(), settings); !st) return st.error();
        if (!sameSeconds(replayed.simulated.seconds, plan.simulated.seconds)) return stale("the pipeline's step differs");
    } else {
        if (!sameSeconds(ev->simulated.seconds, plan.simulated.seconds)) return stale("the simulated step differs");
        if (ev->memory.total() != plan.memory.total()) return stale("the memory per device differs");
    }
    PlanRun run;
    run.model = *round;
    PlanOutcome& out = run.outcome;
    MeshCandidate candidate;
    candidate.mesh = plan.mesh.toString();
    candidate.sequenceParallelAxis = plan.policy.sequenceParallelAxis;
    candidate.planned = true;
    candidate.stepSeconds = plan.predictedStepSeconds;
    candidate.simulatedSeconds = plan.simulated.seconds;
    candidate.memoryBytes = plan.memory.total();
    candidate.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    candidate.note = "restored: the plan as saved, not searched again";
    out.candidates.push_back(std::move(candidate));
    out.assignment = std::move(assignment);
    out.pinned = std::move(*pinned);
    out.evaluation = std::move(*ev);
    out.problem = std::make_shared<const PlanProblem>(std::move(*problem));
    out.plan = std::move(plan);
    run.profile = std::move(measured->profile);
    run.accumulationTried.push_back({rounds, true, out.plan.stepSeconds(), out.plan.memory.total(), {}});
    return run;
}

Result<LoadedModel> reloadPlanModel(const Plan& plan) {
    const BuildOptions build = plan.build.value_or(BuildOptions{});
    ImportOptions importOptions;
    if (plan.importTraining) importOptions.training = TrainingMode::AppendTraining;
    auto model = loadModel(plan.modelSource, build, importOptions);
    if (!model) return model.error().withContext("plan model '" + plan.modelSource + "'");
    CFP_TRY(checkPlanAgainstGraph(plan, model->graph));
    return model;
}

Result<std::string> renderExport(const Graph& graph, const Plan& plan, ExportFormat format, const ModelConfig* model,
                                 const ExportOptions& options, std::vector<std::string>* notes) {
    std::vector<TimelineEvent> timeline;
    if (format == ExportFormat::Trace && plan.pipeline) {
        // A pipelined plan's trace: the schedule, a track per rank.
        auto replay = replayPipeline(*plan.pipeline);
        if (!replay) return replay.error().withContext("plan pipeline");
        timeline = pipelineTimeline(*plan.pipeline, *replay);
        return exportPlan(graph, plan, format, timeline, model, options, notes);
    }
    if (format == ExportFormat::Trace) {
        auto hw = loadHardware(plan.hardware);
        if (!hw) return hw.error().withContext("plan hardware");
        auto cost = CostModel::create(*hw, plan.mesh);
        if (!cost) return cost.error();
        auto ev = evaluatePlan(graph, plan, *cost, true);
        if (!ev) return ev.error();
        timeline = std::move(ev->timeline);
        // A plan file written before the step simulator has no simulated step: the trace's.
        if (plan.simulated.seconds <= 0) {
            Plan simulated = plan;
            simulated.simulated = ev->simulated;
            return exportPlan(graph, simulated, format, timeline, model, options, notes);
        }
    }
    return exportPlan(graph, plan, format, timeline, model, options, notes);
}

Result<std::vector<ExportFile>> renderExportFiles(const Graph& graph, const Plan& plan, ExportFormat format, const std::string& path,
                                                  const ModelConfig* model, const ExportOptions& options, std::vector<std::string>* notes) {
    std::vector<ExportFile> files(1);
    files[0].path = path;
    ExportOptions o = options;
    if (format == ExportFormat::Torchtitan && path != "-") {
        auto csv = exportScheduleCsv(plan);
        if (!csv) return csv.error();
        if (*csv) {
            const std::filesystem::path p(path);
            std::filesystem::path csvPath = p;
            csvPath.replace_filename((p.extension() == ".toml" ? p.stem().string() : p.filename().string()) + ".schedule.csv");
            o.scheduleCsvName = csvPath.filename().string();
            files.push_back({csvPath.string(), std::move(**csv)});
        }
    }
    auto text = renderExport(graph, plan, format, model, o, notes);
    if (!text) return text.error();
    files[0].text = std::move(*text);
    return files;
}

}  // namespace cfp
