// Reverse-mode autodiff and AdamW, checked against the reference interpreter: central finite
// differences on hand-built graphs for every differentiable op kind and on seeded random DAGs;
// provenance of backward dots; one AdamW step against a scalar re-computation.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "autodiff/autodiff.h"
#include "interp/interpreter.h"
#include "ir/graph_builder.h"

using namespace cfp;

namespace {

using Values = std::map<std::string, Tensor>;

std::vector<double> randomValues(std::mt19937_64& rng, int64_t n, double lo, double hi) {
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> out(static_cast<size_t>(n));
    for (double& v : out) v = dist(rng);
    return out;
}

// Adds a trainable parameter with random values in [lo, hi] to `values`.
OpId randomParam(GraphBuilder& b, Values& values, std::mt19937_64& rng, const std::string& name, TensorType type,
                 double lo = -1.0, double hi = 1.0) {
    const int64_t n = type.elements();
    values[name] = Tensor{type, randomValues(rng, n, lo, hi)};
    return b.parameter(name, std::move(type), ParamRole::Trainable);
}

OpId literal(GraphBuilder& b, TensorType type, std::vector<double> values) {
    OpAttrs a;
    a.literal = std::move(values);
    return b.addOp(OpKind::Constant, {}, std::move(a), std::move(type));
}

// loss = Σ y ⊙ c with a fixed random weight tensor c, so that every element of y matters differently.
OpId weightedSum(GraphBuilder& b, OpId y, std::mt19937_64& rng) {
    const TensorType t = b.type(y);
    OpId c = literal(b, t, randomValues(rng, t.elements(), 0.5, 1.5));
    std::vector<int64_t> all;
    for (int64_t i = 0; i < t.rank(); ++i) all.push_back(i);
    return b.reduce(b.mul(y, c), all);
}

double lossValue(const Graph& g, OpId loss, const Values& values) {
    auto r = evaluate(g, values);
    if (!r) qFatal("evaluation failed: %s", r.error().toString().c_str());
    return (*r)[static_cast<size_t>(loss)].values.at(0);
}

// Differentiates `forward` (a copy is extended) with respect to all trainable parameters and compares
// every gradient element with a central finite difference evaluated by the interpreter. Returns an
// empty string on success, else what went wrong. Also checks backward ops' phase and provenance.
std::string checkAgainstFiniteDifferences(const Graph& forward, OpId loss, const Values& values,
                                          double tolerance = 1e-6) {
    Graph g = forward;
    const auto wrt = g.parameters(ParamRole::Trainable);
    auto grads = appendBackward(g, loss, wrt);
    if (!grads) return "appendBackward failed: " + grads.error().toString();
    if (auto s = g.validate(); !s) return "invalid graph after backward: " + s.error().toString();
    for (OpId id = static_cast<OpId>(forward.size()); id < g.size(); ++id) {
        const Op& op = g.op(id);
        if (op.phase != Phase::Backward) return op.name + " is not in the backward phase";
        if (op.derivedFrom < 0 || op.derivedFrom > loss) return op.name + " has no forward provenance";
        if (op.scope != g.op(op.derivedFrom).scope) return op.name + " has the wrong scope";
        const auto nOperands = static_cast<int32_t>(g.op(op.derivedFrom).operands.size());
        if (op.derivedOperand < -1 || op.derivedOperand >= nOperands) return op.name + " has a bad derived operand";
    }
    auto evaluated = evaluate(g, values);
    if (!evaluated) return "evaluating the backward graph failed: " + evaluated.error().toString();
    const double h = 1e-6;
    for (OpId w : wrt) {
        const Op& param = g.op(w);
        const OpId gradId = grads->at(w);
        const Tensor& grad = (*evaluated)[static_cast<size_t>(gradId)];
        if (grad.type != param.type) return "gradient of " + param.name + " has type " + grad.type.toString();
        Values perturbed = values;
        auto& slot = perturbed.at(param.name).values;
        for (size_t i = 0; i < slot.size(); ++i) {
            const double saved = slot[i];
            slot[i] = saved + h;
            const double up = lossValue(forward, loss, perturbed);
            slot[i] = saved - h;
            const double down = lossValue(forward, loss, perturbed);
            slot[i] = saved;
            const double fd = (up - down) / (2 * h);
            const double ad = grad.values[i];
            if (!(std::fabs(fd - ad) <= tolerance * std::max({1.0, std::fabs(fd), std::fabs(ad)})))
                return "d loss / d " + param.name + "[" + std::to_string(i) + "]: autodiff " + std::to_string(ad) +
                       ", finite difference " + std::to_string(fd);
        }
    }
    return {};
}

// ---- hand-built graphs, one per differentiable op kind ----

struct Case {
    Graph graph;
    OpId loss = kNoOp;
    Values values;
};

using CaseBuilder = std::function<OpId(GraphBuilder&, Values&, std::mt19937_64&)>;

const std::map<std::string, CaseBuilder>& handBuiltCases() {
    static const std::map<std::string, CaseBuilder> cases = [] {
        std::map<std::string, CaseBuilder> c;
        const TensorType m23{DType::F32, {2, 3}};
        auto unary = [m23](OpKind kind, double lo, double hi) {
            return [=](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
                return b.unary(kind, randomParam(b, v, rng, "x", m23, lo, hi));
            };
        };
        c["negate"] = unary(OpKind::Negate, -1, 1);
        c["exponential"] = unary(OpKind::Exponential, -1, 1);
        c["log"] = unary(OpKind::Log, 0.5, 2);
        c["sqrt"] = unary(OpKind::Sqrt, 0.5, 2);
        c["rsqrt"] = unary(OpKind::Rsqrt, 0.5, 2);
        c["tanh"] = unary(OpKind::Tanh, -1, 1);
        c["logistic"] = unary(OpKind::Logistic, -2, 2);
        c["abs"] = unary(OpKind::Abs, -1, 1);
        c["sign"] = unary(OpKind::Sign, -1, 1);
        c["sine"] = unary(OpKind::Sine, -2, 2);
        c["cosine"] = unary(OpKind::Cosine, -2, 2);
        // erf as the HLO importer writes it (PyTorch/XLA's exact GELU): a custom-call hlo.erf.
        c["erf custom-call"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpAttrs a;
            a.target = "hlo.erf";
            return b.addOp(OpKind::CustomCall, {randomParam(b, v, rng, "x", m23, -2, 2)}, a, m23);
        };
        c["convert f32 to f64 and back"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", m23);
            return b.convert(b.exp(b.convert(x, DType::F64)), DType::F32);
        };
        c["convert through s32 has no gradient"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", m23, 0.2, 3.8);
            OpId y = randomParam(b, v, rng, "y", m23);
            return b.mul(b.convert(b.convert(x, DType::S32), DType::F32), y);
        };
        auto binary = [m23](OpKind kind, double lo0, double hi0, double lo1, double hi1) {
            return [=](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
                OpId x = randomParam(b, v, rng, "x", m23, lo0, hi0);
                OpId y = randomParam(b, v, rng, "y", m23, lo1, hi1);
                return b.binary(kind, x, y);
            };
        };
        c["add"] = binary(OpKind::Add, -1, 1, -1, 1);
        c["subtract"] = binary(OpKind::Subtract, -1, 1, -1, 1);
        c["multiply"] = binary(OpKind::Multiply, -1, 1, -1, 1);
        c["divide"] = binary(OpKind::Divide, -1, 1, 0.5, 2);
        c["maximum"] = binary(OpKind::Maximum, -1, 1, -1, 1);
        c["minimum"] = binary(OpKind::Minimum, -1, 1, -1, 1);
        c["power"] = binary(OpKind::Power, 0.5, 2, -1.5, 1.5);
        c["multiply by itself"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", m23);
            return b.add(b.mul(x, x), b.exp(x));  // two uses of x, one of them twice
        };
        c["select"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", m23);
            OpId y = randomParam(b, v, rng, "y", m23);
            OpId p = b.compare(b.exp(x), b.exp(y), ComparisonDirection::LT);
            return b.select(p, b.mul(x, y), b.sub(y, x));
        };
        c["broadcast"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {3}});
            return b.broadcast(x, {2, 3, 2}, {1});
        };
        c["broadcast with transposing map"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F64, {2, 3}});
            return b.broadcast(x, {3, 4, 2}, {2, 0});
        };
        c["broadcast of a scalar"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {}});
            return b.broadcast(x, {2, 2}, {});
        };
        c["reshape"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            return b.reshape(randomParam(b, v, rng, "x", m23), {3, 2});
        };
        c["transpose"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            return b.transpose(randomParam(b, v, rng, "x", {DType::F32, {2, 3, 4}}), {2, 0, 1});
        };
        c["slice"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            return b.slice(randomParam(b, v, rng, "x", {DType::F32, {4, 5}}), {1, 0}, {3, 4});
        };
        c["strided slice"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            return b.slice(randomParam(b, v, rng, "x", {DType::F32, {5, 7, 3}}), {1, 0, 1}, {5, 6, 3}, {2, 3, 1});
        };
        c["concatenate"] = [m23](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", m23);
            OpId y = randomParam(b, v, rng, "y", {DType::F32, {2, 1}});
            return b.concatenate({x, y, x}, 1);
        };
        auto reduce = [](ReduceKind kind, std::vector<int64_t> dims, double lo, double hi) {
            return [=](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
                return b.reduce(randomParam(b, v, rng, "x", {DType::F32, {2, 3, 4}}, lo, hi), dims, kind);
            };
        };
        c["reduce add"] = reduce(ReduceKind::Add, {0, 2}, -1, 1);
        c["reduce max"] = reduce(ReduceKind::Max, {1}, -1, 1);
        c["reduce min"] = reduce(ReduceKind::Min, {0, 1, 2}, -1, 1);
        c["reduce multiply"] = reduce(ReduceKind::Multiply, {2}, 0.5, 1.5);
        c["reduce max over duplicates"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {3}});
            return b.reduce(b.broadcast(x, {3, 4}, {0}), {1}, ReduceKind::Max);
        };
        c["matmul"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {2, 3, 4}});
            OpId w = randomParam(b, v, rng, "w", {DType::F32, {4, 5}});
            return b.matmul(x, w);
        };
        c["batched dot"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId q = randomParam(b, v, rng, "q", {DType::F64, {2, 3, 4}});
            OpId k = randomParam(b, v, rng, "k", {DType::F64, {2, 5, 4}});
            DotDimensionNumbers d{{0}, {0}, {2}, {2}};  // [b,s,h]·[b,t,h] → [b,s,t]
            return b.dot(q, k, d);
        };
        c["dot with scattered dims"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            // lhs [k1=2, f=3, b=2, k0=4], rhs [k0=4, b=2, g=2, k1=2]: contracting (3,0)↔(0,3), batch 2↔1.
            OpId l = randomParam(b, v, rng, "l", {DType::F32, {2, 3, 2, 4}});
            OpId r = randomParam(b, v, rng, "r", {DType::F32, {4, 2, 2, 2}});
            DotDimensionNumbers d{{2}, {1}, {3, 0}, {0, 3}};
            return b.dot(l, r, d);
        };
        c["dot of a value with itself"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {3, 3}});
            return b.matmul(x, x);
        };
        c["gather embedding"] = [](GraphBuilder& b, Values& v, std::mt19937_64&) {
            OpId table = b.parameter("table", {DType::F32, {5, 3}}, ParamRole::Trainable);
            v["table"] = Tensor{{DType::F32, {5, 3}}, {0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9,
                                                       -1.0, 1.1, 1.2, 1.3, 1.4, -1.5}};
            OpId ids = literal(b, {DType::S32, {2, 3}}, {4, 0, 4, 1, 4, 2});
            GatherDimensionNumbers d{{2}, {0}, {0}, 2, {1, 3}};
            return b.gather(table, ids, d);  // [2,3,3], row 4 used three times
        };
        c["gather windows"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {4, 5}});
            // Index vectors are the columns (0,2), (2,0), (1,2); in bounds, see appendBackward's header.
            OpId starts = literal(b, {DType::S64, {2, 3}}, {0, 2, 1, 2, 0, 2});
            GatherDimensionNumbers d{{0}, {0}, {0, 1}, 0, {1, 3}};  // [3(window), 3(batch)]
            return b.gather(x, starts, d);
        };
        c["scatter add"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::F32, {4, 3}});
            OpId u = randomParam(b, v, rng, "u", {DType::F32, {3, 3}});
            OpId ids = literal(b, {DType::S32, {3}}, {1, 3, 1});
            ScatterDimensionNumbers d{{1}, {0}, {0}, 1};
            return b.scatter(x, ids, b.mul(u, u), d, ReduceKind::Add);
        };
        c["bf16 chain"] = [](GraphBuilder& b, Values& v, std::mt19937_64& rng) {
            OpId x = randomParam(b, v, rng, "x", {DType::BF16, {2, 4}});
            OpId w = randomParam(b, v, rng, "w", {DType::BF16, {4, 3}});
            return b.unary(OpKind::Tanh, b.matmul(x, w));
        };
        return c;
    }();
    return cases;
}

