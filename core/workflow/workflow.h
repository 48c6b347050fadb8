#pragma once
// The planning workflow, once for every front end (docs/architecture.md): `cfp plan`, `cfp export`
// and the explorer call these and nothing else to load a model, wire a profile DB's measurements,
// plan, stamp a plan with where it came from, export it, and load the model a plan was made from.
//
//   auto run = runPlan(request, hooks);       // load, measurements, plan, stamp
//   writePlanFile("plan.json", run->outcome.plan, run->model->graph);
//   auto text = renderExport(run->model->graph, run->outcome.plan, ExportFormat::Jax);
//
// Errors are those of the steps (load.*, config.*, hardware.*, mesh.*, plan.*, profile.*), located
// at the request field they come from ("--hardware", "--mesh", "--db").

#include <memory>
#include <optional>
#include <string>

#include "export/export.h"
#include "plan/planner.h"
#include "plan/run_config.h"
#include "workflow/request.h"

namespace cfp {

// What a profile DB contributed to a plan.
struct ProfileUse {
    std::string database;
    std::string fingerprint;   // the hardware fingerprint key read
    std::string hardwareSpec;  // the spec it was profiled as
    bool simulated = false;    // measurements of `cfp profile --simulate`
    size_t opMeasurements = 0; // measured op signatures
    bool calibrated = false;   // the DB had a calibration for the fingerprint
    // "profile DB h100.db: 412 measured ops, calibrated model of 'KEY'"
    std::string note() const;
};

// What runPlan returns: the plan with the model it was made for (the plan's problem points into
// that model's graph, which the shared pointer keeps alive).
// One gradient-accumulation count runPlan tried.
struct AccumulationTry {
    int64_t steps = 1;        // micro-batch rounds per step
    bool planned = false;     // a plan fits
    double stepSeconds = 0;   // its step time
    int64_t memoryBytes = 0;  // its memory per device
    std::string note;         // why not planned
    int zeroStage = 1;        // the ZeRO stage planned at (PlanRequest::searchZero)
    double searchSeconds = 0; // how long its search took
    int64_t boundSkips = 0;   // meshes skipped on the bounds of earlier searches (SearchMemo)
    int64_t analysesReused = 0;  // meshes whose analysis an earlier stage's search of the count made (SearchMemo)
    int64_t shorterSkips = 0;    // meshes said not to fit from the model with fewer layers (PlannerOptions::shorter)
    int64_t deeperSearches = 0;  // variants searched on that model with its layer repeated (PlanProblem::deeper)
};

struct PlanRun {
    std::shared_ptr<const LoadedModel> model;  // the graph of one round (the chosen count's)
    PlanOutcome outcome;
    std::optional<ProfileUse> profile;  // with a profile DB
    std::vector<AccumulationTry> accumulationTried;  // every count tried, ascending
    std::optional<RunConfig> estimatedConfig;  // runEstimate: the configuration priced, every key set
};

Result<LoadedModel> loadRequestedModel(const ModelRequest& model);
Result<Cluster> requestedCluster(const PlanRequest& request);
// The measurements of the request's profile DB (empty without one). Errors: profile.* at "--db".
struct RequestMeasurements {
    Measurements measurements;
    std::optional<ProfileUse> profile;
};
Result<RequestMeasurements> requestedMeasurements(const PlanRequest& request);
// The planner's options for the request (without its measurements).
PlannerOptions plannerOptionsFor(const PlanRequest& request, const PlanHooks& hooks);

// Loads the model, wires the measurements, plans and stamps the plan.
Result<PlanRun> runPlan(const PlanRequest& request, const PlanHooks& hooks = {});
// The same for a model the caller has loaded (the request's model part must describe it), and,
// when the request's mesh is fixed, that mesh's analysis (not run again).
Result<PlanRun> runPlan(const PlanRequest& request, std::shared_ptr<const LoadedModel> model, const PlanHooks& hooks,
                        std::optional<AnalysisReport> analysis = std::nullopt);

// A configuration the user runs (plan/run_config.h), priced with the planner's cost model and the
// evaluator (planConfigured): the request's model at its global batch, rounds from the
// configuration's micro-batch (global / (mbs × dp)) or, without mbs, the fewest rounds whose
// estimate fits in the usable memory (else the one that needs the least). Keys left out are
// chosen by a search over their values — tp (and dp) over the divisors of a node's GPUs, ZeRO 0–3,
// recomputation none/op/full, sequence parallelism off/on where tp > 1 — for the fastest
// configuration that fits, else the one that needs the least memory; PlanRun::estimatedConfig
// states it. The request's mesh, pins and accumulation are not used. The plan's memory against
// Plan::memoryLimitBytes says whether it fits. Errors: the first completion's, when none can be
// priced.
Result<PlanRun> runEstimate(const PlanRequest& request, const RunConfig& config, const PlanHooks& hooks = {});

// A saved plan (an explorer project's last plan) made whole again without a search: the model of
// its rounds (the request's model rebuilt at batch / the plan's accumulation), its mesh's analysis
// and decomposed problem, its assignment and the pins' restriction, and the evaluator's
// evaluation — what runPlan's outcome holds — for the request it answers (the caller checks that:
// requestDifferences). The plan itself is kept as saved (its step, baselines and search time);
// the problem must give its shardings again and the evaluator (with a pipeline, the schedule's
// replay) its step time and memory, else plan.stale: the rules or the cost model changed since.
// Costs one analysis and one problem build on one mesh, no DP and no baselines. The outcome has
// one candidate (the plan's mesh); `stopped` is the caller's to set. `model`: the request's
// model as loaded. Errors: plan.mismatch (not this model's plan), plan.stale, and the steps'.
Result<PlanRun> restorePlan(const PlanRequest& request, std::shared_ptr<const LoadedModel> model, Plan plan,
                            const std::vector<std::string>* tensorNames = nullptr, const PlanHooks& hooks = {});

// Writes where a plan came from into it: the model source and build options, the hardware as the
// request names it.
void stampPlan(Plan& plan, const LoadedModel& model, const PlanRequest& request);

// The model a plan was made from, built again from the plan's model source and build options and
// checked against the plan (plan.mismatch when it no longer matches).
Result<LoadedModel> reloadPlanModel(const Plan& plan);

// A plan in an export format, as `cfp export` writes it; a trace evaluates the plan afresh on its
// hardware and mesh for the timeline.
Result<std::string> renderExport(const Graph& graph, const Plan& plan, ExportFormat format, const ModelConfig* model = nullptr,
                                 const ExportOptions& options = {}, std::vector<std::string>* notes = nullptr);

// renderExport for a file at `path`, with the files it refers to: the torchtitan TOML of a plan
// whose schedule PyTorch has no class for (exportScheduleCsv) names its schedule CSV,
// "<path without .toml>.schedule.csv", returned after it. `path` "-" (stdout) has no such file
// beside it: that export is refused. Each file is for the caller to write atomically.
struct ExportFile {
    std::string path;
    std::string text;
};
Result<std::vector<ExportFile>> renderExportFiles(const Graph& graph, const Plan& plan, ExportFormat format, const std::string& path,
                                                  const ModelConfig* model = nullptr, const ExportOptions& options = {},
                                                  std::vector<std::string>* notes = nullptr);

}  // namespace cfp
