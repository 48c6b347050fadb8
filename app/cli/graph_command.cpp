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
#include "export/export.h"
#include "plan/plan_json.h"
#include "workflow/workflow.h"

namespace cfp::cli {

int cmdGraph(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert("-o");
    spec.valued.insert("--output");
    spec.valued.insert("--plan");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp graph [MODEL] [options] -o FILE\n\n"
                     "Writes MODEL's training-step graph as native JSON (atomically), or as XLA HLO text when\n"
                     "FILE ends in .hlo. FILE '-' writes JSON to stdout.\n\n"
                     "  --plan PLAN   the plan's model (instead of MODEL), every instruction of the HLO text with\n"
                     "                the plan's layout as XLA's sharding={…} (FILE must end in .hlo); the\n"
                     "                importer reads them back as the source's shardings (cfp describe)\n\n"
                  << kModelOptionsHelp;
        return kExitOk;
    }
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "graph needs -o FILE (or -o - for stdout)"));
    const bool hlo = out->size() > 4 && out->compare(out->size() - 4, 4, ".hlo") == 0;
    if (auto planFile = args->value("--plan")) {
        if (!hlo) return fail(makeError("cli.usage", "--plan writes the plan's shardings into HLO text: FILE must end in .hlo"));
        if (!args->positionals.empty()) return fail(makeError("cli.usage", "--plan names the model: give no MODEL"));
        auto plan = readPlanFile(*planFile);
        if (!plan) return fail(plan.error());
        auto model = reloadPlanModel(*plan);
        if (!model) return fail(model.error());
        auto text = renderExport(model->graph, *plan, ExportFormat::HloModule);  // = cfp export --format hlo
        if (!text) return fail(text.error());
        if (auto st = writeFileAtomically(*out, *text); !st) return fail(st.error());
        std::cerr << "cfp: wrote " << model->graph.size() << " ops with the plan's shardings on " << plan->mesh.toString()
                  << " to " << *out << '\n';
        return kExitOk;
    }
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
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
