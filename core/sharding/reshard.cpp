#include "sharding/reshard.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace cfp {

namespace {

using AxisList = TensorSharding::AxisList;

bool isPrefix(const AxisList& prefix, const AxisList& of, size_t length) {
    if (prefix.size() != length || of.size() < length) return false;
    return std::equal(prefix.begin(), prefix.end(), of.begin());
}

size_t commonPrefix(const AxisList& a, const AxisList& b) {
    size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    return k;
}

// ceil(numerator/n · b) for numerator ≤ 2(n−1), without overflow for b ≤ 2^62, n ≤ 2^30.
int64_t scaledBytes(int64_t b, int64_t numerator, int64_t n) {
    const int64_t q = b / n;
    const int64_t r = b % n;
    return numerator * q + (numerator * r + n - 1) / n;
}

class Planner {
public:
    Planner(const Mesh& mesh, const TensorType& type, const TensorSharding& from, const TensorSharding& to)
        : m_mesh(mesh), m_to(to), m_current(from), m_tensorBytes(type.bytes()) {}

    Result<std::vector<CollectiveStep>> run() {
        // Each step either places an axis at its final position (never undone) or removes an axis
        // from a non-final position; a generous bound turns a logic error into an error value.
        const size_t maxSteps = 4 * (m_mesh.axes().size() + 1);
        while (!(m_current == m_to)) {
            if (m_steps.size() > maxSteps)
                return makeError("reshard.internal", "resharding plan did not converge", m_current.toString());
            auto step = nextStep();
            if (!step) return step.error();
            m_current = step->after;
            m_steps.push_back(std::move(*step));
        }
        return m_steps;
    }

private:
    // Axes in mesh order, so that ties resolve the same way on every run.
    const std::vector<MeshAxis>& axes() const { return m_mesh.axes(); }

    int64_t sizeOf(const std::string& axis) const { return m_mesh.axisSize(axis).value_or(1); }

    // Is `dim` of the current sharding exactly the first `position` axes of the target's `dim`?
    bool ready(int64_t dim, int64_t position) const {
        return isPrefix(m_current.dimAxes(dim), m_to.dimAxes(dim), static_cast<size_t>(position));
    }

    int64_t messageBytes(const std::string& axis) const {
        int64_t b = m_tensorBytes;
        for (const std::string& other : m_current.splitAxes())
            if (other != axis) b /= sizeOf(other);
        return b;
    }

    Result<CollectiveStep> makeStep(CollectiveKind kind, const std::string& axis, int64_t dim, int64_t toDim,
                                    Result<TensorSharding> after) const {
        if (!after) return after.error();
        CollectiveStep step;
        step.kind = kind;
        step.axis = axis;
        step.axisSize = sizeOf(axis);
        step.dim = dim;
        step.toDim = toDim;
        step.messageBytes = messageBytes(axis);
        const int64_t n = step.axisSize;
        switch (kind) {
        case CollectiveKind::AllGather:
        case CollectiveKind::ReduceScatter: step.sendBytesPerDevice = scaledBytes(step.messageBytes, n - 1, n); break;
        case CollectiveKind::AllReduce: step.sendBytesPerDevice = scaledBytes(step.messageBytes, 2 * (n - 1), n); break;
        case CollectiveKind::AllToAll:
            step.sendBytesPerDevice = scaledBytes(step.messageBytes / n, n - 1, n);
            break;
        case CollectiveKind::LocalSlice: step.sendBytesPerDevice = 0; break;
        }
        step.before = m_current;
        step.after = std::move(*after);
        return step;
    }

    Result<TensorSharding> appended(const TensorSharding& s, int64_t dim, const std::string& axis) const {
        AxisList list = s.dimAxes(dim);
        list.push_back(axis);
        return s.withDimAxes(dim, std::move(list));
    }

    Result<TensorSharding> withoutPartial(const TensorSharding& s, const std::string& axis) const {
        AxisList partial;
        for (const std::string& p : s.partialAxes())
            if (p != axis) partial.push_back(p);
        return s.withPartialAxes(std::move(partial));
    }

    // Innermost axis of `dim` when it lies beyond the prefix shared with the target.
    std::optional<std::string> excessAxis(int64_t dim) const {
        const AxisList& cur = m_current.dimAxes(dim);
        if (cur.size() > commonPrefix(cur, m_to.dimAxes(dim))) return cur.back();
        return std::nullopt;
    }

