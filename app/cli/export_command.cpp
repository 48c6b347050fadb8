// `cfp export`: a plan file in a training framework's format.

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
#include "export/export.h"
#include "io/atomic_file.h"
#include "plan/plan_json.h"
#include "workflow/workflow.h"

namespace cfp::cli {

int cmdExport(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.valued = {"--format", "-o", "--output", "--names", "--trace-devices"};
    spec.flags = {"--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::string formats;
        for (const auto& f : exportFormatNames()) formats += (formats.empty() ? "" : ", ") + f;
        std::cout << "Usage: cfp export PLAN --format F -o FILE [--names N] [--trace-devices roles|all]\n\n"
                     "Writes a plan (from `cfp plan -o PLAN`) for a training job. Formats: " << formats << ".\n"
                     "The model is rebuilt from the plan's model source and checked against the plan.\n"
                     "FILE '-' writes to stdout. See docs/exporters.md.\n\n"
                     "  --names N   parameter and module names of the jax, dtensor and hlo-sharding files:\n"
                     "              cfp (the graph's paths), hf (Hugging Face transformers: Llama, Mistral,\n"
                     "              Mixtral, GPT-2), torchtitan (Llama), or auto (default: hf for a model read from a\n"
                     "              Hugging Face config.json, else cfp)\n"
                     "  --trace-devices roles|all\n"
                     "              trace: one timeline per distinct role (default; every device of an SPMD\n"
                     "              plan, or of one pipeline stage, runs the same), or a process per device\n"
                     "              with the devices of each of its communication groups named\n";
        return kExitOk;
    }
    if (args->positionals.size() != 1) return fail(makeError("cli.usage", "export needs one PLAN file"));
    auto fmtText = args->value("--format");
    if (!fmtText) return fail(makeError("cli.usage", "export needs --format F"));
    auto format = parseExportFormat(*fmtText);
    if (!format) return fail(format.error());
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "export needs -o FILE (or -o - for stdout)"));
    ExportOptions options;
    if (auto names = args->value("--names")) {
        auto c = parseNameConvention(*names);
        if (!c) return fail(c.error());
        options.names = *c;
    }
    if (auto devices = args->value("--trace-devices")) {
        if (*devices != "roles" && *devices != "all")
            return fail(makeError("cli.usage", "takes roles or all, not '" + *devices + "'", "--trace-devices"));
        if (*format != ExportFormat::Trace) return fail(makeError("cli.usage", "applies to --format trace only", "--trace-devices"));
        options.traceEveryDevice = *devices == "all";
    }
    auto plan = readPlanFile(args->positionals[0]);
    if (!plan) return fail(plan.error());
    auto model = reloadPlanModel(*plan);
    if (!model) return fail(model.error());
    std::vector<std::string> notes;
    auto files = renderExportFiles(model->graph, *plan, *format, *out, model->config ? &*model->config : nullptr, options, &notes);
    if (!files) return fail(files.error());
    for (const std::string& n : notes) std::cerr << "cfp: note: " << n << '\n';
    if (*out == "-") {
        std::cout << files->front().text;
        return kExitOk;
    }
    // The files it refers to first, so that the export never names a file not yet there.
    for (auto it = files->rbegin(); it != files->rend(); ++it)
        if (auto st = writeFileAtomically(it->path, it->text); !st) return fail(st.error());
    std::cerr << "cfp: wrote " << *fmtText << " export to " << *out;
    for (size_t i = 1; i < files->size(); ++i) std::cerr << (i == 1 ? " and its schedule to " : ", ") << (*files)[i].path;
    std::cerr << '\n';
    return kExitOk;
}

}  // namespace cfp::cli