// ---- random DAGs of differentiable ops ----

class RandomDag {
public:
    RandomDag(uint64_t seed, DType dtype) : m_rng(seed), m_b(m_graph), m_dtype(dtype) {}

    // Builds forward ops and a scalar loss; values are kept finite and moderate by construction and
    // checked afterwards (the caller discards a graph with huge values).
    void build(int steps) {
        const int params = 2 + int(m_rng() % 2);
        for (int i = 0; i < params; ++i) {
            static const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {3}, {3, 2}, {2, 3, 2}, {2, 2}, {4}};
            const auto& dims = shapes[m_rng() % shapes.size()];
            m_pool.push_back(randomParam(m_b, m_values, m_rng, "p" + std::to_string(i), {m_dtype, dims}));
        }
        for (int done = 0; done < steps;) {
            const OpId made = step(int(m_rng() % 12));
            if (made == kNoOp) continue;
            if (m_b.type(made).elements() > 48 || m_b.type(made).rank() > 3) continue;
            m_pool.push_back(made);
            ++done;
        }
        // The loss reads the last three values and a random earlier one.
        OpId loss = weightedSum(m_b, m_pool.back(), m_rng);
        for (size_t k = 2; k <= 3 && k <= m_pool.size(); ++k)
            loss = m_b.add(loss, weightedSum(m_b, m_pool[m_pool.size() - k], m_rng));
        loss = m_b.add(loss, weightedSum(m_b, m_pool[m_rng() % m_pool.size()], m_rng));
        m_loss = loss;
    }

    const Graph& graph() const { return m_graph; }
    OpId loss() const { return m_loss; }
    const Values& values() const { return m_values; }

