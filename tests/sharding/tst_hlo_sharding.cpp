// XLA HloSharding text and replica groups (sharding/hlo_sharding.h): every form XLA and JAX print
// (explicit and iota device lists, transposed iotas, a replicating last tile dim in both spellings,
// metadata), malformed and unsupported text as errors, placement on a mesh (including meshes whose
// axes split one tensor dim), and the round trip with the exporter's hloShardingText on every
// layout of a rank-2 value on three meshes.
#include <QtTest>

#include <algorithm>
#include <numeric>

#include "sharding/hlo_sharding.h"

#include "must.h"

using namespace cfp;

namespace {

Mesh m(const std::string& text) { return test::must(parseMesh(text), text); }

QString joined(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << QString::fromStdString(s);
    return out.join(',');
}

}  // namespace

class TestHloSharding : public QObject {
    Q_OBJECT

private slots:
    void parses_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("canonical");
        QTest::newRow("replicated") << "{replicated}" << "{replicated}";
        QTest::newRow("manual, spaces") << " { manual } " << "{manual}";
        QTest::newRow("maximal") << "{maximal device=3}" << "{maximal device=3}";
        QTest::newRow("explicit") << "{devices=[2,1]0,1}" << "{devices=[2,1]0,1}";
        QTest::newRow("iota") << "{devices=[4,2]<=[8]}" << "{devices=[4,2]0,1,2,3,4,5,6,7}";
        QTest::newRow("transposed iota") << "{devices=[2,4]<=[4,2]T(1,0)}" << "{devices=[2,4]0,2,4,6,1,3,5,7}";
        QTest::newRow("replicate last") << "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"
                                        << "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}";
        QTest::newRow("subgroup form") << "{devices=[2,1,2]0,2,1,3 last_tile_dims={replicated}}"
                                       << "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}";
        QTest::newRow("metadata") << "{devices=[2,1]0,1 metadata={op_name=\"a/b\" source_line=3}}" << "{devices=[2,1]0,1}";
        QTest::newRow("replicated, metadata") << "{replicated metadata={op_name=\"x\"}}" << "{replicated}";
    }
    void parses() {
        QFETCH(QString, text);
        QFETCH(QString, canonical);
        const HloSharding h = test::must(parseHloSharding(text.toStdString()), text.toStdString());
        QCOMPARE(QString::fromStdString(h.toString()), canonical);
        // The canonical text reads back as the same value.
        QVERIFY(test::must(parseHloSharding(h.toString()), "canonical") == h);
    }

    void malformed_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::newRow("empty") << "" << "sharding.hlo_syntax";
        QTest::newRow("short device list") << "{devices=[2,2]0,1,2}" << "sharding.hlo_syntax";
        QTest::newRow("repeated device") << "{devices=[2]0,0}" << "sharding.hlo_syntax";
        QTest::newRow("unclosed") << "{devices=[2,1]0,1" << "sharding.hlo_syntax";
        QTest::newRow("bad permutation") << "{devices=[2,2]<=[4]T(0,0)}" << "sharding.hlo_syntax";
        QTest::newRow("iota of other size") << "{devices=[2,2]<=[8]}" << "sharding.hlo_syntax";
        QTest::newRow("replicate without grid") << "{devices=[2]<=[2] last_tile_dim_replicate}" << "sharding.hlo_syntax";
        QTest::newRow("zero tile") << "{devices=[0,2]}" << "sharding.hlo_syntax";
        QTest::newRow("tuple") << "{{replicated}, {manual}}" << "sharding.hlo_unsupported";
        QTest::newRow("partially manual") << "{devices=[2,1,2]<=[4] last_tile_dims={manual}}" << "sharding.hlo_unsupported";
        QTest::newRow("too many devices") << "{devices=[1048576,2]<=[2097152]}" << "sharding.hlo_unsupported";
        QTest::newRow("unknown kind") << "{unknown}" << "sharding.hlo_unsupported";
    }
    void malformed() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        auto r = parseHloSharding(text.toStdString());
        QVERIFY2(!r, text.toStdString().c_str());
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QVERIFY(!r.error().message.empty());
    }

    void onMesh_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("rank");
        QTest::addColumn<QString>("expected");  // a sharding, or an error code
        QTest::newRow("grid 4x2") << "dp=4,tp=2" << "{devices=[4,2]<=[8]}" << 2 << "[{dp},{tp}] partial{}";
        QTest::newRow("transposed") << "dp=4,tp=2" << "{devices=[2,4]<=[4,2]T(1,0)}" << 2 << "[{tp},{dp}] partial{}";
        QTest::newRow("batch, replicated over tp") << "dp=4,tp=2" << "{devices=[4,1,2]<=[8] last_tile_dim_replicate}" << 2
                                                   << "[{dp},{}] partial{}";
        QTest::newRow("columns over tp") << "dp=4,tp=2" << "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}" << 2
                                         << "[{},{tp}] partial{}";
        QTest::newRow("explicit list") << "dp=4,tp=2" << "{devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}" << 2
                                       << "[{},{tp}] partial{}";
        QTest::newRow("replicated") << "dp=4,tp=2" << "{replicated}" << 3 << "[{},{},{}] partial{}";
        QTest::newRow("two axes on a dim") << "2x2x2" << "{devices=[4,1,2]<=[8] last_tile_dim_replicate}" << 2 << "[{x,y},{}] partial{}";
        QTest::newRow("reversed axes on a dim") << "2x2x2" << "{devices=[8,1]<=[2,2,2]T(2,1,0)}" << 2 << "[{z,y,x},{}] partial{}";
        QTest::newRow("one axis for a 4x2 grid") << "8" << "{devices=[4,2]<=[8]}" << 2 << "sharding.mesh_mismatch";
        QTest::newRow("axes the other way") << "2x4" << "{devices=[4,1,2]<=[8] last_tile_dim_replicate}" << 2 << "sharding.mesh_mismatch";
        QTest::newRow("fewer devices") << "dp=4,tp=2" << "{devices=[2,1]0,1}" << 2 << "sharding.mesh_mismatch";
        QTest::newRow("rank") << "dp=4,tp=2" << "{devices=[4,2]<=[8]}" << 3 << "sharding.mesh_mismatch";
        QTest::newRow("no axis order") << "dp=4,tp=2" << "{devices=[4,2]0,1,2,3,4,5,7,6}" << 2 << "sharding.mesh_mismatch";
        QTest::newRow("manual") << "dp=4,tp=2" << "{manual}" << 2 << "sharding.hlo_unsupported";
    }
    void onMesh() {
        QFETCH(QString, mesh);
        QFETCH(QString, text);
        QFETCH(int, rank);
        QFETCH(QString, expected);
        const HloSharding h = test::must(parseHloSharding(text.toStdString()), "parse");
        auto r = shardingOnMesh(h, m(mesh.toStdString()), rank);
        if (expected.startsWith("sharding.")) {
            QVERIFY(!r);
            QCOMPARE(QString::fromStdString(r.error().code), expected);
        } else {
            QVERIFY2(r, r ? "" : r.error().toString().c_str());
            QCOMPARE(QString::fromStdString(r->toString()), expected);
        }
    }

    // The exporter writes any layout as HloSharding text; reading it back on the mesh gives the
    // same layout: every ordered choice of axes for dim 0, dim 1 and replication.
    void exporterRoundTrip_data() {
        QTest::addColumn<QString>("mesh");
        QTest::newRow("dp=2,tp=4") << "dp=2,tp=4";
        QTest::newRow("2x2x2") << "2x2x2";
        QTest::newRow("8") << "8";
        QTest::newRow("2x3x2") << "2x3x2";
    }
    void exporterRoundTrip() {
        QFETCH(QString, mesh);
        const Mesh mm = m(mesh.toStdString());
        std::vector<size_t> order(mm.axes().size());
        std::iota(order.begin(), order.end(), size_t{0});
        int checked = 0;
        do {
            for (size_t i = 0; i <= order.size(); ++i)
                for (size_t j = i; j <= order.size(); ++j) {
                    std::vector<TensorSharding::AxisList> dims(2);
                    for (size_t k = 0; k < i; ++k) dims[0].push_back(mm.axes()[order[k]].name);
                    for (size_t k = i; k < j; ++k) dims[1].push_back(mm.axes()[order[k]].name);
                    const TensorSharding ts = test::must(TensorSharding::create(dims), "create");
                    const std::string text = test::must(hloShardingText(ts, mm), "export");
                    const HloSharding h = test::must(parseHloSharding(text), text);
                    const TensorSharding back = test::must(shardingOnMesh(h, mm, 2), text);
                    QVERIFY2(back == ts, (text + ": " + ts.toString() + " read back as " + back.toString()).c_str());
                    ++checked;
                }
        } while (std::next_permutation(order.begin(), order.end()));
        QVERIFY(checked > 0);
    }

    void replicaGroups_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");  // axes, or an error code
        QTest::newRow("tp pairs") << "dp=4,tp=2" << "{{0,1},{2,3},{4,5},{6,7}}" << "tp";
        QTest::newRow("dp groups") << "dp=4,tp=2" << "{{0,2,4,6},{1,3,5,7}}" << "dp";
        QTest::newRow("iota, all") << "dp=4,tp=2" << "[1,8]<=[8]" << "dp,tp";
        QTest::newRow("transposed iota") << "dp=4,tp=2" << "[2,4]<=[4,2]T(1,0)" << "dp";
        QTest::newRow("every device") << "dp=4,tp=2" << "{}" << "dp,tp";
        QTest::newRow("two inner axes") << "2x2x2" << "{{0,1,2,3},{4,5,6,7}}" << "y,z";
        QTest::newRow("outer and inner") << "2x2x2" << "{{0,1,4,5},{2,3,6,7}}" << "x,z";
        QTest::newRow("not an axis") << "dp=4,tp=2" << "{{0,3},{1,2},{4,7},{5,6}}" << "sharding.mesh_mismatch";
        QTest::newRow("half the devices") << "dp=4,tp=2" << "{{0,1},{2,3}}" << "sharding.mesh_mismatch";
        QTest::newRow("overlapping") << "dp=4,tp=2" << "{{0,1},{1,2},{4,5},{6,7}}" << "sharding.mesh_mismatch";
        QTest::newRow("unequal") << "dp=4,tp=2" << "{{0,1,2},{3},{4,5},{6,7}}" << "sharding.mesh_mismatch";
        QTest::newRow("unclosed") << "dp=4,tp=2" << "{{0,1}" << "sharding.hlo_syntax";
        QTest::newRow("iota size") << "dp=4,tp=2" << "[2,4]<=[7]" << "sharding.hlo_syntax";
    }
    void replicaGroups() {
        QFETCH(QString, mesh);
        QFETCH(QString, text);
        QFETCH(QString, expected);
        auto groups = parseReplicaGroups(text.toStdString());
        if (!groups) {
            QCOMPARE(QString::fromStdString(groups.error().code), expected);
            return;
        }
        // The printed form reads back the same.
        QVERIFY(test::must(parseReplicaGroups(replicaGroupsText(*groups)), "reprint") == *groups);
        auto axes = groupAxesOnMesh(*groups, m(mesh.toStdString()));
        if (expected.startsWith("sharding.")) {
            QVERIFY(!axes);
            QCOMPARE(QString::fromStdString(axes.error().code), expected);
        } else {
            QVERIFY2(axes, axes ? "" : axes.error().toString().c_str());
            QCOMPARE(joined(*axes), expected);
        }
    }
};

QTEST_GUILESS_MAIN(TestHloSharding)
#include "tst_hlo_sharding.moc"
