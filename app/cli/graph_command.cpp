// `cfp graph`: a model's training step as native JSON or HLO text.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "import/hlo_writer.h"
#include "io/atomic_file.h"
#include "io/graph_json.h"

namespace cfp::cli {

int cmdGraph(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert("-o");
    spec.valued.insert("--output");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp graph [MODEL] [options] -o FILE\n\n"
                     "Writes MODEL's training-step graph as native JSON (atomically), or as XLA HLO text when\n"
                     "FILE ends in .hlo. FILE '-' writes JSON to stdout.\n\n"
                  << kModelOptionsHelp;
        return kExitOk;
    }
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "graph needs -o FILE (or -o - for stdout)"));
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    const bool hlo = out->size() > 4 && out->compare(out->size() - 4, 4, ".hlo") == 0;
    if (*out == "-") {
        std::cout << writeGraphJson(model->graph);
        return kExitOk;
    }
    if (hlo) {
        if (auto st = writeFileAtomically(*out, writeHloText(model->graph)); !st) return fail(st.error());
    } else if (auto st = writeGraphFile(model->graph, *out); !st) {
        return fail(st.error());
    }
    std::cerr << "cfp: wrote " << model->graph.size() << " ops to " << *out << '\n';
    return kExitOk;
}

}  // namespace cfp::cli
