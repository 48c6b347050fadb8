#pragma once
// What every `cfp` command shares: exit codes, the one-line error format, model options and
// parsers of the common option values.

#include <nlohmann/json.hpp>
#include <string>

#include "args.h"
#include "format.h"
#include "hardware/hardware.h"
#include "loader/model_loader.h"
#include "plan/plan.h"
#include "util/result.h"

namespace cfp::cli {

using Json = nlohmann::ordered_json;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

extern const char* const kModelOptionsHelp;

// Prints "cfp: error: WHERE: WHAT [code]" on stderr; the exit code (2 for cli.usage, else 1).
int fail(const Error& e);

// The model options of describe, analyze, graph, plan and profile.
OptionSpec modelOptionSpec();
Result<BuildOptions> buildOptionsFrom(const ParsedArgs& args);
// MODEL (default: the built-in default model) and its options, loaded; importer notes on stderr.
Result<LoadedModel> loadFromArgs(const ParsedArgs& args);

// Memory sizes: plain bytes or with a unit (GiB, GB, MiB, MB, KiB, KB, TiB, TB).
Result<int64_t> parseBytes(const std::string& option, const std::string& text);

// --hardware (default h100-sxm) and --nodes (default 1).
Result<Cluster> clusterFromArgs(const ParsedArgs& args);

std::string ms(double seconds);           // "12.3 ms"
Json costJson(const CostBreakdown& c);

}  // namespace cfp::cli
