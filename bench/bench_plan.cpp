// Benchmark: planning time, stage by stage, and peak resident memory. Each case runs in a forked
// child so that its peak RSS (wait4's ru_maxrss) is its own; the graph build is excluded from the
// times but included in the peak memory. Not a test: it prints numbers for docs/BENCHMARKS.md.
//
// Stages of one plan on a fixed mesh (what planGraph does for one mesh, minus the baselines):
//   analysis  planningAnalysis (analyzeGraph as planGraph runs it): blocks and the segment cover;
//             the independent block check and the search-space report are left out, as in
//             `cfp plan` without --check-blocks (`cfp analyze` and bench_analyze time them)
//   build     CostModel::create + PlanProblem::build: op states and the cost tables
//   search    PlanProblem::search: the segment DP (time only; Pareto labels, or the memory-only
//             and Lagrangian passes, when the fastest plan does not fit); "DP passes" counts them
//   evaluate  PlanProblem::fillPlan + evaluatePlan (without the timeline, as planGraph by default)
// Mesh "auto" calls planGraph itself (every mesh, then the evaluator and the two baselines, as
// `cfp plan --mesh auto` does) and reports its wall time and the meshes it tried; it is cancelled
// after --auto-budget seconds (the row then says on which mesh), and a run longer than 10 s is not
// repeated. When no mesh fits, planGraph says only why the last one failed, so every mesh is then
// planned again stage by stage (untimed in "total"; its sums fill the stage columns, marked Σ)
// for the smallest need and which meshes were skipped.
//
// A case whose search finds no plan within the GPU's memory prints "does not fit: needs X GiB"
// and is followed by the same case with an unlimited memory limit (suffix "/nolimit") so that
// the search itself is timed.
//
//   bench_plan [--repeat N] [--case NAME]... [--auto-budget SECONDS] [--detail] [--list]
//
// Exit status: 0; 1 when a case fails or the DP and the evaluator disagree by more than 1e-9
// relative; 2 on bad arguments.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "cost/cost_model.h"
#include "hardware/hardware.h"
#include "models/models.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "sharding/mesh.h"

using namespace cfp;

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int64_t kUnlimited = int64_t{1} << 50;
constexpr const char* kHardware = "h100-sxm";

// Child exit codes.
constexpr int kOk = 0, kFailed = 1, kInfeasible = 3, kMismatch = 4, kIncomplete = 5;

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

struct Case {
    std::string name;
    std::string preset;
    int64_t layers = 0;  // 0: the preset's own
    int64_t nodes = 1;
    std::string mesh;    // "8", "2x4", "auto"
    bool unlimited = false;
};

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({1e-12, std::abs(a), std::abs(b)}); }

// "16x8" from a mesh's axis sizes.
std::string shortMesh(const Mesh& mesh) {
    std::string s;
    for (const MeshAxis& a : mesh.axes()) s += (s.empty() ? "" : "x") + std::to_string(a.size);
    return s;
}

// The "smallest needs X GiB" figure of a plan.infeasible message (NaN when absent).
double neededGiB(const Error& e) {
    const char* key = "the smallest needs ";
    const size_t at = e.message.find(key);
    if (at == std::string::npos) return std::nan("");
    return std::strtod(e.message.c_str() + at + std::strlen(key), nullptr);
}