private:
    OpId pick() { return m_pool[m_rng() % m_pool.size()]; }
    // A random pool value of the same type as x (x itself is a candidate).
    OpId pickLike(OpId x) {
        std::vector<OpId> same;
        for (OpId p : m_pool)
            if (m_b.type(p) == m_b.type(x)) same.push_back(p);
        return same[m_rng() % same.size()];
    }
    OpId splat(double value, OpId like) {
        OpId s = m_b.scalar(value, m_dtype);
        return m_b.dims(like).empty() ? s : m_b.broadcast(s, m_b.dims(like), {});
    }
    OpId positive(OpId x) { return m_b.add(m_b.mul(x, x), splat(0.5, x)); }  // ≥ 0.5
    int64_t uniform(int64_t lo, int64_t hi) { return lo + int64_t(m_rng() % uint64_t(hi - lo + 1)); }

    OpId step(int which) {
        switch (which) {
            case 0: {  // unary
                static const OpKind kinds[] = {OpKind::Negate, OpKind::Exponential, OpKind::Log,  OpKind::Sqrt,
                                               OpKind::Rsqrt,  OpKind::Tanh,        OpKind::Logistic, OpKind::Abs,
                                               OpKind::Sign,   OpKind::Sine,        OpKind::Cosine, OpKind::Convert};
                const OpKind kind = kinds[m_rng() % std::size(kinds)];
                const OpId x = pick();
                if (kind == OpKind::Log || kind == OpKind::Sqrt || kind == OpKind::Rsqrt)
                    return m_b.unary(kind, positive(x));
                if (kind == OpKind::Exponential) return m_b.exp(m_b.unary(OpKind::Tanh, x));
                if (kind == OpKind::Convert)
                    return m_b.convert(m_b.convert(x, m_dtype == DType::F32 ? DType::F64 : DType::F32), m_dtype);
                return m_b.unary(kind, x);
            }
            case 1:
            case 2: {  // binary
                static const OpKind kinds[] = {OpKind::Add,     OpKind::Subtract, OpKind::Multiply, OpKind::Divide,
                                               OpKind::Maximum, OpKind::Minimum,  OpKind::Power};
                const OpKind kind = kinds[m_rng() % std::size(kinds)];
                const OpId a = pick(), c = pickLike(a);
                if (kind == OpKind::Divide) return m_b.div(a, positive(c));
                if (kind == OpKind::Power) return m_b.binary(OpKind::Power, positive(a), m_b.unary(OpKind::Tanh, c));
                return m_b.binary(kind, a, c);
            }
            case 3: {  // select on a comparison
                const OpId a = pick(), c = pickLike(a), t = pickLike(a), f = pickLike(a);
                static const ComparisonDirection dirs[] = {ComparisonDirection::LT, ComparisonDirection::GT,
                                                           ComparisonDirection::LE, ComparisonDirection::GE};
                return m_b.select(m_b.compare(a, c, dirs[m_rng() % 4]), t, f);
            }
            case 4: {  // transpose
                const OpId x = pick();
                const int64_t rank = m_b.type(x).rank();
                if (rank < 2) return kNoOp;
                std::vector<int64_t> perm(static_cast<size_t>(rank));
                for (int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
                std::shuffle(perm.begin(), perm.end(), m_rng);
                return m_b.transpose(x, perm);
            }
            case 5: {  // reshape: flatten, or reverse the dims
                const OpId x = pick();
                std::vector<int64_t> dims = m_b.dims(x);
                if (dims.size() < 2) return kNoOp;
                if (m_rng() % 2) dims = {m_b.type(x).elements()};
                else std::reverse(dims.begin(), dims.end());
                return m_b.addOp(OpKind::Reshape, {x}, {}, TensorType{m_dtype, dims});
            }
            case 6: {  // broadcast: insert a dim of size 2, sometimes with a transposing map
                const OpId x = pick();
                const std::vector<int64_t> dims = m_b.dims(x);
                if (dims.size() > 2) return kNoOp;
                const auto at = static_cast<size_t>(uniform(0, int64_t(dims.size())));
                std::vector<int64_t> out = dims;
                out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), 2);
                std::vector<int64_t> map;
                for (size_t i = 0; i < dims.size(); ++i) map.push_back(int64_t(i < at ? i : i + 1));
                if (dims.size() == 2 && m_rng() % 2) {
                    std::swap(map[0], map[1]);
                    std::swap(out[static_cast<size_t>(map[0])], out[static_cast<size_t>(map[1])]);
                }
                return m_b.broadcast(x, out, map);
            }
            case 7: {  // reduce over a random non-empty subset of dims
                const OpId x = pick();
                const int64_t rank = m_b.type(x).rank();
                if (rank == 0) return kNoOp;
                std::vector<int64_t> dims;
                for (int64_t i = 0; i < rank; ++i)
                    if (m_rng() % 2) dims.push_back(i);
                if (dims.empty()) dims.push_back(uniform(0, rank - 1));
                static const ReduceKind kinds[] = {ReduceKind::Add, ReduceKind::Max, ReduceKind::Min, ReduceKind::Multiply};
                const ReduceKind kind = kinds[m_rng() % 4];
                if (kind == ReduceKind::Multiply) return m_b.reduce(m_b.unary(OpKind::Tanh, x), dims, kind);
                return m_b.reduce(x, dims, kind);
            }
            case 8: {  // slice with random bounds and strides
                const OpId x = pick();
                const std::vector<int64_t> dims = m_b.dims(x);
                if (dims.empty()) return kNoOp;
                std::vector<int64_t> start, limit, stride;
                for (int64_t d : dims) {
                    const int64_t s = uniform(0, d - 1), l = uniform(s + 1, d);
                    start.push_back(s);
                    limit.push_back(l);
                    stride.push_back(uniform(1, 2));
                }
                return m_b.slice(x, start, limit, stride);
            }
            case 9: {  // concatenate with a same-typed value or a slice of itself
                const OpId x = pick();
                const std::vector<int64_t> dims = m_b.dims(x);
                if (dims.empty()) return kNoOp;
                const int64_t axis = uniform(0, int64_t(dims.size()) - 1);
                const OpId other = m_rng() % 2 ? pickLike(x) : m_b.sliceAxis(x, axis, 0, 1);
                return m_b.concatenate({x, other}, axis);
            }
            case 10: {  // dot: one contracting pair, sometimes one batch pair
                const OpId a = pick(), c = pick();
                const auto& ad = m_b.dims(a);
                const auto& cd = m_b.dims(c);
                std::vector<std::pair<int64_t, int64_t>> pairs;
                for (size_t i = 0; i < ad.size(); ++i)
                    for (size_t j = 0; j < cd.size(); ++j)
                        if (ad[i] == cd[j]) pairs.emplace_back(int64_t(i), int64_t(j));
                if (pairs.empty()) return kNoOp;
                std::shuffle(pairs.begin(), pairs.end(), m_rng);
                DotDimensionNumbers d;
                d.lhsContracting = {pairs[0].first};
                d.rhsContracting = {pairs[0].second};
                for (size_t k = 1; k < pairs.size() && m_rng() % 2; ++k)
                    if (pairs[k].first != pairs[0].first && pairs[k].second != pairs[0].second) {
                        d.lhsBatch = {pairs[k].first};
                        d.rhsBatch = {pairs[k].second};
                        break;
                    }
                if (int64_t(ad.size() + cd.size()) - 2 * int64_t(1 + d.lhsBatch.size()) + int64_t(d.lhsBatch.size()) > 3)
                    return kNoOp;
                return m_b.dot(a, c, d);
            }
            default: {  // gather rows (embedding lookup) or scatter-add rows
                const OpId x = pick();
                const std::vector<int64_t> dims = m_b.dims(x);
                if (dims.empty()) return kNoOp;
                const int64_t rows = dims[0];
                if (m_rng() % 2) {
                    const int64_t k = uniform(1, 3);
                    std::vector<double> ids;
                    for (int64_t i = 0; i < k; ++i) ids.push_back(double(uniform(0, rows - 1)));
                    const OpId idx = literal(m_b, {DType::S32, {k}}, ids);
                    GatherDimensionNumbers g;
                    g.collapsedSliceDims = {0};
                    g.startIndexMap = {0};
                    g.indexVectorDim = 1;
                    g.sliceSizes = dims;
                    g.sliceSizes[0] = 1;
                    for (size_t i = 1; i < dims.size(); ++i) g.offsetDims.push_back(int64_t(i));
                    return m_b.gather(x, idx, g);
                }
                // Updates: any pool value whose trailing dims match x's.
                std::vector<OpId> candidates;
                for (OpId p : m_pool) {
                    const auto& pd = m_b.dims(p);
                    if (pd.size() == dims.size() && std::equal(pd.begin() + 1, pd.end(), dims.begin() + 1))
                        candidates.push_back(p);
                }
                const OpId upd = candidates[m_rng() % candidates.size()];
                const int64_t k = m_b.dims(upd)[0];
                std::vector<double> ids;
                for (int64_t i = 0; i < k; ++i) ids.push_back(double(uniform(0, rows - 1)));
                const OpId idx = literal(m_b, {DType::S32, {k, 1}}, ids);
                ScatterDimensionNumbers s;
                s.insertedWindowDims = {0};
                s.scatterDimsToOperandDims = {0};
                s.indexVectorDim = 1;
                for (size_t i = 1; i < dims.size(); ++i) s.updateWindowDims.push_back(int64_t(i));
                return m_b.scatter(x, idx, upd, s, ReduceKind::Add);
            }
        }
    }

    std::mt19937_64 m_rng;
    Graph m_graph;
    GraphBuilder m_b;
    DType m_dtype;
    Values m_values;
    std::vector<OpId> m_pool;
    OpId m_loss = kNoOp;
};

