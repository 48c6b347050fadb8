// The profile DB: round trips, persistence across opens, merging, and damage handling — a damaged
// or foreign file is an error that changes nothing, and starting a new DB keeps the old file.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "must.h"
#include "profiler/profile_db.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;

namespace {

HardwareFingerprint fingerprint(const std::string& model = "NVIDIA H100 80GB HBM3") {
    HardwareFingerprint f;
    f.gpuModel = model;
    f.driverVersion = "550.54.15";
    f.cudaVersion = "13000";
    f.gpuCount = 8;
    f.nodes = 1;
    f.interconnect = "nvlink";
    f.ncclVersion = "22803";
    return f;
}

SegmentRecord record(const std::string& combination, double seconds) {
    SegmentRecord r;
    r.segmentSignature = "0x00000000deadbeef";
    r.mesh = "{x=8 (intra)}";
    r.combination = combination;
    r.label = "x:rows | x:cols";
    r.segmentType = 1;
    r.model = "gpt3-125m";
    r.status = CombinationStatus::Measured;
    r.comm = CommMode::Measured;
    r.seconds = seconds;
    r.samples = {seconds * 1.01, seconds, seconds * 0.99};
    r.predictedSeconds = seconds * 0.9;
    r.memoryBytes = 123456789;
    r.protocol = "2 warm-ups, 3x3 timed";
    r.note = "note";
    r.created = 1700000000;
    return r;
}

QByteArray slurp(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

CostCalibration calibration() {
    CostCalibration c;
    c.gemm = {{DType::BF16, 1e12, 1e8, 0.71}, {DType::BF16, 1e9, 1e7, 0.33}, {DType::F32, 1e10, 1e8, 0.5}};
    c.hbmBytesPerSecond = 2.9e12;
    c.launchSeconds = 4.5e-6;
    c.collectives = {{LinkClass::IntraNode, 8, CollectiveKind::AllReduce, 1.1e-5, 1.0 / 300e9},
                     {LinkClass::InterNode, 2, CollectiveKind::AllGather, 5e-6, 1.0 / 45e9}};
    return c;
}

}  // namespace

class TestProfileDb : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!profileDbAvailable()) QSKIP("built without SQLite");
    }

    void roundTripAndPersistence() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("p.db").toStdString();
        int64_t id = 0;
        {
            auto db = must(ProfileDb::open(path), "open");
            id = must(db.hardwareId(fingerprint(), "h100-sxm"), "hardware");
            QCOMPARE(must(db.hardwareId(fingerprint(), "h100-sxm"), "again"), id);  // one row per fingerprint
            QVERIFY(static_cast<bool>(db.putSegment(id, record("0,1", 0.002))));
            QVERIFY(static_cast<bool>(db.putSegment(id, record("1,1", 0.003))));
            // WAL mode: the write-ahead log sits next to the file while it is open.
            QVERIFY(QFile::exists(QString::fromStdString(path + "-wal")));
            QVERIFY(static_cast<bool>(db.putOps(id, {{0x1234u, "dot a", 0.001, 3}, {0xffffffffffffffffu, "dot b", 0.004, 3}}, CommMode::Measured)));
            // Merging: the sample-weighted mean.
            QVERIFY(static_cast<bool>(db.putOps(id, {{0x1234u, "dot a", 0.004, 1}}, CommMode::Measured)));
            QVERIFY(static_cast<bool>(db.putCalibration(id, calibration())));
        }
        auto db = must(ProfileDb::open(path, ProfileDb::OpenMode::ReadOnly), "reopen");
        auto hw = must(db.hardware(), "hardware list");
        QCOMPARE(hw.size(), size_t{1});
        QCOMPARE(hw[0].key, fingerprint().key());
        QCOMPARE(hw[0].fingerprint, fingerprint());
        QCOMPARE(hw[0].hardwareSpec, std::string("h100-sxm"));
        QCOMPARE(hw[0].segments, int64_t{2});
        QCOMPARE(hw[0].ops, int64_t{2});
        QVERIFY(hw[0].calibrated);
        auto found = must(db.findSegment(id, "0x00000000deadbeef", "{x=8 (intra)}", "0,1"), "find");
        QVERIFY(found.has_value());
        const SegmentRecord expected = record("0,1", 0.002);
        QCOMPARE(found->seconds, expected.seconds);
        QCOMPARE(found->samples, expected.samples);
        QCOMPARE(found->label, expected.label);
        QCOMPARE(found->memoryBytes, expected.memoryBytes);
        QCOMPARE(found->predictedSeconds, expected.predictedSeconds);
        QCOMPARE(found->status, CombinationStatus::Measured);
        QCOMPARE(found->comm, CommMode::Measured);
        QCOMPARE(found->created, expected.created);
        QVERIFY(!must(db.findSegment(id, "0x00000000deadbeef", "{x=8 (intra)}", "2,2"), "missing").has_value());
        QVERIFY(!must(db.findSegment(id, "0x00000000deadbeef", "2x4", "0,1"), "other mesh").has_value());
        QCOMPARE(must(db.segments(id), "segments").size(), size_t{2});
        auto ops = must(db.ops(id), "ops");
        QCOMPARE(ops.size(), size_t{2});
        QCOMPARE(ops[0].signature, uint64_t{0x1234});
        QCOMPARE(ops[0].samples, int64_t{4});
        QVERIFY(std::abs(ops[0].seconds - (0.001 * 3 + 0.004) / 4) < 1e-15);
        QCOMPARE(ops[1].signature, uint64_t{0xffffffffffffffffu});
        QCOMPARE(must(db.calibration(id), "calibration"), [] {
            CostCalibration c = calibration();
            // Stored sorted: by dtype name, then flops and bytes; collectives by link, devices, kind.
            std::sort(c.gemm.begin(), c.gemm.end(), [](const GemmEfficiencyPoint& a, const GemmEfficiencyPoint& b) {
                return std::tuple(std::string(dtypeName(a.dtype)), a.flops, a.bytes) < std::tuple(std::string(dtypeName(b.dtype)), b.flops, b.bytes);
            });
            std::sort(c.collectives.begin(), c.collectives.end(), [](const CollectiveFit& a, const CollectiveFit& b) {
                return std::tuple(std::string(linkClassName(a.link)), a.devices, std::string(collectiveKindName(a.kind))) <
                       std::tuple(std::string(linkClassName(b.link)), b.devices, std::string(collectiveKindName(b.kind)));
            });
            return c;
        }());
        // Writing through a read-only handle is refused.
        QCOMPARE(db.putSegment(id, record("2,2", 1.0)).error().code, std::string("profile_db.io"));
    }

    void keptFlags() {
        QTemporaryDir dir;
        auto db = must(ProfileDb::open(dir.filePath("k.db").toStdString()), "open");
        const int64_t id = must(db.hardwareId(fingerprint(), "h100-sxm"), "hw");
        for (const char* c : {"0,0", "0,1", "1,0"}) QVERIFY(static_cast<bool>(db.putSegment(id, record(c, 1.0))));
        QVERIFY(static_cast<bool>(db.setKept(id, "0x00000000deadbeef", "{x=8 (intra)}", {"0,1", "1,0"})));
        for (const SegmentRecord& r : must(db.segments(id), "segments")) QCOMPARE(r.kept, r.combination != "0,0");
    }

    void planningMeasurementsPickTheHardware() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.db").toStdString();
        {
            auto db = must(ProfileDb::open(path), "open");
            const int64_t a = must(db.hardwareId(fingerprint("NVIDIA A100-SXM4-40GB"), "a100-sxm-40gb"), "a100");
            const int64_t h = must(db.hardwareId(fingerprint(), "h100-sxm"), "h100");
            QVERIFY(static_cast<bool>(db.putOps(a, {{1, "a", 0.5, 1}}, CommMode::Measured)));
            QVERIFY(static_cast<bool>(db.putOps(h, {{2, "h", 0.25, 1}}, CommMode::Measured)));
            QVERIFY(static_cast<bool>(db.putCalibration(h, calibration())));
        }
        auto pm = must(planningMeasurements(path, "h100-sxm"), "h100");
        QCOMPARE(pm.hardware.hardwareSpec, std::string("h100-sxm"));
        QCOMPARE(pm.measured, (std::vector<std::pair<uint64_t, double>>{{2, 0.25}}));
        QVERIFY(!pm.calibration.empty());
        auto byKey = must(planningMeasurements(path, "ignored", fingerprint("NVIDIA A100-SXM4-40GB").key()), "by key");
        QCOMPARE(byKey.measured, (std::vector<std::pair<uint64_t, double>>{{1, 0.5}}));
        QVERIFY(byKey.calibration.empty());
        auto none = planningMeasurements(path, "v100-sxm-32gb");
        QVERIFY(!none);
        QCOMPARE(none.error().code, std::string("profile_db.not_found"));
        QVERIFY(none.error().message.find("a100-sxm-40gb") != std::string::npos);
        QCOMPARE(planningMeasurements(dir.filePath("missing.db").toStdString(), "h100-sxm").error().code, std::string("profile_db.io"));
    }

    // Simulated numbers never stand in for measurements: a DB with a real and a (more recently
    // updated) simulated fingerprint of the same spec plans with the real one; a DB of simulated
    // runs only still plans with them (the plan says SIMULATED); naming the key picks either.
    void simulatedNeverStandsInForMeasurements() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("mixed.db").toStdString();
        HardwareFingerprint sim;
        sim.gpuModel = "simulated";
        sim.driverVersion = "none";
        sim.cudaVersion = "none";
        sim.gpuCount = 8;
        sim.interconnect = HardwareFingerprint::kSimulatedInterconnect;
        QVERIFY(sim.simulated());
        QVERIFY(!fingerprint().simulated());
        {
            auto db = must(ProfileDb::open(path), "open");
            const int64_t real = must(db.hardwareId(fingerprint(), "h100-sxm"), "real");
            QVERIFY(static_cast<bool>(db.putOps(real, {{2, "real", 0.25, 1}}, CommMode::Measured)));
            QThread::msleep(20);
            const int64_t simulated = must(db.hardwareId(sim, "h100-sxm"), "simulated");
            QVERIFY(static_cast<bool>(db.putOps(simulated, {{2, "simulated", 0.125, 1}}, CommMode::Measured)));
            QCOMPARE(must(db.hardwareFor("h100-sxm"), "for").front().key, sim.key());  // the most recent one
        }
        auto pm = must(planningMeasurements(path, "h100-sxm"), "plan");
        QCOMPARE(pm.hardware.key, fingerprint().key());
        QCOMPARE(pm.measured, (std::vector<std::pair<uint64_t, double>>{{2, 0.25}}));
        auto named = must(planningMeasurements(path, "h100-sxm", sim.key()), "named");
        QVERIFY(named.hardware.fingerprint.simulated());

        const std::string simPath = dir.filePath("only.simulated.db").toStdString();
        {
            auto db = must(ProfileDb::open(simPath), "open");
            const int64_t simulated = must(db.hardwareId(sim, "h100-sxm"), "simulated");
            QVERIFY(static_cast<bool>(db.putOps(simulated, {{3, "simulated", 0.5, 1}}, CommMode::Measured)));
        }
        QVERIFY(must(planningMeasurements(simPath, "h100-sxm"), "simulated only").hardware.fingerprint.simulated());
    }

    void simulatedDbPathIsBesideTheDb_data() {
        QTest::addColumn<QString>("db");
        QTest::addColumn<QString>("simulated");
        QTest::newRow("db") << "/data/cfp-explorer/profile.db" << "/data/cfp-explorer/profile.simulated.db";
        QTest::newRow("already simulated") << "/d/profile.simulated.db" << "/d/profile.simulated.db";
        QTest::newRow("no extension") << "/d.x/profile" << "/d.x/profile.simulated.db";
        QTest::newRow("relative") << "h100.sqlite" << "h100.simulated.db";
        QTest::newRow("hidden file") << "/d/.profile" << "/d/.profile.simulated.db";
    }
    void simulatedDbPathIsBesideTheDb() {
        QFETCH(QString, db);
        QFETCH(QString, simulated);
        QCOMPARE(QString::fromStdString(simulatedDbPath(db.toStdString())), simulated);
    }

    // Damaged or foreign files: a clear error naming the file and how to start over; the file is
    // left as it was.
    void damagedFilesAreErrors_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("garbage") << "garbage";
        QTest::newRow("corrupted pages") << "corrupted";
        QTest::newRow("truncated") << "truncated";
        QTest::newRow("foreign sqlite") << "foreign";
        QTest::newRow("missing table") << "missing-table";
    }
    void damagedFilesAreErrors() {
        QFETCH(QString, kind);
        QTemporaryDir dir;
        const QString path = dir.filePath("d.db");
        const std::string p = path.toStdString();
        if (kind == "garbage") {
            writeFile(path, QByteArray("this is not a database, just some text that happens to sit here\n").repeated(200));
        } else if (kind == "corrupted" || kind == "truncated") {
            {
                auto db = must(ProfileDb::open(p), "create");
                const int64_t id = must(db.hardwareId(fingerprint(), "h100-sxm"), "hw");
                for (int i = 0; i < 300; ++i) QVERIFY(static_cast<bool>(db.putSegment(id, record(std::to_string(i), 0.001 * i))));
            }
            QByteArray bytes = slurp(path);
            QVERIFY(bytes.size() > 8192);
            if (kind == "corrupted") {
                for (qsizetype i = 4096; i < bytes.size(); i += 97) bytes[i] = static_cast<char>(0x5a);
                writeFile(path, bytes);
            } else {
                writeFile(path, bytes.left(bytes.size() / 2 + 100));
            }
        } else {
            // Valid SQLite, but not ours (foreign), or ours with a table missing; written with
            // Python's sqlite3 module, an independent writer.
            const std::string body = kind == "foreign" ? std::string("c.execute('create table t(x)'); ")
                                                       : std::string("c.execute('create table meta(key text primary key, value text)'); "
                                                                     "c.execute(\\\"insert into meta values ('format','cfp-profile-db')\\\"); "
                                                                     "c.execute(\\\"insert into meta values ('schema_version','1')\\\"); ");
            QVERIFY(std::system(("python3 -c \"import sqlite3; c = sqlite3.connect('" + p + "'); " + body + "c.commit()\"").c_str()) == 0);
        }
        const QByteArray before = slurp(path);
        auto r = ProfileDb::open(p);
        QVERIFY(!r);
        QCOMPARE(r.error().code, std::string("profile_db.damaged"));
        QVERIFY(r.error().message.find(p) != std::string::npos);
        QVERIFY(r.error().message.find("--new-db") != std::string::npos);
        QCOMPARE(slurp(path), before);  // nothing changed

        // Starting a new DB keeps the damaged file next to it.
        auto fresh = must(ProfileDb::open(p, ProfileDb::OpenMode::StartNew), "start new");
        QVERIFY(fresh.movedAside().find(".damaged-") != std::string::npos);
        QCOMPARE(slurp(QString::fromStdString(fresh.movedAside())), before);
        const int64_t id = must(fresh.hardwareId(fingerprint(), "h100-sxm"), "hw");
        QVERIFY(static_cast<bool>(fresh.putSegment(id, record("0", 1.0))));
        QCOMPARE(must(fresh.segments(id), "segments").size(), size_t{1});
    }

    void newerSchemaIsLeftAlone() {
        QTemporaryDir dir;
        const std::string p = dir.filePath("n.db").toStdString();
        { auto db = must(ProfileDb::open(p), "create"); }
        QVERIFY(std::system(("python3 -c \"import sqlite3; c = sqlite3.connect('" + p +
                             "'); c.execute(\\\"update meta set value='99' where key='schema_version'\\\"); c.commit()\"")
                                .c_str()) == 0);
        auto r = ProfileDb::open(p);
        QVERIFY(!r);
        QCOMPARE(r.error().code, std::string("profile_db.newer_schema"));
        // StartNew does not move a DB it cannot read the version of as damaged.
        auto again = ProfileDb::open(p, ProfileDb::OpenMode::StartNew);
        QVERIFY(!again);
        QVERIFY(QFile::exists(QString::fromStdString(p)));
    }

    void startNewKeepsAHealthyFile() {
        QTemporaryDir dir;
        const std::string p = dir.filePath("h.db").toStdString();
        {
            auto db = must(ProfileDb::open(p), "create");
            const int64_t id = must(db.hardwareId(fingerprint(), "h100-sxm"), "hw");
            QVERIFY(static_cast<bool>(db.putSegment(id, record("0", 1.0))));
        }
        auto fresh = must(ProfileDb::open(p, ProfileDb::OpenMode::StartNew), "start new");
        QVERIFY(fresh.movedAside().find(".old-") != std::string::npos);
        QVERIFY(must(fresh.hardware(), "empty").empty());
        auto old = must(ProfileDb::open(fresh.movedAside(), ProfileDb::OpenMode::ReadOnly), "old");
        const auto hw = must(old.hardware(), "old hardware");
        QCOMPARE(hw.size(), size_t{1});
        QCOMPARE(must(old.segments(hw[0].id), "old segments").size(), size_t{1});
    }

    void openErrors() {
        QTemporaryDir dir;
        QCOMPARE(ProfileDb::open(dir.filePath("none.db").toStdString(), ProfileDb::OpenMode::ReadOnly).error().code,
                 std::string("profile_db.io"));
        QCOMPARE(ProfileDb::open(dir.path().toStdString()).error().code, std::string("profile_db.io"));
        QCOMPARE(ProfileDb::open(dir.filePath("no/such/folder/x.db").toStdString()).error().code, std::string("profile_db.io"));
        QCOMPARE(ProfileDb::open("").error().code, std::string("profile_db.io"));
    }
};

QTEST_APPLESS_MAIN(TestProfileDb)
#include "tst_profile_db.moc"
