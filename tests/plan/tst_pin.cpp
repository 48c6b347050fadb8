// Pins and mesh choices: one parser and one printer each, round trips, and located errors.

#include <QtTest>

#include "must.h"
#include "plan/pin.h"

using namespace cfp;
using cfp::test::must;

class TestPin : public QObject {
    Q_OBJECT

private slots:
    void parsesEveryForm_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("scope");
        QTest::addColumn<int>("index");
        QTest::addColumn<QStringList>("entries");  // "*" for free
        QTest::addColumn<QString>("printed");
        QTest::newRow("segment") << "3=x:rows,*,*,x:contract" << 0 << 3 << QStringList{"x:rows", "*", "*", "x:contract"}
                                 << "3=x:rows,*,*,x:contract";
        QTest::newRow("type, multi-axis labels") << "T1=dp:rows,tp:cols;*;*;tp:contract" << 1 << 1
                                                 << QStringList{"dp:rows,tp:cols", "*", "*", "tp:contract"}
                                                 << "T1=dp:rows,tp:cols;*;*;tp:contract";
        QTest::newRow("lower-case type") << "t2=0,1" << 1 << 2 << QStringList{"0", "1"} << "T2=0,1";
        QTest::newRow("type with ';' but single-axis labels") << "T0=x:rows;x:cols" << 1 << 0 << QStringList{"x:rows", "x:cols"}
                                                              << "T0=x:rows,x:cols";
        QTest::newRow("block") << "b17=x:cols" << 2 << 17 << QStringList{"x:cols"} << "b17=x:cols";
        QTest::newRow("block alias, multi-axis") << "block:4=dp:rows,tp:cols" << 2 << 4 << QStringList{"dp:rows,tp:cols"}
                                                 << "b4=dp:rows,tp:cols";
        QTest::newRow("one multi-axis entry") << "5=dp:rows,tp:cols;" << 0 << 5 << QStringList{"dp:rows,tp:cols"}
                                              << "5=dp:rows,tp:cols;";
        QTest::newRow("index entries") << "0=2,*,1" << 0 << 0 << QStringList{"2", "*", "1"} << "0=2,*,1";
    }

    void parsesEveryForm() {
        QFETCH(QString, text);
        QFETCH(int, scope);
        QFETCH(int, index);
        QFETCH(QStringList, entries);
        QFETCH(QString, printed);
        const Pin pin = must(parsePin(text.toStdString()), "pin");
        QCOMPARE(static_cast<int>(pin.scope), scope);
        QCOMPARE(pin.index, index);
        QCOMPARE(static_cast<qsizetype>(pin.strategies.size()), entries.size());
        for (qsizetype k = 0; k < entries.size(); ++k) {
            const auto& e = pin.strategies[static_cast<size_t>(k)];
            QCOMPARE(QString::fromStdString(e ? *e : "*"), entries[k]);
        }
        QCOMPARE(QString::fromStdString(pin.toString()), printed);
        // The printed form is canonical: it parses back to the same pin and prints the same.
        const Pin again = must(parsePin(pin.toString()), "printed pin");
        QVERIFY(again == pin);
        QCOMPARE(again.toString(), pin.toString());
    }

    void rejectsMalformedPins_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("no equals") << "3" << "expected SEGMENT=COMBO";
        QTest::newRow("nothing after") << "3=" << "expected SEGMENT=COMBO";
        QTest::newRow("nothing before") << "=x:rows" << "expected SEGMENT=COMBO";
        QTest::newRow("bad segment") << "x3=x:rows" << "no segment 'x3'";
        QTest::newRow("negative segment") << "-1=x:rows" << "no segment '-1'";
        QTest::newRow("bad type") << "T=x:rows" << "no segment type 'T'";
        QTest::newRow("bad block") << "bx=x:rows" << "no block 'bx'";
        QTest::newRow("free block") << "b3=*" << "names one strategy";
        QTest::newRow("empty entry") << "2=x:rows,,*" << "entry 2 is empty";
    }

    void rejectsMalformedPins() {
        QFETCH(QString, text);
        QFETCH(QString, fragment);
        auto pin = parsePin(text.toStdString());
        QVERIFY(!pin);
        QCOMPARE(QString::fromStdString(pin.error().code), QStringLiteral("plan.bad_pin"));
        QVERIFY2(QString::fromStdString(pin.error().message).contains(fragment), pin.error().message.c_str());
    }

    void meshChoiceRoundTrips() {
        QVERIFY(must(MeshChoice::parse("auto"), "auto").isAuto());
        QVERIFY(must(MeshChoice::parse(""), "empty").isAuto());
        QCOMPARE(MeshChoice::automatic().toString(), std::string("auto"));
        for (const char* text : {"8", "2x4", "dp=2,tp=4", "2x2x2"}) {
            const MeshChoice c = must(MeshChoice::parse(text), text);
            QVERIFY(!c.isAuto());
            const MeshChoice again = must(MeshChoice::parse(c.toString()), "printed");
            QVERIFY(again == c);
            QCOMPARE(again.mesh().deviceCount(), c.mesh().deviceCount());
        }
        QCOMPARE(must(MeshChoice::parse("2x4"), "2x4").toString(), std::string("x=2,y=4"));
        QVERIFY(!(must(MeshChoice::parse("2x4"), "a") == must(MeshChoice::parse("4x2"), "b")));
        auto bad = MeshChoice::parse("2x");
        QVERIFY(!bad);
        QVERIFY(QString::fromStdString(bad.error().toString()).contains("mesh"));
    }
};

QTEST_GUILESS_MAIN(TestPin)
#include "tst_pin.moc"
