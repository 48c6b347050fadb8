#pragma once
// Immutable snapshots of core results, the only data the explorer's views read (STYLE.md
// "Threads"): the GUI thread only ever sees `std::shared_ptr<const …>` results that no one mutates
// again; a newer result replaces the pointer. Jobs (job_runner.h) build them off the GUI thread.

#include <QMetaType>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "loader/model_loader.h"
#include "plan/alternatives.h"
#include "plan/op_owners.h"
#include "plan/planner.h"
#include "stats/graph_stats.h"
#include "workflow/workflow.h"

namespace cfp::explorer {

struct ModelData {
    std::shared_ptr<const LoadedModel> loaded;
    GraphStats stats;
    const Graph& graph() const { return loaded->graph; }
};

// An analysis of the model on one mesh, with lookups the views need.
struct AnalysisData {
    std::shared_ptr<const ModelData> model;
    std::shared_ptr<const AnalysisReport> report;  // may point into a PlanProblem
    std::vector<int32_t> segmentOfBlock;           // block → segment index
    std::vector<RepeatRun> runs;                   // consecutive segments of one type
    std::vector<int32_t> runOfSegment;             // segment → run index
    std::vector<std::string> typeNames;            // per segment type: "Layer", "embedding", …
    OpDecisionCounts decisions;                    // how the planner decides each op (plan/op_owners.h)
    const Graph& graph() const { return model->graph(); }
    const Mesh& mesh() const { return report->blocks.mesh; }
    static std::shared_ptr<const AnalysisData> make(std::shared_ptr<const ModelData> model,
                                                    std::shared_ptr<const AnalysisReport> report);
};

// A plan with the request it answers.
struct PlanData {
    std::shared_ptr<const ModelData> model;
    std::shared_ptr<const PlanOutcome> outcome;
    std::shared_ptr<const AnalysisData> analysis;  // the plan's mesh
    PlanRequest request;                           // what the search ran with
    std::optional<ProfileUse> profile;             // the profile DB's part in the costs
    std::vector<AccumulationTry> tried;            // the (round count, ZeRO stage) searches, in order
    const Plan& plan() const { return outcome->plan; }
    const Assignment& assignment() const { return outcome->assignment; }  // per block
    const StrategyMask& pinned() const { return outcome->pinned; }        // the pins' restriction
};

// The plan was made for this analysis's model and mesh (so its block ids are the analysis's).
bool planMatches(const PlanData& plan, const AnalysisData& analysis);

// One segment's alternatives (plan/alternatives.h) reduced for a chart in the worker: every
// Pareto-optimal row and the chosen one, and of the others at most one per category and cell of a
// grid over (memory, time), so that a 10^5-combination segment reaches the widget as a few thousand
// points. The counts are of all rows.
struct AlternativesView {
    int32_t segment = 0;
    int64_t combinations = 0;
    bool sampled = false;                   // a sample of the combinations (SegmentAlternatives::sampled)
    std::vector<CombinationCost> rows;      // reduced
    int64_t pareto = 0, dominated = 0, excluded = 0, noFit = 0;
    std::vector<std::string> labels;        // per row: "x:rows | x:cols +recompute | …"
};
AlternativesView reduceAlternatives(const SegmentAlternatives& all, const PlanProblem& problem, int gridCells = 200);

// Selection shared by the tree, the graph and the properties panel.
struct Selection {
    enum class Kind { None, Segment, Block, Op };
    Kind kind = Kind::None;
    int32_t id = -1;  // segment index, block id or op id
    bool operator==(const Selection&) const = default;
};

}  // namespace cfp::explorer

Q_DECLARE_METATYPE(cfp::explorer::Selection)
Q_DECLARE_METATYPE(std::shared_ptr<const cfp::explorer::AlternativesView>)
