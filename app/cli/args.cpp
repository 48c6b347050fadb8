#include "args.h"

#include <charconv>

namespace cfp::cli {

Result<ParsedArgs> parseArgs(const std::vector<std::string>& args, const OptionSpec& spec) {
    ParsedArgs out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() < 2 || a[0] != '-' || a == "--") {
            out.positionals.push_back(a);
            continue;
        }
        std::string name = a;
        std::optional<std::string> inlineValue;
        if (auto eq = a.find('='); eq != std::string::npos) {
            name = a.substr(0, eq);
            inlineValue = a.substr(eq + 1);
        }
        if (spec.flags.count(name)) {
            if (inlineValue) return makeError("cli.usage", "option " + name + " takes no value");
            out.flags.insert(name);
        } else if (spec.valued.count(name)) {
            if (inlineValue) {
                out.values[name] = *inlineValue;
                out.lists[name].push_back(*inlineValue);
            } else if (i + 1 < args.size()) {
                out.values[name] = args[++i];
                out.lists[name].push_back(out.values[name]);
            } else {
                return makeError("cli.usage", "option " + name + " needs a value");
            }
        } else {
            return makeError("cli.usage", "unknown option " + name);
        }
    }
    return out;
}

Result<int64_t> parsePositive(const std::string& option, const std::string& text) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0)
        return makeError("cli.usage", option + " expects a positive integer, got '" + text + "'");
    return v;
}

}  // namespace cfp::cli
