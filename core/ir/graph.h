#pragma once
// The graph IR: an SSA DAG of primitive ops (ir/op.h) stored in topological order.
//
// Invariants (checked by validate(), kept by every mutation through this class):
//   * ops()[i].id == i, and every operand id is smaller than the op's own id;
//   * op names are unique and non-empty;
//   * every op's result type equals what shape inference (ir/shape_inference.h) gives for it;
//   * outputs refer to existing ops.
// A graph built by GraphBuilder or read by the JSON reader satisfies them.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/op.h"

namespace cfp {

class Graph {
public:
    Graph() = default;
    explicit Graph(std::string name) : m_name(std::move(name)) {}

    const std::string& name() const { return m_name; }
    void setName(std::string name) { m_name = std::move(name); }

    const std::vector<Op>& ops() const { return m_ops; }
    const Op& op(OpId id) const { return m_ops.at(static_cast<size_t>(id)); }
    int64_t size() const { return static_cast<int64_t>(m_ops.size()); }

    // Appends `op` after checking operands, name uniqueness and its type by shape inference.
    // On success sets op.id and returns it. On error the graph is unchanged.
    Result<OpId> add(Op op);

    // Looks an op up by name; kNoOp if absent.
    OpId find(std::string_view name) const;

    // Graph outputs (loss, updated parameters and optimizer state, …), in order.
    const std::vector<OpId>& outputs() const { return m_outputs; }
    Status addOutput(OpId id);

    // Re-checks every invariant from scratch (independent of how the graph was built).
    Status validate() const;

    // users()[i] lists the ops that consume op i (in id order, an op appears once per use).
    std::vector<std::vector<OpId>> users() const;

    // Ids of parameters with the given role, in id order.
    std::vector<OpId> parameters(ParamRole role) const;

    bool operator==(const Graph& other) const {
        return m_name == other.m_name && m_ops == other.m_ops && m_outputs == other.m_outputs;
    }

private:
    std::string m_name;
    std::vector<Op> m_ops;
    std::vector<OpId> m_outputs;
    std::unordered_map<std::string, OpId> m_byName;
};

}  // namespace cfp
