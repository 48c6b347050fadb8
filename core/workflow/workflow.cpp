#include "workflow/workflow.h"

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
    o.pins = request.pins;
    o.policy = request.policy;
    o.baselines = request.baselines;
    o.blockCheck = request.blockCheck;
    o.search = request.search;
    o.hooks = hooks;
    return o;
}

void stampPlan(Plan& plan, const LoadedModel& model, const PlanRequest& request) {
    plan.modelSource = model.spec;
    plan.build = model.options;
    plan.hardware = request.hardware;
}

Result<PlanRun> runPlan(const PlanRequest& request, std::shared_ptr<const LoadedModel> model, const PlanHooks& hooks,
                        std::optional<AnalysisReport> analysis) {
    auto cluster = requestedCluster(request);
    if (!cluster) return cluster.error();
    auto measured = requestedMeasurements(request);
    if (!measured) return measured.error();
    PlannerOptions options = plannerOptionsFor(request, hooks);
    options.measurements = std::move(measured->measurements);
    Result<PlanOutcome> outcome = analysis && !request.mesh.isAuto()
                                      ? planAnalysed(model->graph, *cluster, std::move(*analysis), options)
                                      : planGraph(model->graph, *cluster, request.mesh, options);
    if (!outcome) return outcome.error();
    PlanRun run;
    run.model = std::move(model);
    run.outcome = std::move(*outcome);
    run.profile = std::move(measured->profile);
    stampPlan(run.outcome.plan, *run.model, request);
    return run;
}

Result<PlanRun> runPlan(const PlanRequest& request, const PlanHooks& hooks) {
    auto model = loadRequestedModel(request.model);
    if (!model) return model.error();
    return runPlan(request, std::make_shared<const LoadedModel>(std::move(*model)), hooks);
}

Result<LoadedModel> reloadPlanModel(const Plan& plan) {
    const BuildOptions build = plan.build.value_or(BuildOptions{});
    auto model = loadModel(plan.modelSource, build);
    if (!model) return model.error().withContext("plan model '" + plan.modelSource + "'");
    CFP_TRY(checkPlanAgainstGraph(plan, model->graph));
    return model;
}

Result<std::string> renderExport(const Graph& graph, const Plan& plan, ExportFormat format) {
    std::vector<TimelineEvent> timeline;
    if (format == ExportFormat::Trace) {
        auto hw = loadHardware(plan.hardware);
        if (!hw) return hw.error().withContext("plan hardware");
        auto cost = CostModel::create(*hw, plan.mesh);
        if (!cost) return cost.error();
        auto ev = evaluatePlan(graph, plan, *cost, true);
        if (!ev) return ev.error();
        timeline = std::move(ev->timeline);
    }
    return exportPlan(graph, plan, format, timeline);
}

}  // namespace cfp
