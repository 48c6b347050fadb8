#pragma once
// Sequential tree-reweighted min-sum message passing (TRW-S, Kolmogorov 2006) on the solver model,
// for the memory-priced problem without a memory constraint.
//
// Every edge (i, j) carries two messages, M_i->j over j's strategies and M_j->i over i's. Nodes are
// visited in a fixed order (the problem's node order, which follows the operator graph), forward
// then backward. Visiting node i with belief h_i = theta_i + sum over neighbours j of M_j->i, it
// sends to each neighbour j later in the pass
//     M_i->j(b) = min_a [ gamma_i h_i(a) - M_j->i(a) + theta_ij(a, b) ],   normalised to min 0,
// where gamma_i = 1 / max(#earlier neighbours, #later neighbours).
//
// decode() turns messages into an assignment: in order, variable i takes
//     argmin_a theta_i(a) + sum_{j decided} theta_ij(a, x_j) + sum_{j not decided} M_j->i(a).
// With a memory profile (holding the usage of x on entry) it takes the best value whose change
// from x_i keeps usage within the limit (else keeps x_i), counting undecided variables at their
// entry values: when x fits on entry, the result fits.

#include <cstdint>
#include <span>
#include <vector>

#include "iopddl/memory_profile.h"
#include "iopddl/solver_model.h"

namespace cfp::iopddl {

class MessagePassing {
public:
    explicit MessagePassing(const SolverModel& model);

    // The unary costs to use (the model's layout: SolverModel::sBegin); must outlive the calls.
    void setUnary(std::span<const double> theta) { m_theta = theta.data(); }
    void iterate();   // one forward and one backward pass
    void reset();     // all messages zero

    // Overwrites x. With `memory` (the usage of x on entry; on return the usage of the result),
    // only changes that keep usage within `limit` are made.
    void decode(std::vector<int32_t>& x, MemoryProfile* memory = nullptr, int64_t limit = 0);
    // The same, visiting variables in `order` instead of the pass order.
    void decodeInOrder(std::vector<int32_t>& x, std::span<const int32_t> order, MemoryProfile* memory, int64_t limit);

    std::span<const int32_t> order() const { return m_order; }

private:
    void pass(bool forward);
    void belief(int32_t i, double* h) const;

    const SolverModel& m;
    const double* m_theta = nullptr;
    std::vector<int32_t> m_order;   // variables in pass order
    std::vector<int32_t> m_rank;    // position of each variable in m_order
    std::vector<double> m_gamma;
    std::vector<int64_t> m_msgBegin;  // per arc: M_from->to over to's strategies
    std::vector<double> m_msg;
    std::vector<double> m_h, m_g, m_score;
    std::vector<int32_t> m_decided;  // m_stamp of the decode that has decided the node
    int32_t m_stamp = 0;
    std::vector<int32_t> m_candidates;
};

}  // namespace cfp::iopddl
