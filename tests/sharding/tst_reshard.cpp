// Resharding planner: hand-worked plans (kinds, axes, dims, message and sent bytes), the α-β cost
// formulas of DESIGN.md §6 computed by hand, errors, and an exhaustive check on small meshes that
// every plan is a chain of valid shardings whose steps move data exactly as their collective kind
// says (checked on the index ranges each device holds, independently of the planner).
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>

#include "sharding/reshard.h"

#include "must.h"

using namespace cfp;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TensorSharding s(const std::string& text) { return test::must(parseSharding(text), text); }

Mesh m(const char* text) { return test::must(parseMesh(text), text); }

TensorType t(const char* text) { return test::must(parseTensorType(text), text); }

std::string bytesText(int64_t bytes) {
    if (bytes != 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "Mi";
    return std::to_string(bytes);
}

// "all-gather(x, dim 0) b=128Mi send=112Mi", steps joined by "; ".
QString describe(const ReshardPlan& plan) {
    std::string out;
    for (const CollectiveStep& step : plan.steps) {
        if (!out.empty()) out += "; ";
        out += std::string(collectiveKindName(step.kind)) + "(" + step.axis;
        if (step.kind == CollectiveKind::AllToAll)
            out += ", dim " + std::to_string(step.dim) + "->" + std::to_string(step.toDim);
        else if (step.dim >= 0)
            out += ", dim " + std::to_string(step.dim);
        out += ") b=" + bytesText(step.messageBytes) + " send=" + bytesText(step.sendBytesPerDevice);
    }
    return QString::fromStdString(out);
}

// ---- Independent oracle: which index range of the global tensor each device holds. ----

struct Range {
    int64_t begin = 0;
    int64_t end = 0;
    bool operator==(const Range&) const = default;
};
using Block = std::vector<Range>;

// Straight from the definition: along a dim split over axes a1..ak (major first), the block index is
// the mixed-radix number (c(a1), …, c(ak)) of the device's coordinates.
Block blockOf(const TensorSharding& sh, const Mesh& mesh, const TensorType& type, int64_t device) {
    std::vector<int64_t> coords = *mesh.coordinates(device);
    Block block;
    for (int64_t d = 0; d < sh.rank(); ++d) {
        int64_t index = 0;
        int64_t count = 1;
        for (const std::string& axis : sh.dimAxes(d)) {
            const int64_t i = *mesh.axisIndex(axis);
            index = index * mesh.axes()[size_t(i)].size + coords[size_t(i)];
            count *= mesh.axes()[size_t(i)].size;
        }
        const int64_t len = type.dims[size_t(d)] / count;
        block.push_back({index * len, index * len + len});
    }
    return block;
}

Range piece(Range r, int64_t k, int64_t n) {
    const int64_t len = (r.end - r.begin) / n;
    return {r.begin + k * len, r.begin + (k + 1) * len};
}

// Checks one step against the semantics of its kind on every device. Returns an empty string or
// the first violation.
std::string checkStep(const CollectiveStep& step, const Mesh& mesh, const TensorType& type) {
    const int64_t axisIndex = *mesh.axisIndex(step.axis);
    const int64_t n = step.axisSize;
    if (n != mesh.axes()[size_t(axisIndex)].size) return "wrong axis size";
    for (int64_t dev = 0; dev < mesh.deviceCount(); ++dev) {
        const Block before = blockOf(step.before, mesh, type, dev);
        const Block after = blockOf(step.after, mesh, type, dev);
        const int64_t k = (*mesh.coordinates(dev))[size_t(axisIndex)];
        const std::vector<int64_t> group = *mesh.axisGroup(dev, step.axis);
        for (int64_t d = 0; d < step.before.rank(); ++d) {
            const size_t du = size_t(d);
            Range want = before[du];
            switch (step.kind) {
            case CollectiveKind::AllReduce: break;
            case CollectiveKind::LocalSlice:
            case CollectiveKind::ReduceScatter:
                if (d == step.dim) want = piece(before[du], k, n);
                break;
            case CollectiveKind::AllGather:
                if (d == step.dim) {
                    // Member j of the group must hold piece j of the gathered range.
                    for (int64_t j = 0; j < n; ++j)
                        if (!(blockOf(step.before, mesh, type, group[size_t(j)])[du] == piece(after[du], j, n)))
                            return "all-gather pieces are not contiguous in axis order";
                    want = after[du];
                }
                break;
            case CollectiveKind::AllToAll:
                if (d == step.dim) {
                    for (int64_t j = 0; j < n; ++j)
                        if (!(blockOf(step.before, mesh, type, group[size_t(j)])[du] == piece(after[du], j, n)))
                            return "all-to-all source pieces are not contiguous in axis order";
                    want = after[du];
                } else if (d == step.toDim) {
                    want = piece(before[du], k, n);
                }
                break;
            }
            if (!(want == after[du])) return "device " + std::to_string(dev) + " holds the wrong range on dim " +
                                                std::to_string(d) + " after " + step.toString();
        }
    }
    // Pending sums: only reductions remove one, and only their own.
    TensorSharding::AxisList partial = step.before.partialAxes();
    if (step.kind == CollectiveKind::AllReduce || step.kind == CollectiveKind::ReduceScatter) {
        if (!step.before.isPartialOver(step.axis)) return "reduction over an axis that is not pending";
        std::erase(partial, step.axis);
    }
    if (partial != step.after.partialAxes()) return "pending sums changed unexpectedly";
    return {};
}

// Every sharding of a tensor of `rank` dims on `mesh`: each axis unused, pending, or on one dim, in
// every order within a dim.
std::vector<TensorSharding> allShardings(const Mesh& mesh, int64_t rank) {
    std::vector<TensorSharding> out;
    const size_t axes = mesh.axes().size();
    std::vector<int64_t> role(axes, 0);  // 0 unused, 1 partial, 2+d on dim d
    const int64_t roles = 2 + rank;
    int64_t total = 1;
    for (size_t i = 0; i < axes; ++i) total *= roles;
    for (int64_t code = 0; code < total; ++code) {
        int64_t c = code;
        for (size_t i = 0; i < axes; ++i) {
            role[i] = c % roles;
            c /= roles;
        }
        // Per dim, the axes it holds; try every permutation.
        std::vector<std::vector<std::string>> dims(static_cast<size_t>(rank));
        TensorSharding::AxisList partial;
        for (size_t i = 0; i < axes; ++i) {
            if (role[i] == 1) partial.push_back(mesh.axes()[i].name);
            if (role[i] >= 2) dims[size_t(role[i] - 2)].push_back(mesh.axes()[i].name);
        }
        std::function<void(size_t)> permute = [&](size_t d) {
            if (d == dims.size()) {
                out.push_back(*TensorSharding::create(dims, partial));
                return;
            }
            std::sort(dims[d].begin(), dims[d].end());
            do permute(d + 1);
            while (std::next_permutation(dims[d].begin(), dims[d].end()));
        };
        permute(0);
    }
    return out;
}

// Cost of the plan that needs no thought: all-reduce every pending sum the target drops, gather
// everything the target does not hold identically, slice the rest.
int64_t naiveSendBytes(const TensorSharding& from, const TensorSharding& to, const Mesh& mesh,
                       const TensorType& type) {
    int64_t total = 0;
    int64_t b = type.bytes();
    for (const std::string& axis : from.splitAxes()) b /= *mesh.axisSize(axis);
    for (const std::string& axis : from.partialAxes()) {
        if (to.isPartialOver(axis)) continue;
        const int64_t n = *mesh.axisSize(axis);
        total += 2 * (n - 1) * b / n;
    }
    for (int64_t d = 0; d < from.rank(); ++d) {
        if (from.dimAxes(d) == to.dimAxes(d)) continue;
        for (auto it = from.dimAxes(d).rbegin(); it != from.dimAxes(d).rend(); ++it) {
            const int64_t n = *mesh.axisSize(*it);
            b *= n;
            total += (n - 1) * b / n;
        }
    }
    return total;
}

}  // namespace