void printHeader() {
    std::printf("| case | model | layers | ops | mesh | nodes | blocks | segment types | analysis ms | build ms | search ms | "
                "DP passes | evaluate ms | total ms | predicted step ms | evaluator step ms | memory/device GiB | fits (80 GiB) | "
                "peak RSS MB |\n");
    std::printf("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
}

// The leading cells every row shares.
void printLead(const Case& c, int64_t layers, int64_t ops, const std::string& mesh) {
    std::printf("| %s | %s | %lld | %lld | %s | %lld |", c.name.c_str(), c.preset.c_str(), static_cast<long long>(layers),
                static_cast<long long>(ops), mesh.c_str(), static_cast<long long>(c.nodes));
}

struct Setup {
    BuiltModel model;
    Cluster cluster;
};

Result<Setup> setUp(const Case& c) {
    auto config = presetConfig(c.preset);
    if (!config) return config.error();
    if (c.layers > 0) config->numLayers = c.layers;
    auto model = buildTrainingStep(*config, BuildOptions{});
    if (!model) return model.error();
    auto hw = loadHardware(kHardware);
    if (!hw) return hw.error();
    auto cluster = makeCluster(*hw, c.nodes);
    if (!cluster) return cluster.error();
    return Setup{std::move(*model), std::move(*cluster)};
}

// Analysis, problem build and search on one mesh, each stage timed. `error` is set when a stage
// fails (the search's plan.infeasible and plan.too_large included).
struct MeshRun {
    double analysisMs = 0, buildMs = 0, searchMs = 0;
    std::optional<PlanProblem> problem;
    std::optional<SearchResult> found;
    std::optional<Error> error;
};

MeshRun planStages(const Graph& graph, const HardwareSpec& hw, const Mesh& mesh, int64_t limit) {
    MeshRun run;
    const auto t0 = Clock::now();
    auto analysis = planningAnalysis(graph, mesh, PlannerOptions{});
    const auto t1 = Clock::now();
    run.analysisMs = ms(t0, t1);
    if (!analysis) {
        run.error = analysis.error();
        return run;
    }
    auto model = CostModel::create(hw, mesh);
    if (!model) {
        run.error = model.error();
        return run;
    }
    auto problem = PlanProblem::build(graph, std::move(*analysis), *model);
    const auto t2 = Clock::now();
    run.buildMs = ms(t1, t2);
    if (!problem) {
        run.error = problem.error();
        return run;
    }
    auto found = problem->search(limit, {}, SearchOptions{}, PlanHooks{}, mesh.toString());
    run.searchMs = ms(t2, Clock::now());
    run.problem = std::move(*problem);
    if (found)
        run.found = std::move(*found);
    else
        run.error = found.error();
    return run;
}

// One fixed mesh, stage by stage; every stage best of `repeat`, the total best of the sums.
int runFixed(const Case& c, int repeat, bool detail) {
    auto setup = setUp(c);
    if (!setup) {
        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), setup.error().toString().c_str());
        return kFailed;
    }
    const Graph& graph = setup->model.graph;
    const HardwareSpec& hw = setup->cluster.hardware;
    auto parsed = parseMesh(c.mesh, setup->cluster.devices());
    auto mesh = parsed ? assignLinkClasses(*parsed, hw.gpusPerNode) : Result<Mesh>(parsed.error());
    if (!mesh) {
        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), mesh.error().toString().c_str());
        return kFailed;
    }
    const int64_t limit = c.unlimited ? kUnlimited : hw.memoryBytes;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double tAnalysis = kInf, tBuild = kInf, tSearch = kInf, tEvaluate = kInf, tTotal = kInf;
    int64_t blocks = 0, types = 0;
    double predicted = 0, evaluated = 0, needGiB = std::nan("");
    int64_t memory = 0;
    int passes = 0;
    bool infeasible = false;
    for (int r = 0; r < repeat; ++r) {
        MeshRun run = planStages(graph, hw, *mesh, limit);
        if (!run.problem || (run.error && run.error->code != "plan.infeasible")) {
            std::fprintf(stderr, "%s: %s\n", c.name.c_str(), run.error->toString().c_str());
            return kFailed;
        }
        const PlanProblem& problem = *run.problem;
        blocks = problem.blockCount();
        types = static_cast<int64_t>(problem.analysis().cover.types.size());
        tAnalysis = std::min(tAnalysis, run.analysisMs);
        tBuild = std::min(tBuild, run.buildMs);
        tSearch = std::min(tSearch, run.searchMs);
        const double staged = run.analysisMs + run.buildMs + run.searchMs;
        if (run.error) {
            infeasible = true;
            needGiB = neededGiB(*run.error);
            if (detail && r == 0) std::printf("#   %s\n", run.error->message.c_str());
            tTotal = std::min(tTotal, staged);
            continue;
        }
        const SearchResult& found = *run.found;
        const auto t3 = Clock::now();
        Plan plan;
        plan.nodes = setup->cluster.nodes;
        plan.gpusPerNode = hw.gpusPerNode;
        plan.memoryLimitBytes = limit;
        problem.fillPlan(found.assignment, {}, plan);
        plan.predictedStepSeconds = found.objectiveSeconds;
        auto ev = evaluatePlan(graph, plan, problem.model());
        const auto t4 = Clock::now();
        if (!ev) {
            std::fprintf(stderr, "%s: evaluator: %s\n", c.name.c_str(), ev.error().toString().c_str());
            return kFailed;
        }
        tEvaluate = std::min(tEvaluate, ms(t3, t4));
        tTotal = std::min(tTotal, staged + ms(t3, t4));
        predicted = found.objectiveSeconds;
        passes = found.passes;
        evaluated = ev->step.total();
        memory = ev->memory.total();
    }
    printLead(c, setup->model.config.numLayers, graph.size(), shortMesh(*mesh));
    std::printf(" %lld | %lld | %.1f | %.1f | %.2f |", static_cast<long long>(blocks), static_cast<long long>(types), tAnalysis,
                tBuild, tSearch);
    if (infeasible) {
        std::printf(" – | – | %.1f | – | – | %.2f | does not fit: needs %.2f GiB |", tTotal, needGiB, needGiB);
        std::fflush(stdout);
        return kInfeasible;
    }
    const bool fits = memory <= hw.memoryBytes;
    std::printf(" %d | %.1f | %.1f | %.3f | %.3f | %.2f | %s |", passes, tEvaluate, tTotal, predicted * 1e3, evaluated * 1e3,
                static_cast<double>(memory) / kGiB, fits ? "yes" : "no");
    std::fflush(stdout);
    if (!close(predicted, evaluated)) {
        std::fprintf(stderr, "%s: DP %.12g s but evaluator %.12g s\n", c.name.c_str(), predicted, evaluated);
        return kMismatch;
    }
    return kOk;
}

