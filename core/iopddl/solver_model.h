#pragma once
// The solver's view of a Problem: variables over merged pairwise edges, with memory as segments.
//
// Three exact reductions turn the contest's nodes into fewer search variables:
// * A node with one strategy is fixed: its cost is a constant, its usage part of the baseline, and
//   its edges become costs of its neighbours' strategies. Strategies whose own cost is the contest's
//   "forbidden" 10^18 (any cost >= 10^17) are dropped when the node has another one.
// * Edges over the same pair of nodes are summed into one matrix (edges of one node, or of a node
//   with itself, are added to its costs; edges of three or more nodes: iopddl.unsupported).
// * A "matching" edge allows each strategy of either end at most one finite partner on the other
//   side: it says the two nodes shard the same tensor the same way. About two thirds of the edges of
//   the public instances are such edges. Nodes joined by matching edges form a component whose
//   strategies are fixed by any one member's, so the component becomes ONE variable: its domain is
//   the root member's strategies that are consistent around every cycle of matching edges, and each
//   member's strategy is a function of the variable's value. Edges inside a component become
//   costs of the variable; the others become matrices between variables. On instance A this turns
//   33,816 free nodes into 293 variables. (A component with no consistent value is left as single
//   nodes: then every solution pays a forbidden cost somewhere anyway.)
//
// Memory: time is compressed to slots (the distinct interval end points; slot j covers steps
// [slotPoints[j], slotPoints[j+1]) over which usage is constant). A variable's usage is a list of
// disjoint slot ranges (segments), each with a usage per value: the sum over the members live there.
//
// Costs are doubles: real costs are integers far below 2^53, so sums are exact; the forbidden 10^18
// stays so large that no search picks it when it has a choice. Exact scores come from evaluate().
//
// Worked example (example.json): nodes 0 and 4 have one strategy and are fixed: edge (0, 1)'s
// costs [30, 40] are added to node 1's [55, 65]; edge (3, 4)'s [70, 60] to node 3's [85, 75].
// Edge (1, 3) with costs [90, 10, 20, 80] is not a matching (all pairs finite), so variables are
// the nodes 1, 2, 3, with arcs 1-3 and none for 2 (its edges go to fixed nodes).

#include <cstdint>
#include <span>
#include <vector>

#include "iopddl/problem.h"
#include "util/result.h"

namespace cfp::iopddl {

struct Arc {
    int32_t to = 0;
    int64_t offset = 0;     // into SolverModel::mats; row-major [own value][to's value]
    int64_t revOffset = 0;  // the same edge from `to`'s side: [to's value][own value]
    int64_t reverse = 0;    // index in SolverModel::arcs of the arc from `to` back to this variable
};

// A slot range where a variable's usage depends on its value.
struct Segment {
    int32_t firstSlot = 0, endSlot = 0;  // [firstSlot, endSlot)
    int64_t usageOffset = 0;             // into SolverModel::segmentUsage; k values
};

struct SolverModel {
    int32_t n = 0;                       // variables
    std::vector<int32_t> k;              // values per variable
    std::vector<int64_t> valueBegin;     // size n + 1, into unary
    std::vector<double> unary;           // member costs and edges inside the variable
    std::vector<int64_t> arcBegin;       // size n + 1, into arcs
    std::vector<Arc> arcs;
    std::vector<double> mats;
    std::vector<int64_t> segmentBegin;   // size n + 1, into segments
    std::vector<Segment> segments;
    std::vector<int64_t> segmentUsage;
    double constant = 0;                 // fixed nodes and edges between them
    int64_t edgeCount = 0;               // variable pairs with a matrix

    // Time slots and the usage of the fixed nodes in each.
    std::vector<int64_t> slotPoints;     // slots + 1 increasing time steps
    std::vector<int64_t> fixedUsage;     // per slot
    int32_t slotCount() const { return static_cast<int32_t>(fixedUsage.size()); }

    // Mapping back to the problem: node v is variable nodeVariable[v] (-1: fixed, strategy 0 of
    // its one), and takes strategy nodeStrategy[nodeStrategyBegin[v] + value].
    int64_t problemNodes = 0;
    std::vector<int32_t> nodeVariable;
    std::vector<int64_t> nodeStrategyBegin;
    std::vector<int32_t> nodeStrategy;
    std::vector<int64_t> fixedStrategy;  // strategy of each node when fixed (its only allowed one)

    std::span<const double> unaryOf(int32_t v) const { return {unary.data() + valueBegin[v], static_cast<size_t>(k[v])}; }
    std::span<const Arc> arcsOf(int32_t v) const {
        return {arcs.data() + arcBegin[v], static_cast<size_t>(arcBegin[v + 1] - arcBegin[v])};
    }
    std::span<const Segment> segmentsOf(int32_t v) const {
        return {segments.data() + segmentBegin[v], static_cast<size_t>(segmentBegin[v + 1] - segmentBegin[v])};
    }
    const int64_t* usageOf(const Segment& s) const { return segmentUsage.data() + s.usageOffset; }

    // The cost of a full assignment (doubles; the exact score comes from evaluate()).
    double cost(std::span<const int32_t> x) const;
    // The problem's solution for an assignment of the variables.
    Solution toSolution(std::span<const int32_t> x) const;
    // The assignment for a problem solution; values a solution's node strategies cannot map to
    // (a member outside its variable's domain) become the variable's value 0.
    std::vector<int32_t> fromSolution(const Solution& solution) const;
};

struct ModelStats {
    int64_t freeNodes = 0;        // nodes with more than one allowed strategy
    int64_t matchingEdges = 0;    // merged edges contracted into variables
    int64_t components = 0;       // variables of more than one node
    int64_t inconsistent = 0;     // components left as single nodes
};

struct ModelOptions {
    // Drop strategies whose own cost is forbidden (when a node has another). A problem whose only
    // fitting solutions pay forbidden costs needs them kept.
    bool pruneForbidden = true;
};

Result<SolverModel> buildSolverModel(const Problem& problem, ModelStats* stats = nullptr, const ModelOptions& options = {});

}  // namespace cfp::iopddl
