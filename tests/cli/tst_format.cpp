// Number formatting used by the CLI's human output.
#include <QtTest>

#include "format.h"

using namespace cfp::cli;

class TestFormat : public QObject {
    Q_OBJECT
private slots:
    void formats() {
        QCOMPARE(withCommas(0), std::string("0"));
        QCOMPARE(withCommas(1234567), std::string("1,234,567"));
        QCOMPARE(withCommas(-1000), std::string("-1,000"));
        QCOMPARE(humanCount(174.6e9), std::string("174.6 B"));
        QCOMPARE(humanCount(125.2e6), std::string("125.2 M"));
        QCOMPARE(humanCount(12), std::string("12"));
        QCOMPARE(humanBytes(512), std::string("512 B"));
        QCOMPARE(humanBytes(3.0 * 1024 * 1024 * 1024), std::string("3.00 GiB"));
        QCOMPARE(humanFlops(1.5e18), std::string("1.50 EFLOP"));
        // A plan against another step time: faster or slower, never "0.94x faster".
        QCOMPARE(speedup(1.34, 1.0), std::string("1.34x faster"));
        QCOMPARE(speedup(1.0, 1.0), std::string("1.00x faster"));
        QCOMPARE(speedup(1.43, 1.52), std::string("1.06x slower"));
    }
};

#include "tst_format.moc"
int runFormatTests(int argc, char** argv) {
    TestFormat t;
    return QTest::qExec(&t, argc, argv);
}
