// `cfp-explorer`: the Qt desktop explorer over the CFP core.
//
//   cfp-explorer [MODEL|PROJECT]              open a model (default builtin:gpt3-1.3b) and analyse it
//   cfp-explorer --screenshot FILE [MODEL]    load, analyse, plan, render, write FILE (PNG), exit

#include <QApplication>

#include <cstdio>
#include <cstring>
#include <string>

#include "main_window.h"

namespace {

const char* kHelp =
    "Usage: cfp-explorer [MODEL|PROJECT]\n"
    "       cfp-explorer --screenshot FILE [MODEL] [--nodes N] [--size WxH] [--estimate CONFIG]\n\n"
    "Opens MODEL (builtin:NAME, a config.json, a native graph file, XLA HLO text or an ONNX model;\n"
    "default builtin:gpt3-1.3b on one node of 8xH100) or a project file, and analyses it. --screenshot loads, analyses and plans MODEL,\n"
    "renders the window with its charts into FILE (PNG) and exits; it runs without a display under\n"
    "QT_QPA_PLATFORM=offscreen or xvfb-run. --size: the window (default 1280x800, a small laptop screen);\n"
    "--nodes: nodes of 8 GPUs (default 1); --estimate: also price that configuration.\n";

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::fputs(kHelp, stdout);
            return 0;
        }
        if (!std::strcmp(argv[i], "--version")) {
            std::puts("cfp-explorer " CFP_VERSION);
            return 0;
        }
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("cfp-explorer"));
    QApplication::setApplicationName(QStringLiteral("cfp-explorer"));
    QApplication::setApplicationVersion(QStringLiteral(CFP_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.cfp_explorer.CfpExplorer"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/cfp-explorer.svg")));

    QStringList args = QApplication::arguments().mid(1);
    if (!args.isEmpty() && args[0] == QLatin1String("--screenshot")) {
        // --estimate CONFIG: also price that configuration in the search panel before the shot.
        // Options with a value, taken out of the arguments.
        auto option = [&args](const QString& name, QString& value) {
            const qsizetype at = args.indexOf(name);
            if (at < 0) return true;
            if (at + 1 >= args.size()) return false;
            value = args[at + 1];
            args.remove(at, 2);
            return true;
        };
        QString estimate, sizeText = QStringLiteral("1280x800"), nodesText = QStringLiteral("1");
        if (!option(QStringLiteral("--estimate"), estimate)) {
            std::fputs("cfp-explorer: error: --estimate needs a configuration (tp=8,dp=16,...) [cli.usage]\n", stderr);
            return 2;
        }
        bool okW = false, okH = false, okN = false;
        if (!option(QStringLiteral("--size"), sizeText) || !option(QStringLiteral("--nodes"), nodesText)) {
            std::fputs("cfp-explorer: error: --size needs WxH and --nodes a count [cli.usage]\n", stderr);
            return 2;
        }
        const QStringList dims = sizeText.split(QLatin1Char('x'));
        const int width = dims.size() == 2 ? dims[0].toInt(&okW) : 0, height = dims.size() == 2 ? dims[1].toInt(&okH) : 0;
        const int nodes = nodesText.toInt(&okN);
        if (!okW || !okH || width < 640 || height < 480) {
            std::fprintf(stderr, "cfp-explorer: error: --size %s: expected WxH of at least 640x480 [cli.usage]\n", qPrintable(sizeText));
            return 2;
        }
        if (!okN || nodes < 1) {
            std::fprintf(stderr, "cfp-explorer: error: --nodes %s: expected a count of 1 or more [cli.usage]\n", qPrintable(nodesText));
            return 2;
        }
        if (args.size() < 2 || args.size() > 3) {
            std::fputs("cfp-explorer: error: --screenshot needs FILE and at most one MODEL [cli.usage]\n", stderr);
            return 2;
        }
        const std::string model = args.size() == 3 ? args[2].toStdString() : std::string(cfp::kDefaultModel);
        return cfp::explorer::MainWindow::screenshot(args[1], model, QSize(width, height), estimate, nodes);
    }
    if (args.size() > 1 || (!args.isEmpty() && args[0].startsWith(QLatin1String("--")))) {
        std::fprintf(stderr, "cfp-explorer: error: unexpected arguments (see cfp-explorer --help) [cli.usage]\n");
        return 2;
    }
    cfp::explorer::WindowOptions options;
    options.rememberLayout = true;
    options.confirmClose = true;
    if (!args.isEmpty()) options.model = args[0].toStdString();
    cfp::explorer::MainWindow window(options);
    window.show();
    return app.exec();
}
