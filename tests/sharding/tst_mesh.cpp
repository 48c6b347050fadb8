// Device mesh: parsing of every text form, validation errors with stable codes, device numbering,
// and link-class assignment from GPUs per node.
#include <QtTest>

#include "sharding/mesh.h"

using namespace cfp;

namespace {

QString errorText(const Error& e) { return QString::fromStdString(e.toString()); }

}  // namespace

class TestMesh : public QObject {
    Q_OBJECT

private slots:
    void parsesMeshes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("printed");
        QTest::addColumn<qint64>("devices");
        QTest::newRow("1-D") << "8" << "{x=8}" << qint64(8);
        QTest::newRow("2-D default names") << "2x4" << "{x=2, y=4}" << qint64(8);
        QTest::newRow("3-D default names") << "2x2x2" << "{x=2, y=2, z=2}" << qint64(8);
        QTest::newRow("4-D default names") << "1x2x1x2" << "{x=1, y=2, z=1, w=2}" << qint64(4);
        QTest::newRow("5-D numbered names") << "1x1x2x1x2" << "{a0=1, a1=1, a2=2, a3=1, a4=2}" << qint64(4);
        QTest::newRow("named") << "dp=2,tp=4" << "{dp=2, tp=4}" << qint64(8);
        QTest::newRow("named with spaces") << " dp = 2 , tp = 4 " << "{dp=2, tp=4}" << qint64(8);
        QTest::newRow("named keeps order") << "tp=4,dp=2" << "{tp=4, dp=2}" << qint64(8);
        QTest::newRow("size one axis") << "1x8" << "{x=1, y=8}" << qint64(8);
        QTest::newRow("printed form") << "{dp=2 (inter), tp=4 (intra)}" << "{dp=2 (inter), tp=4 (intra)}"
                                      << qint64(8);
        QTest::newRow("printed form without links") << "{dp=2, tp=4}" << "{dp=2, tp=4}" << qint64(8);
        QTest::newRow("empty braces") << "{}" << "{}" << qint64(1);
    }
    void parsesMeshes() {
        QFETCH(QString, text);
        QFETCH(QString, printed);
        QFETCH(qint64, devices);
        auto mesh = parseMesh(text.toStdString());
        QVERIFY2(mesh.ok(), mesh.ok() ? "" : qPrintable(errorText(mesh.error())));
        QCOMPARE(QString::fromStdString(mesh->toString()), printed);
        QCOMPARE(mesh->deviceCount(), devices);
        // The printed form parses back to the same mesh.
        auto again = parseMesh(mesh->toString());
        QVERIFY(again.ok());
        QVERIFY(*again == *mesh);
    }

    void rejectsBadMeshes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::newRow("empty") << "" << "mesh.syntax";
        QTest::newRow("zero") << "0" << "mesh.bad_size";
        QTest::newRow("zero in 2-D") << "2x0" << "mesh.bad_size";
        QTest::newRow("negative") << "dp=-2,tp=4" << "mesh.bad_size";
        QTest::newRow("negative 1-D") << "-8" << "mesh.bad_size";
        QTest::newRow("garbage size") << "2xfour" << "mesh.syntax";
        QTest::newRow("missing size") << "2x" << "mesh.syntax";
        QTest::newRow("missing name") << "=2,tp=4" << "mesh.bad_name";
        QTest::newRow("bad name") << "1dp=2" << "mesh.bad_name";
        QTest::newRow("name with dash") << "d-p=2" << "mesh.bad_name";
        QTest::newRow("duplicate") << "dp=2,dp=4" << "mesh.duplicate_axis";
        QTest::newRow("mixed forms") << "dp=2,4" << "mesh.syntax";
        QTest::newRow("unknown link class") << "{dp=2 (fast)}" << "mesh.syntax";
        QTest::newRow("unclosed brace") << "{dp=2" << "mesh.syntax";
        QTest::newRow("number overflow") << "99999999999999999999999" << "mesh.too_large";
        QTest::newRow("product overflow") << "65536x65536x65536" << "mesh.too_large";
        QTest::newRow("above device limit") << "2147483648" << "mesh.too_large";
    }
    void rejectsBadMeshes() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        auto mesh = parseMesh(text.toStdString());
        QVERIFY2(!mesh.ok(), qPrintable(text));
        QCOMPARE(QString::fromStdString(mesh.error().code), code);
        QVERIFY(!mesh.error().message.empty());
    }

    void createValidatesAxes() {
        QCOMPARE(QString::fromStdString(Mesh::create({{"dp", 0, std::nullopt}}).error().code), "mesh.bad_size");
        QCOMPARE(QString::fromStdString(Mesh::create({{"dp", 2, std::nullopt}, {"dp", 2, std::nullopt}}).error().code),
                 "mesh.duplicate_axis");
        QCOMPARE(QString::fromStdString(Mesh::create({{"", 2, std::nullopt}}).error().code), "mesh.bad_name");
        auto ok = Mesh::create({{"dp", 2, std::nullopt}, {"tp", 4, LinkClass::IntraNode}});
        QVERIFY(ok.ok());
        QCOMPARE(ok->rank(), 2);
        QCOMPARE(ok->axisIndex("tp"), std::optional<int64_t>(1));
        QCOMPARE(ok->axisSize("dp"), std::optional<int64_t>(2));
        QVERIFY(!ok->axisIndex("pp"));
        QVERIFY(!ok->hasLinkClasses());
        QCOMPARE(Mesh().deviceCount(), 1);
    }

    void checksDeviceCount_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("devices");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("exact") << "2x4" << qint64(8) << true;
        QTest::newRow("too few devices") << "2x4" << qint64(4) << false;
        QTest::newRow("too many devices") << "dp=2,tp=4" << qint64(16) << false;
        QTest::newRow("1-D exact") << "16" << qint64(16) << true;
    }
    void checksDeviceCount() {
        QFETCH(QString, text);
        QFETCH(qint64, devices);
        QFETCH(bool, accepted);
        auto mesh = parseMesh(text.toStdString(), devices);
        QCOMPARE(mesh.ok(), accepted);
        if (!accepted) {
            QCOMPARE(QString::fromStdString(mesh.error().code), "mesh.device_count");
            // The message names both counts so a person can see what is wrong.
            QVERIFY(mesh.error().message.find(std::to_string(devices)) != std::string::npos);
        }
    }

    void numbersDevicesRowMajor() {
        auto mesh = parseMesh("dp=2,tp=4");
        QVERIFY(mesh.ok());
        // Device 5 = (dp=1, tp=1): the last axis varies fastest.
        QCOMPARE(*mesh->coordinates(5), (std::vector<int64_t>{1, 1}));
        QCOMPARE(*mesh->deviceAt({1, 3}), 7);
        QCOMPARE(*mesh->axisGroup(5, "tp"), (std::vector<int64_t>{4, 5, 6, 7}));
        QCOMPARE(*mesh->axisGroup(5, "dp"), (std::vector<int64_t>{1, 5}));
        for (int64_t d = 0; d < mesh->deviceCount(); ++d) QCOMPARE(*mesh->deviceAt(*mesh->coordinates(d)), d);
        QCOMPARE(QString::fromStdString(mesh->coordinates(8).error().code), "mesh.bad_device");
        QCOMPARE(QString::fromStdString(mesh->deviceAt({2, 0}).error().code), "mesh.bad_device");
        QCOMPARE(QString::fromStdString(mesh->axisGroup(0, "pp").error().code), "mesh.unknown_axis");
    }

    // Link classes for nodes of `gpus` GPUs, innermost axes filling a node first. Expected classes
    // are listed outermost axis first ("inter,intra").
    void assignsLinkClasses_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("gpus");
        QTest::addColumn<QString>("expected");
        // 16 devices on 2 nodes of 8: the outer axis of 2x8 crosses nodes, the inner stays on NVLink.
        QTest::newRow("2x8 on 8-GPU nodes") << "2x8" << qint64(8) << "{x=2 (inter), y=8 (intra)}";
        // A single axis over both nodes is bounded by its inter-node hop.
        QTest::newRow("16 on 8-GPU nodes") << "16" << qint64(8) << "{x=16 (inter)}";
        // Stride 4, size 4: each dp group has 2 members in each of 2 nodes: evenly inter-node.
        QTest::newRow("4x4 on 8-GPU nodes") << "dp=4,tp=4" << qint64(8) << "{dp=4 (inter), tp=4 (intra)}";
        QTest::newRow("2x2x4 on 8-GPU nodes") << "2x2x4" << qint64(8) << "{x=2 (inter), y=2 (intra), z=4 (intra)}";
        QTest::newRow("one node") << "dp=2,tp=4" << qint64(8) << "{dp=2 (intra), tp=4 (intra)}";
        QTest::newRow("smaller than a node") << "3" << qint64(8) << "{x=3 (intra)}";
        QTest::newRow("one GPU per node") << "2x4" << qint64(1) << "{x=2 (inter), y=4 (inter)}";
        QTest::newRow("inner axis spans nodes") << "2x8" << qint64(4) << "{x=2 (inter), y=8 (inter)}";
        QTest::newRow("size-one axis") << "16x1" << qint64(8) << "{x=16 (inter), y=1 (intra)}";
        QTest::newRow("relabels given classes") << "{x=2 (intra), y=8 (inter)}" << qint64(8)
                                                << "{x=2 (inter), y=8 (intra)}";
    }
    void assignsLinkClasses() {
        QFETCH(QString, text);
        QFETCH(qint64, gpus);
        QFETCH(QString, expected);
        auto mesh = parseMesh(text.toStdString());
        QVERIFY(mesh.ok());
        auto linked = assignLinkClasses(*mesh, gpus);
        QVERIFY2(linked.ok(), linked.ok() ? "" : qPrintable(errorText(linked.error())));
        QCOMPARE(QString::fromStdString(linked->toString()), expected);
        QVERIFY(linked->hasLinkClasses());
    }

    void rejectsUnevenNodePlacement_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("gpus");
        QTest::addColumn<QString>("code");
        // y (stride 4, size 3) groups {0,4,8}: two members in node 0, one in node 1.
        QTest::newRow("axis straddles unevenly") << "2x3x4" << qint64(8) << "mesh.node_straddle";
        QTest::newRow("inner axis straddles") << "4x6" << qint64(8) << "mesh.node_straddle";
        QTest::newRow("devices do not fill nodes") << "12" << qint64(8) << "mesh.partial_node";
        QTest::newRow("zero GPUs per node") << "8" << qint64(0) << "mesh.bad_gpus_per_node";
        QTest::newRow("negative GPUs per node") << "8" << qint64(-8) << "mesh.bad_gpus_per_node";
    }
    void rejectsUnevenNodePlacement() {
        QFETCH(QString, text);
        QFETCH(qint64, gpus);
        QFETCH(QString, code);
        auto mesh = parseMesh(text.toStdString());
        QVERIFY(mesh.ok());
        auto linked = assignLinkClasses(*mesh, gpus);
        QVERIFY(!linked.ok());
        QCOMPARE(QString::fromStdString(linked.error().code), code);
    }

    void axisNames() {
        QVERIFY(isValidAxisName("dp"));
        QVERIFY(isValidAxisName("_a1"));
        QVERIFY(!isValidAxisName("1a"));
        QVERIFY(!isValidAxisName(""));
        QVERIFY(!isValidAxisName("a b"));
        QCOMPARE(defaultAxisNames(2), (std::vector<std::string>{"x", "y"}));
        QCOMPARE(QString::fromLatin1(linkClassName(LinkClass::InterNode).data()), "inter");
    }
};

QTEST_GUILESS_MAIN(TestMesh)
#include "tst_mesh.moc"
