// Every reader of model and plan files (native graph JSON, config.json, plan, HLO text, ONNX) turns
// truncated and corrupted files into an error with its format's stable code and a location that
// names the file — never a crash or an exception.
#include <QtTest>

#include <fstream>
#include <functional>
#include <sstream>

#include "import/hlo_import.h"
#include "import/stablehlo_import.h"
#include "import/onnx_import.h"
#include "io/graph_json.h"
#include "ir/graph_builder.h"
#include "models/models.h"
#include "plan/plan_json.h"

#include "must.h"

using namespace cfp;

Q_DECLARE_METATYPE(std::string)

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

using Reader = std::function<std::optional<Error>(std::string_view text, const std::string& source)>;

template <typename T>
std::optional<Error> errorOf(const Result<T>& r) {
    if (r) return std::nullopt;
    return r.error();
}

struct Format {
    std::string fixture;
    std::vector<std::string> codePrefixes;
    Reader read;
};

Format formatNamed(const std::string& name) {
    const std::string data = CFP_TEST_DATA_DIR;
    if (name == "graph")
        return {data + "/graphs/mlp.json", {"json.", "graph.", "shape."},
                [](std::string_view t, const std::string& s) { return errorOf(readGraphJson(t, s)); }};
    if (name == "config")
        return {std::string(CFP_SOURCE_DIR) + "/resources/models/llama2-7b.json", {"config.", "model."},
                [](std::string_view t, const std::string& s) { return errorOf(parseHfConfig(t, s)); }};
    if (name == "plan")
        return {data + "/plans/mlp_plan.json", {"plan."},
                [](std::string_view t, const std::string& s) { return errorOf(planFromJson(t, s)); }};
    if (name == "hlo")
        return {data + "/hlo/jax_mlp.hlo", {"hlo.", "import."},
                [](std::string_view t, const std::string& s) { return errorOf(importHloText(t, s)); }};
    if (name == "hlo shard_map")  // manual regions: shardings, replica groups, boundaries
        return {data + "/hlo/shard_map_mlp.hlo", {"hlo.", "import."},
                [](std::string_view t, const std::string& s) { return errorOf(importHloText(t, s)); }};
    if (name == "stablehlo shard_map")
        return {data + "/stablehlo/shard_map_mlp.mlir", {"stablehlo.", "hlo.", "import."},
                [](std::string_view t, const std::string& s) { return errorOf(importStableHloText(t, s)); }};
    return {data + "/onnx/block.onnx", {"onnx.", "import."},
            [](std::string_view t, const std::string& s) { return errorOf(importOnnxBytes(t, s)); }};
}

bool hasPrefix(const std::string& s, const std::vector<std::string>& prefixes) {
    for (const auto& p : prefixes)
        if (s.rfind(p, 0) == 0) return true;
    return false;
}

}  // namespace

class TestImportErrors : public QObject {
    Q_OBJECT

private slots:
    void corruptedFiles_data() {
        QTest::addColumn<std::string>("format");
        for (const char* f : {"graph", "config", "plan", "hlo", "hlo shard_map", "stablehlo shard_map", "onnx"})
            QTest::newRow(f) << std::string(f);
    }

    void corruptedFiles() {
        QFETCH(std::string, format);
        if (format == "onnx" && !onnxImportAvailable()) QSKIP("built without ONNX");
        const Format f = formatNamed(format);
        const std::string text = slurp(f.fixture);
        QVERIFY2(!text.empty(), f.fixture.c_str());
        QVERIFY2(!f.read(text, "good"), "the fixture itself must read");
        int errors = 0;
        auto check = [&](std::string_view input, const char* what) {
            const std::optional<Error> e = f.read(input, "bad.file");
            if (!e) return;
            ++errors;
            const std::string msg = std::string(what) + ": " + e->toString();
            QVERIFY2(hasPrefix(e->code, f.codePrefixes), msg.c_str());
            // The plan reader names the file in its message ("(in FILE)"), the others in `where`.
            if (format == "plan") QVERIFY2(e->toString().find("bad.file") != std::string::npos, msg.c_str());
            else QVERIFY2(e->where.rfind("bad.file", 0) == 0, msg.c_str());
            QVERIFY2(!e->message.empty(), msg.c_str());
        };
        const size_t stride = std::max<size_t>(1, text.size() / 400);
        for (size_t n = 0; n < text.size(); n += stride) check(std::string_view(text).substr(0, n), "truncated");
        std::string flipped = text;
        for (size_t i = 0; i < text.size(); i += stride) {
            for (char c : {'\0', '"', '}', '9', '\xff'}) {
                flipped[i] = c;
                check(flipped, "corrupted");
            }
            flipped[i] = text[i];
        }
        QVERIFY(errors > 100);
        // The empty file and the wrong format.
        QVERIFY(f.read("", "bad.file"));
        QVERIFY(f.read(format.rfind("hlo", 0) == 0 ? std::string("{\"a\": 1}") : std::string("HloModule m"), "bad.file"));
    }
};

QTEST_GUILESS_MAIN(TestImportErrors)
#include "tst_import_errors.moc"