// `--mesh auto` through planGraph, as `cfp plan` runs it (baselines included); best of `repeat`.
// planGraph is cancelled (PlanHooks::cancel, set from the progress callback) once it has run
// for `budget` seconds: the row then says how far it got, and the case is not repeated.
int runAuto(const Case& c, int repeat, bool detail, double budget) {
    auto setup = setUp(c);
    if (!setup) {
        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), setup.error().toString().c_str());
        return kFailed;
    }
    const Graph& graph = setup->model.graph;
    const HardwareSpec& hw = setup->cluster.hardware;
    const std::vector<std::string> meshes = autoMeshes(setup->cluster.devices(), hw.gpusPerNode);
    PlannerOptions options;
    if (c.unlimited) options.memoryLimitBytes = kUnlimited;  // else the GPU's memory
    std::atomic<bool> cancel{false};
    options.hooks.cancel = &cancel;
    int meshesStarted = 0;
    bool fittedBefore = false;  // a mesh before the current one gave a plan that fits
    auto started = Clock::now();
    options.hooks.progress = [&](const PlanProgress& p) {
        const double now = ms(started, Clock::now());
        if (p.stage == "analysis") {
            meshesStarted = std::max(meshesStarted, p.meshIndex + 1);
            fittedBefore = p.bestSeconds > 0;
        }
        if (now > budget * 1e3) cancel = true;
        // A trace on stderr: when each mesh starts, when its search ends, when the baselines begin.
        if (detail && (p.stage == "analysis" || p.stage == "baselines" || (p.stage == "search" && p.fraction >= 1.0)))
            std::fprintf(stderr, "#   %9.1f ms  %-9s %s\n", now, p.stage.c_str(), p.mesh.c_str());
    };
    double best = std::numeric_limits<double>::infinity();
    std::optional<PlanOutcome> outcome;
    for (int r = 0; r < repeat; ++r) {
        meshesStarted = 0;
        fittedBefore = false;
        const auto t0 = Clock::now();
        started = t0;
        auto out = planGraph(graph, setup->cluster, MeshChoice::automatic(), options);
        const double t = ms(t0, Clock::now());
        if (!out && out.error().code == "plan.cancelled") {
            printLead(c, setup->model.config.numLayers, graph.size(), "auto");
            const std::string& current = meshes[static_cast<size_t>(std::max(meshesStarted, 1) - 1)];
            std::printf(" – | – | – | – | – | – | – | > %.0f | – | – | – | not finished: cancelled after %.0f s on mesh %d of %zu (%s); %s |",
                        t, t / 1e3, meshesStarted, meshes.size(), current.c_str(),
                        fittedBefore ? "an earlier mesh fits" : "no earlier mesh fits");
            std::fflush(stdout);
            return kIncomplete;
        }
        best = std::min(best, t);
        if (!out) {
            // With no mesh planned, planGraph returns the last mesh's error: infeasible or too large.
            if (out.error().code != "plan.infeasible" && out.error().code != "plan.too_large") {
                std::fprintf(stderr, "%s: %s\n", c.name.c_str(), out.error().toString().c_str());
                return kFailed;
            }
            if (t > 10e3) break;  // a long run is not repeated
            continue;
        }
        outcome = std::move(*out);
        if (t > 10e3) break;  // a long run is not repeated
    }
    if (detail && outcome)
        for (const MeshCandidate& m : outcome->candidates) {
            if (m.planned)
                std::printf("#   %-34s %9.1f ms  step %9.3f ms  %7.2f GiB\n", m.mesh.c_str(), m.seconds * 1e3, m.stepSeconds * 1e3,
                            static_cast<double>(m.memoryBytes) / kGiB);
            else
                std::printf("#   %-34s %9.1f ms  %s\n", m.mesh.c_str(), m.seconds * 1e3, m.note.c_str());
        }
    if (!outcome) {
        // planGraph returns only the last mesh's error. Plan every mesh again, stage by stage (not
        // part of the time above), for the smallest need and where the time goes.
        int searched = 0, skipped = 0, other = 0;
        double sumA = 0, sumB = 0, sumS = 0, minNeed = std::numeric_limits<double>::infinity();
        std::string minMesh;
        for (const std::string& text : meshes) {
            auto parsed = parseMesh(text, setup->cluster.devices());
            auto mesh = parsed ? assignLinkClasses(*parsed, hw.gpusPerNode) : Result<Mesh>(parsed.error());
            if (!mesh) return kFailed;
            const MeshRun run = planStages(graph, hw, *mesh, c.unlimited ? kUnlimited : hw.memoryBytes);
            sumA += run.analysisMs;
            sumB += run.buildMs;
            sumS += run.searchMs;
            std::string outcomeText;
            if (run.found) {
                outcomeText = "fits";  // planGraph found none: not expected
                ++other;
            } else if (run.error->code == "plan.too_large") {
                outcomeText = "skipped: frontier > " + std::to_string(SearchOptions{}.maxStates) + " states";
                ++skipped;
            } else if (run.error->code == "plan.infeasible") {
                const double need = neededGiB(*run.error);
                char buf[64];
                std::snprintf(buf, sizeof buf, "does not fit: needs %.2f GiB", need);
                outcomeText = buf;
                ++searched;
                if (need < minNeed) {
                    minNeed = need;
                    minMesh = text;
                }
            } else {
                outcomeText = run.error->toString();
                ++other;
            }
            if (detail)
                std::printf("#   %-8s analysis %7.1f ms  build %7.1f ms  search %8.1f ms  %s\n", text.c_str(), run.analysisMs,
                            run.buildMs, run.searchMs, outcomeText.c_str());
        }
        printLead(c, setup->model.config.numLayers, graph.size(), "auto (" + std::to_string(meshes.size()) + " meshes)");
        std::printf(" – | – | Σ %.1f | Σ %.1f | Σ %.1f | – | – | %.1f | – | – | %.2f | does not fit on any mesh: %d searched, the "
                    "smallest needs %.2f GiB (%s); %d skipped (search frontier > %lld states)%s |",
                    sumA, sumB, sumS, best, minNeed, searched, minNeed, minMesh.c_str(), skipped,
                    static_cast<long long>(SearchOptions{}.maxStates), other ? "; others failed" : "");
        std::fflush(stdout);
        return kInfeasible;
    }
    const Plan& plan = outcome->plan;
    int planned = 0;
    for (const MeshCandidate& m : outcome->candidates) planned += m.planned;
    const std::string mesh = "auto → " + shortMesh(plan.mesh) + " (" + std::to_string(outcome->candidates.size()) + " meshes, " +
                             std::to_string(planned) + " planned)";
    printLead(c, setup->model.config.numLayers, graph.size(), mesh);
    const bool fits = plan.memory.total() <= hw.memoryBytes;
    std::printf(" %zu | – | – | – | – | – | – | %.1f | %.3f | %.3f | %.2f | %s |", plan.blocks.size(), best, plan.predictedStepSeconds * 1e3,
                plan.evaluatorStepSeconds * 1e3, static_cast<double>(plan.memory.total()) / kGiB, fits ? "yes" : "no");
    std::fflush(stdout);
    if (!close(plan.predictedStepSeconds, plan.evaluatorStepSeconds)) {
        std::fprintf(stderr, "%s: DP %.12g s but evaluator %.12g s\n", c.name.c_str(), plan.predictedStepSeconds, plan.evaluatorStepSeconds);
        return kMismatch;
    }
    return kOk;
}