    Result<CollectiveStep> nextStep() const {
        const int64_t rank = m_current.rank();

        // 1. Free local slices, in target dim order then position.
        for (int64_t d = 0; d < rank; ++d) {
            const AxisList& target = m_to.dimAxes(d);
            const size_t k = m_current.dimAxes(d).size();
            if (k < target.size() && ready(d, static_cast<int64_t>(k)) &&
                m_current.use(target[k]).kind == AxisUse::Kind::Unused)
                return makeStep(CollectiveKind::LocalSlice, target[k], d, -1, appended(m_current, d, target[k]));
        }

        // 2. Reduce-scatter pending sums onto the dim the target splits over that axis.
        for (const MeshAxis& axis : axes()) {
            if (!m_current.isPartialOver(axis.name) || m_to.isPartialOver(axis.name)) continue;
            AxisUse want = m_to.use(axis.name);
            if (want.kind == AxisUse::Kind::Dim && ready(want.dim, want.position)) {
                auto reduced = withoutPartial(m_current, axis.name);
                if (!reduced) return reduced.error();
                return makeStep(CollectiveKind::ReduceScatter, axis.name, want.dim, -1,
                                appended(*reduced, want.dim, axis.name));
            }
        }

        // 3. All-reduce the pending sums that cannot be reduce-scattered now.
        for (const MeshAxis& axis : axes()) {
            if (m_current.isPartialOver(axis.name) && !m_to.isPartialOver(axis.name))
                return makeStep(CollectiveKind::AllReduce, axis.name, -1, -1, withoutPartial(m_current, axis.name));
        }

        // 4. Move an excess innermost axis straight to its target dim.
        for (int64_t d = 0; d < rank; ++d) {
            auto axis = excessAxis(d);
            if (!axis) continue;
            AxisUse want = m_to.use(*axis);
            if (want.kind == AxisUse::Kind::Dim && want.dim != d && ready(want.dim, want.position)) {
                AxisList source = m_current.dimAxes(d);
                source.pop_back();
                auto removed = m_current.withDimAxes(d, std::move(source));
                if (!removed) return removed.error();
                return makeStep(CollectiveKind::AllToAll, *axis, d, want.dim, appended(*removed, want.dim, *axis));
            }
        }

        // 5. Gather the cheapest excess innermost axis.
        std::optional<CollectiveStep> best;
        for (int64_t d = 0; d < rank; ++d) {
            auto axis = excessAxis(d);
            if (!axis) continue;
            AxisList source = m_current.dimAxes(d);
            source.pop_back();
            auto step = makeStep(CollectiveKind::AllGather, *axis, d, -1, m_current.withDimAxes(d, std::move(source)));
            if (!step) return step.error();
            if (!best || step->sendBytesPerDevice < best->sendBytesPerDevice) best = std::move(*step);
        }
        if (best) return std::move(*best);

        return makeError("reshard.internal", "no resharding step applies from " + m_current.toString() + " to " +
                                                 m_to.toString(),
                         m_current.toString());
    }

    const Mesh& m_mesh;
    const TensorSharding& m_to;
    TensorSharding m_current;
    int64_t m_tensorBytes;
    std::vector<CollectiveStep> m_steps;
};

}  // namespace

std::string_view collectiveKindName(CollectiveKind kind) {
    switch (kind) {
    case CollectiveKind::AllGather: return "all-gather";
    case CollectiveKind::ReduceScatter: return "reduce-scatter";
    case CollectiveKind::AllReduce: return "all-reduce";
    case CollectiveKind::AllToAll: return "all-to-all";
    case CollectiveKind::LocalSlice: return "local-slice";
    }
    return "?";
}

std::string CollectiveStep::toString() const {
    std::string out = std::string(collectiveKindName(kind)) + " " + axis;
    if (kind == CollectiveKind::AllToAll) {
        out += " dim " + std::to_string(dim) + "->" + std::to_string(toDim);
    } else if (dim >= 0) {
        out += " dim " + std::to_string(dim);
    }
    out += ": b=" + std::to_string(messageBytes) + " send=" + std::to_string(sendBytesPerDevice) + " " +
           before.toString() + " -> " + after.toString();
    return out;
}

bool ReshardPlan::isNoCommunication() const {
    return std::all_of(steps.begin(), steps.end(),
                       [](const CollectiveStep& s) { return s.kind == CollectiveKind::LocalSlice; });
}

int64_t ReshardPlan::sendBytesPerDevice() const {
    int64_t total = 0;
    for (const CollectiveStep& s : steps) total += s.sendBytesPerDevice;
    return total;
}

std::string ReshardPlan::toString() const {
    std::string out;
    for (const CollectiveStep& s : steps) out += s.toString() + "\n";
    return out;
}

Result<ReshardPlan> planReshard(const TensorSharding& from, const TensorSharding& to, const Mesh& mesh,
                                const TensorType& type) {
    auto fromOk = validateSharding(from, mesh, type);
    if (!fromOk) return fromOk.error().withContext("source sharding");
    auto toOk = validateSharding(to, mesh, type);
    if (!toOk) return toOk.error().withContext("target sharding");
    for (const std::string& axis : to.partialAxes())
        if (!from.isPartialOver(axis))
            return makeError("reshard.partial_target",
                             "target " + to.toString() + " has a pending sum over " + axis +
                                 " that the source lacks; only a contraction creates partial sums",
                             to.toString());
    ReshardPlan plan{from, to, {}};
    auto steps = Planner(mesh, type, from, to).run();
    if (!steps) return steps.error();
    plan.steps = std::move(*steps);
    return plan;
}

double collectiveSeconds(const CollectiveStep& step, int64_t axisSize, double alphaSeconds, double bytesPerSecond) {
    if (axisSize <= 1 || step.kind == CollectiveKind::LocalSlice) return 0.0;
    const double n = static_cast<double>(axisSize);
    const double b = static_cast<double>(step.messageBytes);
    const double beta = 1.0 / bytesPerSecond;
    switch (step.kind) {
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter: return (n - 1) * alphaSeconds + (n - 1) / n * b * beta;
    case CollectiveKind::AllReduce: return 2 * (n - 1) * alphaSeconds + 2 * (n - 1) / n * b * beta;
    case CollectiveKind::AllToAll: return (n - 1) * alphaSeconds + (n - 1) / (n * n) * b * beta;
    case CollectiveKind::LocalSlice: return 0.0;
    }
    return 0.0;
}

}  // namespace cfp
