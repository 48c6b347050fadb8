#pragma once
// A convenience layer for emitting ops into a Graph with shape inference.
//
// The builder keeps a current phase, scope path and provenance (derived-from) that it stamps on
// every op it emits, and names ops HLO-style ("dot.42") unless a name is given. It is meant for
// code that builds graphs (model builders, autodiff, tests): an op that fails shape inference is a
// bug in that code or an unsupported configuration, so the builder throws BuildError. Entry points
// of such code catch it (see catchBuildErrors) and return it as a Result — it never escapes core/.
//
//   Graph g("mlp");
//   GraphBuilder b(g);
//   auto scope = b.scope("fc1");
//   OpId x = b.parameter("x", {DType::F32, {4, 8}}, ParamRole::Input);
//   OpId w = b.parameter("fc1.w", {DType::F32, {8, 16}}, ParamRole::Trainable);
//   OpId y = b.matmul(x, w);                 // f32[4,16], scope "fc1", name "dot.2"

#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace cfp {

class BuildError : public std::exception {
public:
    explicit BuildError(Error error) : m_error(std::move(error)), m_text(m_error.toString()) {}
    const Error& error() const { return m_error; }
    const char* what() const noexcept override { return m_text.c_str(); }

private:
    Error m_error;
    std::string m_text;
};

// Runs `fn` and converts a BuildError it throws into an Error.
template <typename T>
Result<T> catchBuildErrors(const std::function<Result<T>()>& fn) {
    try {
        return fn();
    } catch (const BuildError& e) {
        return e.error();
    }
}

class GraphBuilder {
public:
    explicit GraphBuilder(Graph& graph) : m_graph(graph) {}

    Graph& graph() { return m_graph; }
    const TensorType& type(OpId id) const { return m_graph.op(id).type; }
    const std::vector<int64_t>& dims(OpId id) const { return m_graph.op(id).type.dims; }
    DType dtype(OpId id) const { return m_graph.op(id).type.dtype; }

    // ---- context stamped on new ops ----
    Phase phase() const { return m_phase; }
    void setPhase(Phase p) { m_phase = p; }
    const std::string& currentScope() const { return m_scope; }
    void setScope(std::string scope) { m_scope = std::move(scope); }

    // RAII: appends ".part" to the scope path while alive.
    class ScopeGuard {
    public:
        ScopeGuard(GraphBuilder& b, const std::string& part);
        ~ScopeGuard() { m_builder.m_scope = std::move(m_saved); }
        ScopeGuard(const ScopeGuard&) = delete;
        ScopeGuard& operator=(const ScopeGuard&) = delete;

    private:
        GraphBuilder& m_builder;
        std::string m_saved;
    };
    [[nodiscard]] ScopeGuard scope(const std::string& part) { return ScopeGuard(*this, part); }

    // Provenance for derived ops (see Op::derivedFrom); kNoOp clears it.
    void setDerived(OpId from, int32_t operand = -1) { m_derivedFrom = from; m_derivedOperand = operand; }

    // ---- generic emission ----
    // Fills id-based name (if empty), phase, scope and provenance, then adds; throws BuildError.
    OpId addOp(Op op);
    OpId addOp(OpKind kind, std::vector<OpId> operands, OpAttrs attrs = {}, TensorType declared = {});

    // ---- sources ----
    OpId parameter(const std::string& name, TensorType type, ParamRole role);
    OpId constant(double value, TensorType type);  // splat
    OpId scalar(double value, DType dtype) { return constant(value, TensorType{dtype, {}}); }
    OpId iota(TensorType type, int64_t dimension);

    // ---- elementwise ----
    OpId unary(OpKind kind, OpId x) { return addOp(kind, {x}); }
    OpId binary(OpKind kind, OpId a, OpId b) { return addOp(kind, {a, b}); }
    OpId add(OpId a, OpId b) { return binary(OpKind::Add, a, b); }
    OpId sub(OpId a, OpId b) { return binary(OpKind::Subtract, a, b); }
    OpId mul(OpId a, OpId b) { return binary(OpKind::Multiply, a, b); }
    OpId div(OpId a, OpId b) { return binary(OpKind::Divide, a, b); }
    OpId max(OpId a, OpId b) { return binary(OpKind::Maximum, a, b); }
    OpId neg(OpId x) { return unary(OpKind::Negate, x); }
    OpId exp(OpId x) { return unary(OpKind::Exponential, x); }
    OpId log(OpId x) { return unary(OpKind::Log, x); }
    OpId compare(OpId a, OpId b, ComparisonDirection dir);
    OpId select(OpId pred, OpId onTrue, OpId onFalse) { return addOp(OpKind::Select, {pred, onTrue, onFalse}); }
    OpId convert(OpId x, DType to);  // returns x itself when already of type `to`

    // Elementwise op with a scalar constant broadcast to x's shape: x * c, x + c, …
    OpId binaryScalar(OpKind kind, OpId x, double c);

    // ---- layout ----
    // HLO broadcast: operand dim i goes to result dim mapping[i].
    OpId broadcast(OpId x, std::vector<int64_t> resultDims, std::vector<int64_t> mapping);
    // Broadcast x (whose dims equal the leading or given dims of `like`) to like's shape:
    // `mapping` as in broadcast(); convenience for scalars (mapping {}).
    OpId broadcastLike(OpId x, OpId like, std::vector<int64_t> mapping);
    OpId reshape(OpId x, std::vector<int64_t> dims);
    OpId transpose(OpId x, std::vector<int64_t> permutation);
    OpId slice(OpId x, std::vector<int64_t> start, std::vector<int64_t> limit, std::vector<int64_t> stride = {});
    // Slice [start, limit) along one axis, everything else whole.
    OpId sliceAxis(OpId x, int64_t axis, int64_t start, int64_t limit);
    OpId concatenate(std::vector<OpId> xs, int64_t axis);

    // ---- reductions and contractions ----
    OpId reduce(OpId x, std::vector<int64_t> dims, ReduceKind kind = ReduceKind::Add);
    OpId dot(OpId a, OpId b, DotDimensionNumbers dims);
    // a[..., K] · b[K, N] → [..., N]: contracts a's last dim with b's first dim.
    OpId matmul(OpId a, OpId b);
    OpId gather(OpId operand, OpId indices, GatherDimensionNumbers dims);
    OpId scatter(OpId operand, OpId indices, OpId updates, ScatterDimensionNumbers dims,
                 ReduceKind combine = ReduceKind::Add);

    // Marks an op as a graph output.
    void output(OpId id);

private:
    friend class ScopeGuard;
    Graph& m_graph;
    Phase m_phase = Phase::Forward;
    std::string m_scope;
    OpId m_derivedFrom = kNoOp;
    int32_t m_derivedOperand = -1;
};

}  // namespace cfp