// Runs one case in a child; prints its peak RSS; returns the child's exit code (kFailed on a crash).
int runChild(const Case& c, int repeat, bool detail, double budget) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(c.mesh == "auto" ? runAuto(c, repeat, detail, budget) : runFixed(c, repeat, detail));
    int st = 0;
    struct rusage usage {};
    if (pid < 0 || wait4(pid, &st, 0, &usage) < 0) return kFailed;
    if (!WIFEXITED(st) || WEXITSTATUS(st) == kFailed) {
        std::printf("| %s | failed |\n", c.name.c_str());
        return kFailed;
    }
    std::printf(" %.1f |\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
    return WEXITSTATUS(st);
}

// Ops of a preset's training step with `layers` layers (0 on error).
int64_t opsWithLayers(const std::string& preset, int64_t layers) {
    auto config = presetConfig(preset);
    if (!config) return 0;
    config->numLayers = layers;
    auto model = buildTrainingStep(*config, BuildOptions{});
    return model ? model->graph.size() : 0;
}

}  // namespace

int main(int argc, char** argv) {
    int repeat = 1;
    double budget = 300;
    bool detail = false, list = false;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeat" && i + 1 < argc) {
            repeat = static_cast<int>(std::strtol(argv[++i], nullptr, 10));
            if (repeat <= 0) return 2;
        } else if (a == "--auto-budget" && i + 1 < argc) {
            budget = std::strtod(argv[++i], nullptr);
            if (!(budget > 0)) return 2;
        } else if (a == "--case" && i + 1 < argc) {
            only.push_back(argv[++i]);
        } else if (a == "--detail") {
            detail = true;
        } else if (a == "--list") {
            list = true;
        } else if (a == "--help" || a == "-h") {
            std::printf("Usage: bench_plan [--repeat N] [--case NAME]... [--auto-budget SECONDS] [--detail] [--list]\n"
                        "Times planning (analysis, problem build, segment DP search, evaluation) of GPT training steps\n"
                        "on clusters of 8xH100 nodes and prints one Markdown table row per case, with the child's peak RSS.\n"
                        "  --repeat N   best of N for every timed stage (default 1)\n"
                        "  --case NAME  run only this case (repeatable; see --list); 175b/MESH takes any mesh of 128\n"
                        "  --auto-budget SECONDS  cancel mesh auto after this long (default 300)\n"
                        "  --detail     for mesh auto, trace every mesh planGraph tries (stderr) and list them;\n"
                        "               for a case that does not fit, print the planner's message (memory breakdown)\n"
                        "  --list       print the case names and exit\n"
                        "A case that does not fit in the GPU's memory is followed by NAME/nolimit (no memory limit).\n"
                        "Exit status 1 if a case fails or the DP and the evaluator disagree by more than 1e-9 relative.\n");
            return 0;
        } else {
            std::fprintf(stderr, "bench_plan: unknown argument '%s' (see --help)\n", a.c_str());
            return 2;
        }
    }

    // Case 1: plan time against op count. Ops per layer of gpt3-1.3b from 1- and 2-layer graphs.
    const std::string small = "gpt3-1.3b";
    const int64_t ops1 = opsWithLayers(small, 1), ops2 = opsWithLayers(small, 2);
    if (ops1 <= 0 || ops2 <= ops1) return 1;
    const int64_t perLayer = ops2 - ops1, fixed = ops1 - perLayer;
    std::vector<Case> cases;
    for (const auto& [label, target] : {std::pair<const char*, int64_t>{"1k", 1000}, {"10k", 10000}, {"100k", 100000}}) {
        const int64_t layers = std::max<int64_t>(1, std::llround(static_cast<double>(target - fixed) / static_cast<double>(perLayer)));
        for (const char* mesh : {"8", "2x4"})
            cases.push_back({std::string("gpt-") + label + "/" + mesh, small, layers, 1, mesh, false});
    }
    // Case 2: GPT-3 175B on 16 nodes.
    for (const char* mesh : {"16x8", "128", "auto"}) cases.push_back({std::string("175b/") + mesh, "gpt3-175b", 0, 16, mesh, false});

    auto nolimit = [](Case c) {
        c.name += "/nolimit";
        c.unlimited = true;
        return c;
    };
    if (list) {
        for (const Case& c : cases) std::printf("%s\n%s\n", c.name.c_str(), nolimit(c).name.c_str());
        return 0;
    }
    std::vector<Case> selected;
    for (const std::string& name : only) {
        bool found = false;
        for (const Case& c : cases) {
            if (c.name == name) selected.push_back(c);
            else if (nolimit(c).name == name) selected.push_back(nolimit(c));
            else continue;
            found = true;
        }
        // "175b/MESH" with a mesh of the list's own or any other of 128 devices (to look into mesh auto).
        if (!found && name.rfind("175b/", 0) == 0) {
            Case c{name, "gpt3-175b", 0, 16, name.substr(5), false};
            if (c.mesh.size() > 8 && c.mesh.substr(c.mesh.size() - 8) == "/nolimit") c = nolimit({name.substr(0, name.size() - 8), "gpt3-175b", 0, 16, c.mesh.substr(0, c.mesh.size() - 8), false});
            selected.push_back(c);
            found = true;
        }
        if (!found) {
            std::fprintf(stderr, "bench_plan: no case '%s' (see --list)\n", name.c_str());
            return 2;
        }
    }
    if (only.empty()) selected = cases;

    std::printf("# %s training step: %lld ops per layer + %lld outside the layers; batch 8, seq 2048, bf16; nodes of 8x %s; "
                "best of %d\n",
                small.c_str(), static_cast<long long>(perLayer), static_cast<long long>(fixed), kHardware, repeat);
    printHeader();
    int status = 0;
    for (const Case& c : selected) {
        const int rc = runChild(c, repeat, detail, budget);
        if (rc == kInfeasible && !c.unlimited) {
            const int again = runChild(nolimit(c), repeat, detail, budget);
            if (again != kOk) status = 1;
        } else if (rc != kOk && rc != kIncomplete) {
            status = 1;
        }
    }
    return status;
}