class TestReshard : public QObject {
    Q_OBJECT

private slots:
    // X f32[8,1024,4096]: B = 8·1024·4096·4 bytes = 128 MiB throughout.
    void handWorkedPlans_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("plan");

        // ---- 1-D mesh {x=8}. ----
        // Each device holds a 16 MiB batch slice; the ring all-gather over 8 devices has b = 128 MiB
        // and every device forwards 7 chunks of 16 MiB = 112 MiB = 7/8·b.
        QTest::newRow("gather batch") << "8" << "[{x},{},{}]" << "[{},{},{}]"
                                      << "all-gather(x, dim 0) b=128Mi send=112Mi";
        // Data-parallel style all-reduce of a full-size pending sum: 2·7/8·128 MiB = 224 MiB sent.
        QTest::newRow("all-reduce") << "8" << "[{},{},{}] partial{x}" << "[{},{},{}]"
                                    << "all-reduce(x) b=128Mi send=224Mi";
        // Row-parallel output straight into a column split: reduce-scatter, 7/8·128 MiB sent.
        QTest::newRow("reduce-scatter") << "8" << "[{},{},{}] partial{x}" << "[{},{},{x}]"
                                        << "reduce-scatter(x, dim 2) b=128Mi send=112Mi";
        QTest::newRow("reduce-scatter dim 0") << "8" << "[{},{},{}] partial{x}" << "[{x},{},{}]"
                                              << "reduce-scatter(x, dim 0) b=128Mi send=112Mi";
        // Batch split to hidden split: each device keeps 1/8 of its 16 MiB shard and sends 7/8 of it:
        // 7/8·16 MiB = 14 MiB = (n−1)/n²·b.
        QTest::newRow("all-to-all") << "8" << "[{x},{},{}]" << "[{},{},{x}]"
                                    << "all-to-all(x, dim 0->2) b=128Mi send=14Mi";
        // Replicated to split: each device keeps its piece, nothing moves.
        QTest::newRow("local slice") << "8" << "[{},{},{}]" << "[{},{x},{}]" << "local-slice(x, dim 1) b=128Mi send=0";
        QTest::newRow("no-op") << "8" << "[{x},{},{}]" << "[{x},{},{}]" << "";
        QTest::newRow("pending sum kept") << "8" << "[{},{},{}] partial{x}" << "[{},{},{}] partial{x}" << "";

