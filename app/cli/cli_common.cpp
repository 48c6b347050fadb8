// Shared pieces of the `cfp` commands (cli_common.h).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "hardware/hardware.h"
#include "import/imported_model.h"

namespace cfp::cli {

const char* const kModelOptionsHelp = R"(Model options (for builtin: and config.json models):
  --batch N          sequences per step (default 8)
  --seq N            tokens per sequence (default: the model's context, at most 2048)
  --dtype bf16|fp32  parameter/activation type; bf16 keeps fp32 master weights (default bf16)
  --qkv fused|separate   one fused QKV projection or three (default fused)
  --train            for imported forward-only models (.hlo, .onnx): add backward and AdamW
)";

int fail(const Error& e) {
    std::cerr << "cfp: error: " << e.toString() << '\n';
    return e.code == "cli.usage" ? kExitUsage : kExitFailure;
}

OptionSpec modelOptionSpec() {
    OptionSpec spec;
    spec.valued = {"--batch", "--seq", "--dtype", "--qkv"};
    spec.flags = {"--help", "-h", "--train"};
    return spec;
}

Result<BuildOptions> buildOptionsFrom(const ParsedArgs& args) {
    BuildOptions opt;
    if (auto v = args.value("--batch")) {
        auto n = cli::parsePositive("--batch", *v);
        if (!n) return n.error();
        opt.batch = *n;
    }
    if (auto v = args.value("--seq")) {
        auto n = cli::parsePositive("--seq", *v);
        if (!n) return n.error();
        opt.seq = *n;
    }
    if (auto v = args.value("--dtype")) {
        if (*v == "bf16") opt.dtype = DType::BF16;
        else if (*v == "fp32" || *v == "f32") opt.dtype = DType::F32;
        else return makeError("cli.usage", "--dtype expects bf16 or fp32, got '" + *v + "'");
    }
    if (auto v = args.value("--qkv")) {
        if (*v == "fused") opt.qkv = QkvLayout::Fused;
        else if (*v == "separate") opt.qkv = QkvLayout::Separate;
        else return makeError("cli.usage", "--qkv expects fused or separate, got '" + *v + "'");
    }
    return opt;
}

// Parses MODEL and model options shared by describe/graph; `extra` adds command-specific options.

Result<LoadedModel> loadFromArgs(const ParsedArgs& args) {
    if (args.positionals.size() > 1)
        return makeError("cli.usage", "expected one MODEL, got " + std::to_string(args.positionals.size()));
    const std::string spec = args.positionals.empty() ? std::string(kDefaultModel) : args.positionals[0];
    auto opt = buildOptionsFrom(args);
    if (!opt) return opt.error();
    ImportOptions importOptions;
    if (args.has("--train")) importOptions.training = TrainingMode::AppendTraining;
    auto model = loadModel(spec, *opt, importOptions);
    if (!model) return model;
    // Imported models: say what the importer approximated (one line each, on stderr).
    for (const ImportNote& n : model->notes) std::cerr << "cfp: note: " << n.toString() << '\n';
    return model;
}

Result<int64_t> parseBytes(const std::string& option, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!end || end == text.c_str() || !(v > 0) || !std::isfinite(v))
        return makeError("cli.usage", option + " expects a positive size such as 80GiB or 85899345920, got '" + text + "'");
    const std::string unit(end);
    double mult = 1;
    if (unit.empty() || unit == "B") mult = 1;
    else if (unit == "KiB") mult = 1024.0;
    else if (unit == "MiB") mult = 1024.0 * 1024.0;
    else if (unit == "GiB" || unit == "G") mult = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "TiB") mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    else if (unit == "KB") mult = 1e3;
    else if (unit == "MB") mult = 1e6;
    else if (unit == "GB") mult = 1e9;
    else if (unit == "TB") mult = 1e12;
    else return makeError("cli.usage", option + ": unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
    const double bytes = v * mult;
    if (bytes > 9.0e18) return makeError("cli.usage", option + " is too large: '" + text + "'");
    return static_cast<int64_t>(bytes);
}

// --hardware (default h100-sxm) and --nodes (default 1): the cluster plan and profile work on.

std::string ms(double seconds) { return cli::fixed(seconds * 1e3, 1) + " ms"; }

Json costJson(const CostBreakdown& c) {
    return {{"seconds", c.total()},
            {"compute_seconds", c.computeSeconds},
            {"collective_seconds", c.collectiveSeconds},
            {"reshard_seconds", c.reshardSeconds},
            {"provenance", std::string(provenanceName(c.provenance))}};
}

Result<Cluster> clusterFromArgs(const ParsedArgs& args) {
    auto hw = loadHardware(args.value("--hardware").value_or("h100-sxm"));
    if (!hw) return hw.error().withContext("--hardware");
    int64_t nodes = 1;
    if (auto v = args.value("--nodes")) {
        auto n = cli::parsePositive("--nodes", *v);
        if (!n) return n.error();
        nodes = *n;
    }
    return makeCluster(*hw, nodes);
}

}  // namespace cfp::cli