bool moderate(const Graph& g, const Values& values) {
    auto r = evaluate(g, values);
    if (!r) return false;
    for (const Tensor& t : *r)
        for (double v : t.values)
            if (!std::isfinite(v) || std::fabs(v) > 1e4) return false;
    return true;
}

int countKind(const Graph& g, OpKind kind, OpId from) {
    int n = 0;
    for (OpId id = from; id < g.size(); ++id) n += g.op(id).kind == kind;
    return n;
}

}  // namespace

class TestAutodiff : public QObject {
    Q_OBJECT

private slots:
    void handBuiltGraphsMatchFiniteDifferences_data() {
        QTest::addColumn<QString>("name");
        for (const auto& [name, fn] : handBuiltCases()) QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void handBuiltGraphsMatchFiniteDifferences() {
        QFETCH(QString, name);
        Graph g("case");
        GraphBuilder b(g);
        Values values;
        std::mt19937_64 rng(42);
        OpId y;
        {
            auto scope = b.scope("block");
            y = handBuiltCases().at(name.toStdString())(b, values, rng);
        }
        const OpId loss = weightedSum(b, y, rng);
        const std::string failure = checkAgainstFiniteDifferences(g, loss, values);
        QVERIFY2(failure.empty(), failure.c_str());
    }

    void randomDagsMatchFiniteDifferences_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 seed = 1; seed <= 60; ++seed) QTest::newRow(("seed " + std::to_string(seed)).c_str()) << seed;
    }
    void randomDagsMatchFiniteDifferences() {
        QFETCH(quint64, seed);
        // Retry with derived seeds until the values stay moderate (exp/power chains can blow up).
        for (uint64_t attempt = 0; attempt < 20; ++attempt) {
            RandomDag dag(seed * 1000 + attempt, seed % 2 ? DType::F32 : DType::F64);
            dag.build(8 + int(seed % 13));
            if (!moderate(dag.graph(), dag.values())) continue;
            const std::string failure = checkAgainstFiniteDifferences(dag.graph(), dag.loss(), dag.values(), 1e-5);
            QVERIFY2(failure.empty(), failure.c_str());
            return;
        }
        QFAIL("no random graph with moderate values");
    }

    void forwardDotYieldsTwoBackwardDots_data() {
        QTest::addColumn<bool>("batched");
        QTest::newRow("matmul") << false;
        QTest::newRow("batched dot needing a transpose") << true;
    }
    void forwardDotYieldsTwoBackwardDots() {
        QFETCH(bool, batched);
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::BF16, {2, 4, 8}}, ParamRole::Trainable);
        OpId w = b.parameter("w", {DType::BF16, batched ? std::vector<int64_t>{16, 2, 8} : std::vector<int64_t>{8, 16}},
                             ParamRole::Trainable);
        OpId y;
        {
            auto scope = b.scope("layers.0.fc1");
            y = batched ? b.dot(x, w, DotDimensionNumbers{{0}, {1}, {2}, {2}}) : b.matmul(x, w);
        }
        OpId loss = b.reduce(b.unary(OpKind::Tanh, y), batched ? std::vector<int64_t>{0, 1, 2} : std::vector<int64_t>{0, 1, 2});
        const OpId forwardSize = static_cast<OpId>(g.size());
        auto grads = appendBackward(g, loss, {x, w});
        QVERIFY(grads.ok());
        std::vector<const Op*> dots;
        for (OpId id = forwardSize; id < g.size(); ++id)
            if (g.op(id).kind == OpKind::Dot) dots.push_back(&g.op(id));
        QCOMPARE(dots.size(), size_t(2));
        std::set<int32_t> operands;
        for (const Op* d : dots) {
            QCOMPARE(d->derivedFrom, y);
            QCOMPARE(d->phase, Phase::Backward);
            QCOMPARE(d->scope, std::string("layers.0.fc1"));
            operands.insert(d->derivedOperand);
        }
        QCOMPARE(operands, (std::set<int32_t>{0, 1}));
        // Gradients have the forward dtype and shape.
        QCOMPARE(g.op(grads->at(x)).type, g.op(x).type);
        QCOMPARE(g.op(grads->at(w)).type, g.op(w).type);
    }

    void onlyOpsBetweenWrtAndLossAreDifferentiated() {
        Graph g;
        GraphBuilder b(g);
        OpId w = b.parameter("w", {DType::F32, {4}}, ParamRole::Trainable);
        OpId data = b.parameter("data", {DType::F32, {4}}, ParamRole::Input);
        OpId unused = b.parameter("unused", {DType::F32, {3}}, ParamRole::Trainable);
        OpId dataOnly = b.exp(b.unary(OpKind::Tanh, data));  // no wrt op upstream
        OpId mixed = b.mul(w, dataOnly);
        OpId dead = b.log(w);  // not on the loss path
        (void)dead;
        OpId loss = b.reduce(mixed, {0});
        const OpId forwardSize = static_cast<OpId>(g.size());
        auto grads = appendBackward(g, loss, {w, unused});
        QVERIFY(grads.ok());
        for (OpId id = forwardSize; id < g.size(); ++id) {
            const OpId from = g.op(id).derivedFrom;
            QVERIFY2(from == loss || from == mixed || from == unused,
                     ("unexpected backward op derived from " + g.op(from).name).c_str());
        }
        // The unused parameter gets a zero gradient.
        auto values = evaluate(g, {{"w", Tensor{{DType::F32, {4}}, {1, 2, 3, 4}}},
                                   {"data", Tensor{{DType::F32, {4}}, {0, 0, 0, 0}}},
                                   {"unused", Tensor{{DType::F32, {3}}, {5, 6, 7}}}});
        QVERIFY(values.ok());
        QCOMPARE((*values)[size_t(grads->at(unused))].values, (std::vector<double>{0, 0, 0}));
        QCOMPARE((*values)[size_t(grads->at(w))].values, std::vector<double>(4, std::exp(0.0)));
    }

    void accumulationAddsHaveNoOperandIndex() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {3}}, ParamRole::Trainable);
        OpId y = b.add(b.exp(x), b.unary(OpKind::Sine, x));
        OpId loss = b.reduce(y, {0});
        const OpId forwardSize = static_cast<OpId>(g.size());
        auto grads = appendBackward(g, loss, {x});
        QVERIFY(grads.ok());
        const Op& total = g.op(grads->at(x));
        QCOMPARE(total.kind, OpKind::Add);
        QCOMPARE(total.derivedFrom, x);
        QCOMPARE(total.derivedOperand, -1);
        // The seed: a backward constant derived from the loss.
        QCOMPARE(g.op(forwardSize).kind, OpKind::Constant);
        QCOMPARE(g.op(forwardSize).derivedFrom, loss);
        QCOMPARE(g.op(forwardSize).derivedOperand, -1);
    }

    void badInputsAreErrors_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("code");
        QTest::newRow("non-scalar loss") << "vector" << "autodiff.bad_loss";
        QTest::newRow("integer loss") << "integer" << "autodiff.bad_loss";
        QTest::newRow("missing loss") << "missing" << "autodiff.bad_loss";
        QTest::newRow("missing wrt") << "wrt" << "autodiff.bad_wrt";
        QTest::newRow("custom-call on the path") << "custom-call" << "autodiff.not_differentiable";
        QTest::newRow("scatter max on the path") << "scatter-max" << "autodiff.not_differentiable";
    }
    void badInputsAreErrors() {
        QFETCH(QString, what);
        QFETCH(QString, code);
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {3}}, ParamRole::Trainable);
        OpId loss = b.reduce(x, {0});
        std::vector<OpId> wrt = {x};
        if (what == "vector") loss = b.exp(x);
        if (what == "integer") loss = b.reduce(b.convert(x, DType::S32), {0});
        if (what == "missing") loss = 99;
        if (what == "wrt") wrt.push_back(-3);
        if (what == "custom-call") {
            OpAttrs a;
            a.target = "opaque";
            loss = b.reduce(b.addOp(OpKind::CustomCall, {x}, a, {DType::F32, {3}}), {0});
        }
        if (what == "scatter-max") {
            OpId ids = literal(b, {DType::S32, {1}}, {0});
            ScatterDimensionNumbers d{{}, {0}, {0}, 1};
            loss = b.reduce(b.scatter(x, ids, b.reshape(b.reduce(x, {0}), {1}), d, ReduceKind::Max), {0});
        }
        const Graph before = g;
        auto r = appendBackward(g, loss, wrt);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QVERIFY2(g == before, "a failed appendBackward must leave the graph unchanged");
    }

    void customCallOffThePathIsFine() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {3}}, ParamRole::Trainable);
        OpId data = b.parameter("data", {DType::F32, {3}}, ParamRole::Input);
        OpAttrs a;
        a.target = "opaque";
        OpId opaque = b.addOp(OpKind::CustomCall, {data}, a, {DType::F32, {3}});  // no gradient needed
        OpId loss = b.reduce(b.mul(x, opaque), {0});
        QVERIFY(appendBackward(g, loss, {x}).ok());
    }

    void backwardOpCountGrowsLinearly() {
        // A deep MLP: the number of backward ops per layer must be constant, and a 1000-layer training
        // step (≈ 85k ops, the size of a GPT-3 175B step) must be built quickly (timing printed, not
        // asserted: benchmarks are programs, not tests).
        auto build = [](int layers, Graph& g) {
            GraphBuilder b(g);
            OpId h = b.parameter("x", {DType::F32, {2, 8}}, ParamRole::Input);
            for (int l = 0; l < layers; ++l) {
                auto scope = b.scope("layers." + std::to_string(l));
                OpId w = b.parameter("w" + std::to_string(l), {DType::F32, {8, 8}}, ParamRole::Trainable);
                OpId bias = b.parameter("b" + std::to_string(l), {DType::F32, {8}}, ParamRole::Trainable);
                h = b.unary(OpKind::Tanh, b.add(b.matmul(h, w), b.broadcast(bias, {2, 8}, {1})));
            }
            return b.reduce(h, {0, 1});
        };
        std::vector<int64_t> added;
        for (int layers : {10, 20, 40}) {
            Graph g;
            const OpId loss = build(layers, g);
            const int64_t before = g.size();
            QVERIFY(appendBackward(g, loss, g.parameters(ParamRole::Trainable)).ok());
            added.push_back(g.size() - before);
        }
        QCOMPARE(added[2] - added[1], 2 * (added[1] - added[0]));

        Graph big;
        const OpId loss = build(1000, big);
        const auto start = std::chrono::steady_clock::now();
        QVERIFY(appendTrainingStep(big, loss).ok());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("training step for a 1000-layer MLP: %lld ops in total, backward + AdamW appended in %.3f s",
              static_cast<long long>(big.size()), seconds);
        QCOMPARE(countKind(big, OpKind::Dot, 0), 1000 + 2 * 1000 - 1);  // dX of layer 0 is not needed
    }

    void adamWStepMatchesScalarComputation_data() {
        QTest::addColumn<int>("dtype");
        QTest::newRow("f32 parameter") << int(DType::F32);
        QTest::newRow("bf16 parameter with master copy") << int(DType::BF16);
    }
    void adamWStepMatchesScalarComputation() {
        QFETCH(int, dtype);
        const auto paramType = static_cast<DType>(dtype);
        // loss = Σ_i c_i · w_i², so dloss/dw_i = 2 c_i w_i.
        Graph g("adam");
        GraphBuilder b(g);
        OpId w;
        {
            auto scope = b.scope("layer");
            w = b.parameter("w", {paramType, {2, 2}}, ParamRole::Trainable);
        }
        OpId c = literal(b, {paramType, {2, 2}}, {1.0, -0.5, 2.0, 0.25});
        OpId loss = b.reduce(b.mul(c, b.mul(w, w)), {0, 1});
        const OpId forwardSize = static_cast<OpId>(g.size());

        AdamWConfig config;
        config.learningRate = 0.01;
        config.beta1 = 0.8;
        config.beta2 = 0.9;
        config.epsilon = 1e-3;
        config.weightDecay = 0.05;
        config.step = 3;
        QVERIFY(appendTrainingStep(g, loss, config).ok());
        QVERIFY(g.validate().ok());

        const bool master = paramType != DType::F32;
        const OpId m = g.find("w.adam_m"), v = g.find("w.adam_v"), w32 = g.find("w.master");
        QVERIFY(m != kNoOp && v != kNoOp);
        QCOMPARE(w32 != kNoOp, master);
        QCOMPARE(g.op(m).role, ParamRole::OptimizerState);
        QCOMPARE(g.op(m).type, (TensorType{DType::F32, {2, 2}}));
        QCOMPARE(g.outputs().size(), size_t(master ? 5 : 4));
        QCOMPARE(g.outputs()[0], loss);

        // Phases: forward, then backward, then optimizer ops derived from w in w's scope.
        bool seenOptimizer = false;
        for (OpId id = forwardSize; id < g.size(); ++id) {
            const Op& op = g.op(id);
            if (op.phase == Phase::Optimizer) {
                seenOptimizer = true;
                QCOMPARE(op.derivedFrom, w);
                QCOMPARE(op.scope, std::string("layer"));
            } else {
                QCOMPARE(op.phase, Phase::Backward);
                QVERIFY(!seenOptimizer);
            }
        }
        QVERIFY(seenOptimizer);

        const std::vector<double> w0 = {0.5, -1.0, 0.75, 2.0}, m0 = {0.1, 0.0, -0.2, 0.3}, v0 = {0.01, 0.02, 0.0, 0.5};
        const std::vector<double> cs = {1.0, -0.5, 2.0, 0.25};
        const std::vector<double> master0 = {0.5001, -1.0002, 0.7503, 2.0004};  // slightly off the bf16 value
        Values values = {{"w", Tensor{{paramType, {2, 2}}, w0}},
                         {"w.adam_m", Tensor{{DType::F32, {2, 2}}, m0}},
                         {"w.adam_v", Tensor{{DType::F32, {2, 2}}, v0}}};
        if (master) values["w.master"] = Tensor{{DType::F32, {2, 2}}, master0};
        auto result = evaluate(g, values);
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().toString().c_str());

        const auto& outs = g.outputs();
        const auto& wNext = (*result)[size_t(outs[1])].values;
        const auto& mNext = (*result)[size_t(outs[master ? 3 : 2])].values;
        const auto& vNext = (*result)[size_t(outs[master ? 4 : 3])].values;
        for (size_t i = 0; i < 4; ++i) {
            const double grad = 2 * cs[i] * w0[i];
            const double mi = config.beta1 * m0[i] + (1 - config.beta1) * grad;
            const double vi = config.beta2 * v0[i] + (1 - config.beta2) * grad * grad;
            const double mHat = mi / (1 - std::pow(config.beta1, 3));
            const double vHat = vi / (1 - std::pow(config.beta2, 3));
            const double weight = master ? master0[i] : w0[i];
            const double next = weight - config.learningRate * (mHat / (std::sqrt(vHat) + config.epsilon) +
                                                                config.weightDecay * weight);
            QVERIFY(std::fabs(mNext[i] - mi) < 1e-12);
            QVERIFY(std::fabs(vNext[i] - vi) < 1e-12);
            QVERIFY2(std::fabs(wNext[i] - next) < 1e-12,
                     (std::to_string(wNext[i]) + " vs " + std::to_string(next)).c_str());
            if (master) QVERIFY(std::fabs((*result)[size_t(outs[2])].values[i] - next) < 1e-12);
        }
        QCOMPARE(g.op(outs[1]).type.dtype, paramType);
    }

    void adamWRejectsTakenNamesWithoutChangingTheGraph() {
        Graph g;
        GraphBuilder b(g);
        OpId w = b.parameter("w", {DType::F32, {2}}, ParamRole::Trainable);
        b.parameter("w.adam_m", {DType::F32, {2}}, ParamRole::OptimizerState);
        OpId loss = b.reduce(b.mul(w, w), {0});
        const Graph before = g;
        auto s = appendTrainingStep(g, loss);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("autodiff.name_taken"));
        QVERIFY(g == before);
    }
};

QTEST_GUILESS_MAIN(TestAutodiff)
#include "tst_autodiff.moc"