        // ---- 2-D mesh {dp=2, tp=4}. ----
        // Gathering tp while dp still splits dim 0: one tp group holds B/2 = 64 MiB; 3/4 of it is sent.
        QTest::newRow("2-D gather inner") << "dp=2,tp=4" << "[{dp},{},{tp}]" << "[{dp},{},{}]"
                                          << "all-gather(tp, dim 2) b=64Mi send=48Mi";
        // Two axes on one dim are gathered innermost first: tp (b = B/2), then dp (b = B).
        QTest::newRow("2-D gather both, innermost first")
            << "dp=2,tp=4" << "[{dp,tp},{},{}]" << "[{},{},{}]"
            << "all-gather(tp, dim 0) b=64Mi send=48Mi; all-gather(dp, dim 0) b=128Mi send=64Mi";
        // Keeping only the MAJOR axis' counterpart is not a prefix: {dp,tp} → {tp} gathers both
        // (gathering dp alone would leave strided pieces) and slices tp back for free.
        QTest::newRow("2-D non-prefix target")
            << "dp=2,tp=4" << "[{dp,tp},{},{}]" << "[{tp},{},{}]"
            << "all-gather(tp, dim 0) b=64Mi send=48Mi; all-gather(dp, dim 0) b=128Mi send=64Mi; "
               "local-slice(tp, dim 0) b=128Mi send=0";
        // Dropping the minor axis only: {dp,tp} → {dp} is one all-gather over tp.
        QTest::newRow("2-D keep prefix") << "dp=2,tp=4" << "[{dp,tp},{},{}]" << "[{dp},{},{}]"
                                         << "all-gather(tp, dim 0) b=64Mi send=48Mi";
        // Row-parallel inside data parallel: reduce-scatter within each tp group (b = B/2).
        QTest::newRow("2-D reduce-scatter") << "dp=2,tp=4" << "[{dp},{},{}] partial{tp}" << "[{dp},{},{tp}]"
                                            << "reduce-scatter(tp, dim 2) b=64Mi send=48Mi";
        // Reduce-scatter appends tp innermost on dim 0: {dp} → {dp,tp}.
        QTest::newRow("2-D reduce-scatter same dim") << "dp=2,tp=4" << "[{dp},{},{}] partial{tp}"
                                                     << "[{dp,tp},{},{}]"
                                                     << "reduce-scatter(tp, dim 0) b=64Mi send=48Mi";
        // The pending sum is resolved first, while dp still shrinks it: all-reduce at b = 64 MiB
        // (send 2·3/4·64 = 96 MiB), then all-gather dp at b = 128 MiB (send 64 MiB).
        QTest::newRow("2-D all-reduce then gather")
            << "dp=2,tp=4" << "[{dp},{},{}] partial{tp}" << "[{},{},{}]"
            << "all-reduce(tp) b=64Mi send=96Mi; all-gather(dp, dim 0) b=128Mi send=64Mi";
        // The target wants dp on dim 0 but tp is there: the pending dp sum cannot be reduce-scattered
        // into place, so it is all-reduced while tp still splits (b = 32 MiB, send 2·1/2·32 = 32 MiB);
        // then tp is gathered (b = 128 MiB, send 96 MiB) and dp sliced in.
        QTest::newRow("2-D partial onto a busy dim")
            << "dp=2,tp=4" << "[{tp},{},{}] partial{dp}" << "[{dp},{},{}]"
            << "all-reduce(dp) b=32Mi send=32Mi; all-gather(tp, dim 0) b=128Mi send=96Mi; "
               "local-slice(dp, dim 0) b=128Mi send=0";
        // Two pending sums, both reduce-scattered, in mesh order: dp at b = B (send 1/2·128 = 64
        // MiB), then tp with dp now splitting: b = 64 MiB, send 48 MiB.
        QTest::newRow("2-D two reduce-scatters")
            << "dp=2,tp=4" << "[{},{},{}] partial{dp,tp}" << "[{dp},{},{tp}]"
            << "reduce-scatter(dp, dim 0) b=128Mi send=64Mi; reduce-scatter(tp, dim 2) b=64Mi send=48Mi";
        // Target order {tp,dp} on one dim: tp must come first even though dp is first in the mesh.
        QTest::newRow("2-D reduce-scatters in target order")
            << "dp=2,tp=4" << "[{},{},{}] partial{dp,tp}" << "[{tp,dp},{},{}]"
            << "reduce-scatter(tp, dim 0) b=128Mi send=96Mi; reduce-scatter(dp, dim 0) b=32Mi send=16Mi";
        QTest::newRow("2-D two all-reduces")
            << "dp=2,tp=4" << "[{},{},{}] partial{dp,tp}" << "[{},{},{}]"
            << "all-reduce(dp) b=128Mi send=128Mi; all-reduce(tp) b=128Mi send=192Mi";
        // A pending sum the target keeps stays; dp is gathered with b = B.
        QTest::newRow("2-D gather under a kept sum") << "dp=2,tp=4" << "[{dp},{},{}] partial{tp}"
                                                     << "[{},{},{}] partial{tp}"
                                                     << "all-gather(dp, dim 0) b=128Mi send=64Mi";
        // The free slice goes first and shrinks the gather: b = B/4 = 32 MiB instead of 128 MiB.
        QTest::newRow("2-D slice before gather")
            << "dp=2,tp=4" << "[{dp},{},{}]" << "[{},{},{tp}]"
            << "local-slice(tp, dim 2) b=64Mi send=0; all-gather(dp, dim 0) b=32Mi send=16Mi";
        // Moving tp between dims while dp splits dim 0: b = 64 MiB, send 3/16·64 = 12 MiB.
        QTest::newRow("2-D all-to-all beside dp") << "dp=2,tp=4" << "[{dp},{tp},{}]" << "[{dp},{},{tp}]"
                                                  << "all-to-all(tp, dim 1->2) b=64Mi send=12Mi";
        QTest::newRow("2-D all-to-all off a shared dim") << "dp=2,tp=4" << "[{dp,tp},{},{}]" << "[{dp},{tp},{}]"
                                                         << "all-to-all(tp, dim 0->1) b=64Mi send=12Mi";
        // Swap (the worked example of reshard.h): neither move is ready; gather the cheaper axis dp
        // (b = 32 MiB, send 16 MiB), which frees dim 0 for tp's all-to-all (b = 128 MiB, send
        // 3/16·128 = 24 MiB), then slice dp into dim 2.
        QTest::newRow("2-D swap")
            << "dp=2,tp=4" << "[{dp},{},{tp}]" << "[{tp},{},{dp}]"
            << "all-gather(dp, dim 0) b=32Mi send=16Mi; all-to-all(tp, dim 2->0) b=128Mi send=24Mi; "
               "local-slice(dp, dim 2) b=32Mi send=0";
    }
    void handWorkedPlans() {
        QFETCH(QString, mesh);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, plan);
        const Mesh mm = m(qPrintable(mesh));
        const TensorType x = t("f32[8,1024,4096]");
        QCOMPARE(x.bytes(), 128 * kMiB);
        auto r = planReshard(s(from.toStdString()), s(to.toStdString()), mm, x);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(describe(*r), plan);
        // The steps chain from the source to the target and each moves data as its kind says.
        TensorSharding at = r->from;
        for (const CollectiveStep& step : r->steps) {
            QVERIFY(step.before == at);
            QCOMPARE(QString::fromStdString(checkStep(step, mm, x)), QString());
            at = step.after;
        }
        QVERIFY(at == r->to);
    }

    void summaries() {
        auto r = planReshard(s("[{dp},{},{tp}]"), s("[{tp},{},{dp}]"), m("dp=2,tp=4"), t("f32[8,1024,4096]"));
        QVERIFY(r.ok());
        QCOMPARE(r->sendBytesPerDevice(), 40 * kMiB);
        QVERIFY(!r->isNoCommunication());
        QCOMPARE(QString::fromStdString(r->steps[0].toString()),
                 "all-gather dp dim 0: b=33554432 send=16777216 [{dp},{},{tp}] partial{} -> [{},{},{tp}] partial{}");
        const std::string text = r->toString();
        QCOMPARE(int(std::count(text.begin(), text.end(), '\n')), 3);
        auto slice = planReshard(s("[{},{}]"), s("[{x},{}]"), m("8"), t("f32[8,8]"));
        QVERIFY(slice.ok());
        QVERIFY(slice->isNoCommunication());
        QCOMPARE(slice->sendBytesPerDevice(), 0);
    }

    void rejectsBadRequests_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("code");
        // Partial sums come only from contractions; resharding cannot create one.
        QTest::newRow("creates a pending sum") << "8" << "f32[8,8]" << "[{},{}]" << "[{},{}] partial{x}"
                                               << "reshard.partial_target";
        QTest::newRow("turns a split into a sum") << "8" << "f32[8,8]" << "[{x},{}]" << "[{},{}] partial{x}"
                                                  << "reshard.partial_target";
        QTest::newRow("uneven source") << "8" << "f32[12,8]" << "[{x},{}]" << "[{},{}]" << "sharding.uneven";
        QTest::newRow("uneven target") << "8" << "f32[8,12]" << "[{x},{}]" << "[{},{x}]" << "sharding.uneven";
        QTest::newRow("rank mismatch") << "8" << "f32[8,8]" << "[{x}]" << "[{},{}]" << "sharding.rank_mismatch";
        QTest::newRow("unknown axis") << "8" << "f32[8,8]" << "[{x},{}]" << "[{y},{}]" << "sharding.unknown_axis";
    }
    void rejectsBadRequests() {
        QFETCH(QString, mesh);
        QFETCH(QString, type);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, code);
        auto r = planReshard(s(from.toStdString()), s(to.toStdString()), m(qPrintable(mesh)), t(qPrintable(type)));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), code);
    }

    // DESIGN.md §6 ring formulas, computed by hand.
    void costFormulas_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("bytesPerSecond");
        QTest::addColumn<double>("seconds");
        // All-reduce of 1 GiB over 8 devices at 450 GB/s, α = 5 µs:
        //   2·7·5 µs = 70 µs;  2·7/8 · 1073741824 B / 450e9 B/s = 1879048192 / 450e9 = 4.17566265e-3 s
        //   total 4.24566265e-3 s.
        QTest::newRow("all-reduce 1 GiB x8 NVLink")
            << int(CollectiveKind::AllReduce) << qint64(1) * 1024 * kMiB << qint64(8) << 5e-6 << 450e9
            << 70e-6 + 1879048192.0 / 450e9;
        // All-gather of 128 MiB over 8: 7·5 µs + 7/8·134217728 / 450e9 = 35 µs + 117440512/450e9.
        QTest::newRow("all-gather 128 MiB x8") << int(CollectiveKind::AllGather) << qint64(128 * kMiB) << qint64(8) << 5e-6
                                               << 450e9 << 35e-6 + 117440512.0 / 450e9;
        // Reduce-scatter, same volume as all-gather, over InfiniBand at 50 GB/s, α = 10 µs, n = 2:
        //   10 µs + 1/2·134217728 / 50e9 = 10 µs + 1.34217728e-3 s.
        QTest::newRow("reduce-scatter 128 MiB x2 IB") << int(CollectiveKind::ReduceScatter) << qint64(128 * kMiB)
                                                      << qint64(2) << 10e-6 << 50e9 << 10e-6 + 67108864.0 / 50e9;
        // All-to-all of 128 MiB over 8: 7·5 µs + 7/64·134217728 / 450e9 = 35 µs + 14680064/450e9.
        QTest::newRow("all-to-all 128 MiB x8") << int(CollectiveKind::AllToAll) << qint64(128 * kMiB) << qint64(8) << 5e-6
                                               << 450e9 << 35e-6 + 14680064.0 / 450e9;
        QTest::newRow("local slice is free") << int(CollectiveKind::LocalSlice) << qint64(128 * kMiB) << qint64(8) << 5e-6
                                             << 450e9 << 0.0;
        QTest::newRow("one device is free") << int(CollectiveKind::AllReduce) << qint64(128 * kMiB) << qint64(1) << 5e-6
                                            << 450e9 << 0.0;
    }
    void costFormulas() {
        QFETCH(int, kind);
        QFETCH(qint64, bytes);
        QFETCH(qint64, n);
        QFETCH(double, alpha);
        QFETCH(double, bytesPerSecond);
        QFETCH(double, seconds);
        CollectiveStep step;
        step.kind = CollectiveKind(kind);
        step.axisSize = n;
        step.messageBytes = bytes;
        const double got = collectiveSeconds(step, n, alpha, bytesPerSecond);
        QVERIFY2(std::abs(got - seconds) <= 1e-12 * std::max(1.0, seconds),
                 qPrintable(QString("got %1, expected %2").arg(got, 0, 'g', 17).arg(seconds, 0, 'g', 17)));
    }

    void allReduceNumber() {
        // The worked number of the issue, spelled out: 4.2456626 ms.
        CollectiveStep step;
        step.kind = CollectiveKind::AllReduce;
        step.messageBytes = int64_t{1} << 30;
        QVERIFY(std::abs(collectiveSeconds(step, 8, 5e-6, 450e9) - 4.24566265e-3) < 1e-11);
    }

    // The bandwidth term of every step equals its bytes sent per device times β.
    void sentBytesMatchTheFormulas() {
        auto r = planReshard(s("[{},{},{}] partial{dp,tp}"), s("[{tp},{},{}]"), m("dp=2,tp=4"), t("f32[8,1024,4096]"));
        QVERIFY(r.ok());
        for (const CollectiveStep& step : r->steps) {
            const double bw = 1e9;
            const double bandwidthTerm = collectiveSeconds(step, step.axisSize, 0.0, bw);
            QCOMPARE(bandwidthTerm, double(step.sendBytesPerDevice) / bw);
        }
    }

    // Every pair of shardings of small tensors on small meshes: the plan exists (unless it would
    // create a pending sum), chains valid shardings, moves data as each kind says, is deterministic,
    // and never sends more than all-reduce-everything + gather-everything.
    void exhaustiveSmallMeshes_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("type");
        QTest::newRow("1-D x8, rank 2") << "8" << "f32[8,16]";
        QTest::newRow("2x2, rank 2") << "2x2" << "f32[4,8]";
        QTest::newRow("2x4, rank 3") << "dp=2,tp=4" << "bf16[8,16,8]";
        QTest::newRow("2x2x2, rank 2") << "2x2x2" << "f32[8,8]";
        QTest::newRow("size-one axis") << "1x4" << "f32[4,4]";
    }
    void exhaustiveSmallMeshes() {
        QFETCH(QString, mesh);
        QFETCH(QString, type);
        const Mesh mm = m(qPrintable(mesh));
        const TensorType tt = t(qPrintable(type));
        const std::vector<TensorSharding> all = allShardings(mm, tt.rank());
        QVERIFY(all.size() >= 4);
        int plans = 0;
        for (const TensorSharding& from : all) {
            for (const TensorSharding& to : all) {
                auto r = planReshard(from, to, mm, tt);
                bool createsSum = false;
                for (const std::string& axis : to.partialAxes()) createsSum |= !from.isPartialOver(axis);
                if (createsSum) {
                    QVERIFY(!r.ok());
                    QCOMPARE(QString::fromStdString(r.error().code), "reshard.partial_target");
                    continue;
                }
                QVERIFY2(r.ok(), qPrintable(QString::fromStdString(from.toString() + " -> " + to.toString())));
                ++plans;
                TensorSharding at = from;
                for (const CollectiveStep& step : r->steps) {
                    QVERIFY(step.before == at);
                    QVERIFY(validateSharding(step.after, mm, tt).ok());
                    const std::string bad = checkStep(step, mm, tt);
                    QVERIFY2(bad.empty(), qPrintable(QString::fromStdString(from.toString() + " -> " +
                                                                            to.toString() + ": " + bad)));
                    at = step.after;
                }
                QVERIFY(at == to);
                if (from == to) QVERIFY(r->steps.empty());
                QVERIFY2(r->sendBytesPerDevice() <= naiveSendBytes(from, to, mm, tt),
                         qPrintable(QString::fromStdString(from.toString() + " -> " + to.toString())));
                auto again = planReshard(from, to, mm, tt);
                QVERIFY(again.ok());
                QVERIFY(again->steps == r->steps);
            }
        }
        QVERIFY(plans > 0);
    }
};

QTEST_GUILESS_MAIN(TestReshard)
#include "tst_reshard.moc"
