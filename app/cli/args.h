#pragma once
// Minimal command-line parsing for `cfp` subcommands: `--name value`, `--name=value`, flags and
// positionals. Unknown options are errors (a typo must not silently change a plan).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "util/result.h"

namespace cfp::cli {

struct OptionSpec {
    std::set<std::string> valued;  // options that take a value: "--batch"
    std::set<std::string> flags;   // options without a value: "--json"
};

struct ParsedArgs {
    std::vector<std::string> positionals;
    std::map<std::string, std::string> values;             // the last value of each option
    std::map<std::string, std::vector<std::string>> lists;  // every value, for repeatable options
    std::set<std::string> flags;

    bool has(const std::string& flag) const { return flags.count(flag) > 0; }
    std::vector<std::string> all(const std::string& name) const {
        auto it = lists.find(name);
        return it == lists.end() ? std::vector<std::string>{} : it->second;
    }
    std::optional<std::string> value(const std::string& name) const {
        auto it = values.find(name);
        if (it == values.end()) return std::nullopt;
        return it->second;
    }
};

Result<ParsedArgs> parseArgs(const std::vector<std::string>& args, const OptionSpec& spec);

// Parses a positive integer option value; error names the option.
Result<int64_t> parsePositive(const std::string& option, const std::string& text);

}  // namespace cfp::cli
