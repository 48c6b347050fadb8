// Tensor shardings: text round trip, canonical form, ordering and hashing, validation against a
// mesh and a tensor type (uneven splits rejected), local shapes and bytes per device.
#include <QtTest>

#include <set>
#include <unordered_set>

#include "sharding/sharding.h"

#include "must.h"

using namespace cfp;

namespace {

TensorSharding s(const char* text) { return test::must(parseSharding(text), text); }

Mesh m(const char* text) { return test::must(parseMesh(text), text); }

TensorType t(const char* text) { return test::must(parseTensorType(text), text); }

}  // namespace

class TestSharding : public QObject {
    Q_OBJECT

private slots:
    void roundTrips_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("printed");
        QTest::newRow("2-D split") << "[{dp},{},{tp}] partial{}" << "[{dp},{},{tp}] partial{}";
        QTest::newRow("multi-axis dim, partial") << "[{},{dp,tp}] partial{x}" << "[{},{dp,tp}] partial{x}";
        QTest::newRow("scalar") << "[] partial{}" << "[] partial{}";
        QTest::newRow("partial omitted") << "[{x},{}]" << "[{x},{}] partial{}";
        QTest::newRow("spaces") << " [ {dp , tp} , { } ] partial { x } " << "[{dp,tp},{}] partial{x}";
        QTest::newRow("partial set sorted") << "[{}] partial{tp,dp}" << "[{}] partial{dp,tp}";
        QTest::newRow("no space before partial") << "[{}]partial{x}" << "[{}] partial{x}";
    }
    void roundTrips() {
        QFETCH(QString, text);
        QFETCH(QString, printed);
        auto r = parseSharding(text.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(QString::fromStdString(r->toString()), printed);
        auto again = parseSharding(r->toString());
        QVERIFY(again.ok());
        QVERIFY(*again == *r);
    }

    void rejectsBadText_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::newRow("empty") << "" << "sharding.syntax";
        QTest::newRow("no brackets") << "{x},{}" << "sharding.syntax";
        QTest::newRow("unclosed dim") << "[{x,]" << "sharding.syntax";
        QTest::newRow("trailing comma") << "[{x},]" << "sharding.syntax";
        QTest::newRow("bad tail") << "[{x}] partial" << "sharding.syntax";
        QTest::newRow("junk after") << "[{x}] partial{} extra" << "sharding.syntax";
        QTest::newRow("bad word") << "[{x}] pending{y}" << "sharding.syntax";
        QTest::newRow("axis twice in a dim") << "[{x,x}]" << "sharding.duplicate_axis";
        QTest::newRow("axis in two dims") << "[{x},{x}]" << "sharding.duplicate_axis";
        QTest::newRow("axis split and partial") << "[{x}] partial{x}" << "sharding.duplicate_axis";
        QTest::newRow("digit-first name") << "[{1x}]" << "sharding.bad_name";
    }
    void rejectsBadText() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        auto r = parseSharding(text.toStdString());
        QVERIFY2(!r.ok(), qPrintable(text));
        QCOMPARE(QString::fromStdString(r.error().code), code);
    }

    void createChecksInvariants() {
        QCOMPARE(QString::fromStdString(TensorSharding::create({{"x"}, {"x"}}).error().code),
                 "sharding.duplicate_axis");
        QCOMPARE(QString::fromStdString(TensorSharding::create({{"x"}}, {"y", "y"}).error().code),
                 "sharding.duplicate_axis");
        auto ok = TensorSharding::create({{"dp"}, {}, {"tp"}}, {"z", "a"});
        QVERIFY(ok.ok());
        QCOMPARE(ok->partialAxes(), (TensorSharding::AxisList{"a", "z"}));
        QCOMPARE(QString::fromStdString(ok->withDimAxes(1, {"a"}).error().code), "sharding.duplicate_axis");
        QCOMPARE(QString::fromStdString(ok->withDimAxes(3, {}).error().code), "sharding.rank_mismatch");
    }

    void equalityOrderAndHash() {
        // Equal shardings: same text, equal, same hash, including a differently written partial set.
        QVERIFY(s("[{}] partial{tp,dp}") == s("[{}] partial{dp,tp}"));
        QCOMPARE(std::hash<TensorSharding>{}(s("[{}] partial{tp,dp}")),
                 std::hash<TensorSharding>{}(s("[{}] partial{dp,tp}")));
        // Different axis order in a dim is a different layout.
        QVERIFY(s("[{dp,tp}]") != s("[{tp,dp}]"));
        QVERIFY(s("[{x},{}]") != s("[{},{x}]"));
        QVERIFY(s("[{x},{}]") != s("[{x},{}] partial{y}"));
        // A strict weak order: exactly one of a<b, b<a, a==b.
        std::vector<TensorSharding> all = {s("[{x},{}]"), s("[{},{x}]"), s("[{},{}]"), s("[{},{}] partial{x}"),
                                           s("[{x,y},{}]"), s("[{y,x},{}]"), s("[{x},{y}]"), s("[]")};
        for (const auto& a : all)
            for (const auto& b : all) QCOMPARE(int(a < b) + int(b < a) + int(a == b), 1);
        std::set<TensorSharding> ordered(all.begin(), all.end());
        QCOMPARE(ordered.size(), all.size());
        std::unordered_set<TensorSharding> hashed(all.begin(), all.end());
        QCOMPARE(hashed.size(), all.size());
        hashed.insert(s("[{x},{}] partial{}"));
        QCOMPARE(hashed.size(), all.size());
        // The hash is FNV-1a over the fields, so it is the same on every run and platform.
        QCOMPARE(s("[{x},{}]").hash(), s("[{x},{}]").hash());
        QVERIFY(s("[{x},{}]").hash() != s("[{},{x}]").hash());
        QVERIFY(s("[{xy}]").hash() != s("[{x,y}]").hash());
    }

    void queries() {
        auto sh = s("[{dp},{},{tp,sp}] partial{x}");
        QCOMPARE(sh.rank(), 3);
        QCOMPARE(int(sh.use("tp").kind), int(AxisUse::Kind::Dim));
        QCOMPARE(sh.use("sp").dim, 2);
        QCOMPARE(sh.use("sp").position, 1);
        QCOMPARE(int(sh.use("x").kind), int(AxisUse::Kind::Partial));
        QCOMPARE(int(sh.use("pp").kind), int(AxisUse::Kind::Unused));
        QVERIFY(sh.isPartial());
        QVERIFY(sh.isPartialOver("x"));
        QVERIFY(!sh.isReplicated());
        QCOMPARE(sh.splitAxes(), (TensorSharding::AxisList{"dp", "tp", "sp"}));
        QVERIFY(TensorSharding::replicated(3).isReplicated());
        QCOMPARE(QString::fromStdString(TensorSharding::replicated(3).toString()), "[{},{},{}] partial{}");
        QVERIFY(s("[{},{}] partial{}").isReplicated());
        QVERIFY(!s("[{},{}] partial{x}").isReplicated());
        QCOMPARE(QString::fromStdString(TensorSharding().toString()), "[] partial{}");
    }

    // Local (per-device) shapes. X f32[8,1024,4096] is 128 MiB.
    void localShapes_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<QString>("local");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("batch split on x=8") << "8" << "f32[8,1024,4096]" << "[{x},{},{}]" << "f32[1,1024,4096]"
                                            << qint64(16 << 20);
        QTest::newRow("replicated") << "8" << "f32[8,1024,4096]" << "[{},{},{}]" << "f32[8,1024,4096]"
                                    << qint64(128 << 20);
        // Pending sums hold full-size buffers.
        QTest::newRow("partial") << "8" << "f32[8,1024,4096]" << "[{},{},{}] partial{x}" << "f32[8,1024,4096]"
                                 << qint64(128 << 20);
        QTest::newRow("dp and tp on two dims") << "dp=2,tp=4" << "f32[8,1024,4096]" << "[{dp},{},{tp}]"
                                               << "f32[4,1024,1024]" << qint64(16 << 20);
        QTest::newRow("both axes on one dim") << "dp=2,tp=4" << "bf16[4096,1024]" << "[{dp,tp},{}]"
                                              << "bf16[512,1024]" << qint64(1 << 20);
        QTest::newRow("size-one axis") << "1x8" << "f32[3,16]" << "[{x},{y}]" << "f32[3,2]" << qint64(24);
        QTest::newRow("scalar") << "8" << "f32[]" << "[]" << "f32[]" << qint64(4);
        QTest::newRow("zero-size dim") << "8" << "f32[0,8]" << "[{x},{}]" << "f32[0,8]" << qint64(0);
    }
    void localShapes() {
        QFETCH(QString, mesh);
        QFETCH(QString, type);
        QFETCH(QString, sharding);
        QFETCH(QString, local);
        QFETCH(qint64, bytes);
        const Mesh mm = m(qPrintable(mesh));
        const TensorType tt = t(qPrintable(type));
        const TensorSharding ss = s(qPrintable(sharding));
        QVERIFY(validateSharding(ss, mm, tt).ok());
        auto lt = localType(ss, mm, tt);
        QVERIFY(lt.ok());
        QCOMPARE(QString::fromStdString(lt->toString()), local);
        QCOMPARE(*bytesPerDevice(ss, mm, tt), bytes);
    }

    void rejectsInvalidForMesh_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<QString>("code");
        QTest::newRow("uneven 1-D") << "8" << "f32[12,64]" << "[{x},{}]" << "sharding.uneven";
        QTest::newRow("uneven product") << "dp=2,tp=4" << "f32[4,64]" << "[{dp,tp},{}]" << "sharding.uneven";
        QTest::newRow("uneven second dim") << "dp=2,tp=4" << "f32[8,6]" << "[{dp},{tp}]" << "sharding.uneven";
        QTest::newRow("rank too small") << "8" << "f32[8,8]" << "[{x}]" << "sharding.rank_mismatch";
        QTest::newRow("rank too large") << "8" << "f32[8]" << "[{x},{}]" << "sharding.rank_mismatch";
        QTest::newRow("unknown split axis") << "dp=2,tp=4" << "f32[8]" << "[{x}]" << "sharding.unknown_axis";
        QTest::newRow("unknown partial axis") << "dp=2,tp=4" << "f32[8]" << "[{dp}] partial{x}"
                                              << "sharding.unknown_axis";
    }
    void rejectsInvalidForMesh() {
        QFETCH(QString, mesh);
        QFETCH(QString, type);
        QFETCH(QString, sharding);
        QFETCH(QString, code);
        const Mesh mm = m(qPrintable(mesh));
        const TensorType tt = t(qPrintable(type));
        const TensorSharding ss = s(qPrintable(sharding));
        auto st = validateSharding(ss, mm, tt);
        QVERIFY(!st.ok());
        QCOMPARE(QString::fromStdString(st.error().code), code);
        QVERIFY(!localShape(ss, mm, tt).ok());
        QVERIFY(!bytesPerDevice(ss, mm, tt).ok());
    }

    void unevenMessageGivesTheReason() {
        auto st = validateSharding(s("[{x},{}]"), m("8"), t("f32[12,64]"));
        QVERIFY(!st.ok());
        // Names the dim, its size and the number of shards.
        QVERIFY(st.error().message.find("dimension 0") != std::string::npos);
        QVERIFY(st.error().message.find("12") != std::string::npos);
        QVERIFY(st.error().message.find("8 shards") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSharding)
#include "tst_sharding.moc"
