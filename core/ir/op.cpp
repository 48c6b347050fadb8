#include "ir/op.h"

#include <array>

namespace cfp {

namespace {

constexpr std::array<std::string_view, kOpKindCount> kOpKindNames = {
    "parameter", "constant",   "iota",
    "negate",    "exponential", "log",      "sqrt",     "rsqrt",   "tanh",    "logistic",
    "abs",       "sign",        "sine",     "cosine",   "convert",
    "add",       "subtract",    "multiply", "divide",   "maximum", "minimum", "power",
    "compare",   "and",         "or",
    "select",
    "broadcast", "reshape",     "transpose", "slice",   "concatenate",
    "reduce",    "dot",
    "gather",    "scatter",
    "custom-call",
};

template <typename Enum, size_t N>
std::optional<Enum> parseByName(const std::array<std::string_view, N>& names, std::string_view name) {
    for (size_t i = 0; i < N; ++i)
        if (names[i] == name) return static_cast<Enum>(i);
    return std::nullopt;
}

constexpr std::array<std::string_view, 3> kPhaseNames = {"forward", "backward", "optimizer"};
constexpr std::array<std::string_view, 4> kRoleNames = {"none", "input", "trainable", "optimizer_state"};
constexpr std::array<std::string_view, 6> kComparisonNames = {"EQ", "NE", "LT", "LE", "GT", "GE"};
constexpr std::array<std::string_view, 4> kReduceNames = {"add", "max", "min", "multiply"};

}  // namespace

std::string_view opKindName(OpKind k) { return kOpKindNames[static_cast<size_t>(k)]; }
std::optional<OpKind> parseOpKind(std::string_view name) { return parseByName<OpKind>(kOpKindNames, name); }

bool isUnaryElementwise(OpKind k) { return k >= OpKind::Negate && k <= OpKind::Convert; }
bool isBinaryElementwise(OpKind k) { return k >= OpKind::Add && k <= OpKind::Or; }
bool isElementwise(OpKind k) { return isUnaryElementwise(k) || isBinaryElementwise(k) || k == OpKind::Select; }

bool hasDeclaredType(OpKind k) {
    switch (k) {
        case OpKind::Parameter:
        case OpKind::Constant:
        case OpKind::Iota:
        case OpKind::Broadcast:
        case OpKind::Reshape:
        case OpKind::Convert:
        case OpKind::CustomCall:
            return true;
        default:
            return false;
    }
}

std::string_view phaseName(Phase p) { return kPhaseNames[static_cast<size_t>(p)]; }
std::optional<Phase> parsePhase(std::string_view name) { return parseByName<Phase>(kPhaseNames, name); }

std::string_view paramRoleName(ParamRole r) { return kRoleNames[static_cast<size_t>(r)]; }
std::optional<ParamRole> parseParamRole(std::string_view name) { return parseByName<ParamRole>(kRoleNames, name); }

std::string_view comparisonName(ComparisonDirection c) { return kComparisonNames[static_cast<size_t>(c)]; }
std::optional<ComparisonDirection> parseComparison(std::string_view name) {
    return parseByName<ComparisonDirection>(kComparisonNames, name);
}

std::string_view reduceKindName(ReduceKind r) { return kReduceNames[static_cast<size_t>(r)]; }
std::optional<ReduceKind> parseReduceKind(std::string_view name) {
    return parseByName<ReduceKind>(kReduceNames, name);
}

}  // namespace cfp
