#include "export/export_internal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace cfp::exporting {

// ---------------------------------------------------------------------------------------------
// Text helpers (locale-independent: a Qt application may have called setlocale()).

std::string fixedNumber(double v, int precision) {
    if (!std::isfinite(v)) return "n/a";
    char buf[512];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, precision);
    if (r.ec != std::errc{}) return "n/a";
    return std::string(buf, r.ptr);
}

std::string gib(int64_t bytes) {
    return fixedNumber(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8SequenceLength(std::string_view s, size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (b0 < 0x80) return 1;
    if ((b0 & 0xE0) == 0xC0) { n = 2; cp = b0 & 0x1F; }
    else if ((b0 & 0xF0) == 0xE0) { n = 3; cp = b0 & 0x0F; }
    else if ((b0 & 0xF8) == 0xF0) { n = 4; cp = b0 & 0x07; }
    else return 0;
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values above U+10FFFF are not valid UTF-8.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// Body of a Python string literal (no quotes): backslash escapes for quotes, backslashes and
// control characters; invalid UTF-8 becomes U+FFFD so the module always decodes.
std::string pyEscape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const size_t n = utf8SequenceLength(s, i);
            if (n == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '"': out += "\\\""; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    static constexpr char hex[] = "0123456789abcdef";
                    out += "\\x";
                    out += hex[c >> 4];
                    out += hex[c & 0xF];
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out;
}

std::string pyStr(std::string_view s) { return "\"" + pyEscape(s) + "\""; }

// Python tuple literal of already-rendered items: "()", "(a,)", "(a, b)".
std::string pyTuple(const std::vector<std::string>& items) {
    if (items.empty()) return "()";
    std::string out = "(";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += items[i];
    }
    if (items.size() == 1) out += ",";
    return out + ")";
}

std::string joinAxes(const std::vector<std::string>& axes) {
    if (axes.size() == 1) return axes.front();
    std::string out = "{";
    for (size_t i = 0; i < axes.size(); ++i) {
        if (i) out += ",";
        out += axes[i];
    }
    return out + "}";
}

// ---------------------------------------------------------------------------------------------
// Plan lookups.



Status indexTensors(Context& ctx) {
    ctx.byOp.assign(static_cast<size_t>(ctx.graph.size()), nullptr);
    for (size_t i = 0; i < ctx.plan.tensors.size(); ++i) {
        const TensorPlan& t = ctx.plan.tensors[i];
        const std::string where = "/tensors/" + std::to_string(i);
        if (t.op < 0 || t.op >= ctx.graph.size())
            return makeError("export.bad_plan",
                             "plan entry names op " + std::to_string(t.op) + " but the graph has " +
                                 std::to_string(ctx.graph.size()) + " ops",
                             where);
        if (ctx.byOp[static_cast<size_t>(t.op)])
            return makeError("export.bad_plan",
                             "plan has two entries for op " + ctx.graph.op(t.op).name, where);
        ctx.byOp[static_cast<size_t>(t.op)] = &t;
    }
    return {};
}

namespace {

// `name` is `<stack>[<row>]` (a layer of a scan's stacked weights, import/row_stacks.h): the row.
std::optional<std::pair<std::string, int64_t>> stackRow(const std::string& name) {
    if (name.size() < 4 || name.back() != ']') return std::nullopt;
    const size_t open = name.rfind('[');
    if (open == std::string::npos || open == 0 || open + 2 > name.size() - 1) return std::nullopt;
    int64_t row = 0;
    const char* first = name.data() + open + 1;
    const char* last = name.data() + name.size() - 1;
    auto [ptr, ec] = std::from_chars(first, last, row);
    if (ec != std::errc() || ptr != last || row < 0) return std::nullopt;
    return std::make_pair(name.substr(0, open), row);
}

// Folds the layers of each stack (rows 0 … L−1 of one type, each [1, …]) into one entry of the
// stacked shape, laid out as most of its layers are; a stack whose layers differ is noted.
void foldStacks(Context& ctx) {
    std::map<std::string, std::vector<size_t>> rows;  // stack → entries, by row
    for (size_t i = 0; i < ctx.params.size(); ++i)
        if (auto r = stackRow(ctx.params[i].op->name); r && r->second < static_cast<int64_t>(ctx.params.size())) {
            auto& v = rows[r->first];
            if (v.size() <= static_cast<size_t>(r->second)) v.resize(static_cast<size_t>(r->second) + 1, ctx.params.size());
            v[static_cast<size_t>(r->second)] = i;
        }
    std::vector<char> drop(ctx.params.size(), 0);
    for (const auto& [stack, entries] : rows) {
        const OpId same = ctx.graph.find(stack);
        if (entries.size() < 2 || (same != kNoOp && ctx.graph.op(same).kind == OpKind::Parameter)) continue;
        bool whole = true;
        for (size_t e : entries)
            whole = whole && e < ctx.params.size() && ctx.params[e].op->type == ctx.params[entries[0]].op->type &&
                    !ctx.params[e].op->type.dims.empty() && ctx.params[e].op->type.dims[0] == 1;
        if (!whole) continue;
        // The layout most layers have (the first of those on a tie).
        std::vector<std::pair<const TensorSharding*, int64_t>> layouts;
        std::vector<int64_t> layerLayout;
        for (size_t e : entries) {
            const TensorSharding* s = ctx.params[e].sharding;
            auto it = std::find_if(layouts.begin(), layouts.end(), [&](const auto& l) { return l.first->dims() == s->dims(); });
            if (it == layouts.end()) {
                layouts.push_back({s, 0});
                it = layouts.end() - 1;
            }
            ++it->second;
            layerLayout.push_back(it - layouts.begin());
        }
        const auto most = std::max_element(layouts.begin(), layouts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        ParamEntry& first = ctx.params[entries[0]];
        Op named = *first.op;
        named.name = stack;
        first.path = parameterPath(named);
        first.sharding = most->first;
        first.dims[0] = static_cast<int64_t>(entries.size());
        first.stackedRows = static_cast<int64_t>(entries.size());
        for (size_t k = 1; k < entries.size(); ++k) drop[entries[k]] = 1;
        if (layouts.size() > 1) {
            std::string differ;
            int64_t count = 0;
            for (size_t k = 0; k < layerLayout.size(); ++k)
                if (layerLayout[k] != most - layouts.begin()) {
                    differ += (differ.empty() ? "" : ", ") + std::to_string(k);
                    ++count;
                }
            std::string layout;  // per dim: its mesh axes, or None
            for (const auto& axes : most->first->dims()) {
                if (!layout.empty()) layout += ", ";
                layout += axes.empty() ? std::string("None") : axes.size() == 1 ? axes[0] : "(" + joinAxes(axes).substr(1, joinAxes(axes).size() - 2) + ")";
            }
            ctx.stackNotes.push_back("stacked parameter " + first.path + ": the plan lays out " + std::to_string(count) + " of its " +
                                     std::to_string(entries.size()) + " layers (" + (count == 1 ? "layer " : "layers ") + differ + ") unlike the others; a scan runs one "
                                     "layout for the whole stack, so the export gives it the most common one (" + layout +
                                     "), and the plan's step time assumes each layer's own");
        }
    }
    std::vector<ParamEntry> kept;
    for (size_t i = 0; i < ctx.params.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(ctx.params[i]));
    ctx.params = std::move(kept);
}

}  // namespace

Status collectParams(Context& ctx) {
    std::set<std::string> seen;
    for (const Op& op : ctx.graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Trainable) continue;
        const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
        if (!t)
            return makeError("export.bad_plan", "plan has no sharding for parameter " + op.name, op.name);
        if (t->result.isPartial())
            return makeError("export.bad_plan",
                             "parameter " + op.name + " is stored as a pending partial sum (" +
                                 t->result.toString() + ")",
                             op.name);
        if (Status s = validateSharding(t->result, ctx.plan.mesh, op.type); !s)
            return makeError("export.bad_plan",
                             "sharding " + t->result.toString() + " of parameter " + op.name +
                                 " does not fit mesh " + ctx.plan.mesh.toString() + ": " + s.error().message,
                             op.name);
        ctx.params.push_back(ParamEntry{&op, parameterPath(op), &t->result, op.type.dims, false, {}});
    }
    foldStacks(ctx);
    for (const ParamEntry& e : ctx.params)
        if (!seen.insert(e.path).second) return makeError("export.bad_plan", "two parameters share the path " + e.path, e.op->name);
    return {};
}

Result<Context> makeContext(const Graph& graph, const Plan& plan) {
    Context ctx{graph, plan, {}, {}, {}};
    CFP_TRY(indexTensors(ctx));
    CFP_TRY(collectParams(ctx));
    ctx.users = graph.users();
    return ctx;
}

// A 2-D parameter used as the right operand of a forward dot that contracts its first dim:
// y[..., out] = x[..., in] · W[in, out]. PyTorch's nn.Linear stores such a weight as [out, in].
bool isLinearWeight(const Context& ctx, const Op& param) {
    if (param.type.dims.size() != 2) return false;
    for (OpId u : ctx.users[static_cast<size_t>(param.id)]) {
        const Op& d = ctx.graph.op(u);
        if (d.kind != OpKind::Dot || d.phase != Phase::Forward || d.operands.size() != 2) continue;
        if (d.operands[1] != param.id || d.operands[0] == param.id) continue;
        return d.attrs.dot.rhsBatch.empty() && d.attrs.dot.rhsContracting == std::vector<int64_t>{0};
    }
    return false;
}

bool storedTransposed(const Context& ctx, const ParamEntry& p) { return !p.conv1d && isLinearWeight(ctx, *p.op); }

// The axes of `axes` whose mesh size is above 1 (an axis of size 1 splits nothing).
std::vector<std::string> effectiveAxes(const std::vector<std::string>& axes, const Mesh& mesh) {
    std::vector<std::string> out;
    for (const auto& a : axes)
        if (mesh.axisSize(a).value_or(1) > 1) out.push_back(a);
    return out;
}

std::vector<std::vector<std::string>> effectiveDims(const TensorSharding& s, const Mesh& mesh) {
    std::vector<std::vector<std::string>> out;
    for (const auto& d : s.dims()) out.push_back(effectiveAxes(d, mesh));
    return out;
}

std::string headerText(const Plan& plan, std::string_view title) {
    std::string h;
    h += title;
    h += "\n\n";
    h += "Model:     " + (plan.model.empty() ? std::string("(unnamed)") : plan.model);
    if (!plan.modelSource.empty()) h += " (" + plan.modelSource + ")";
    if (plan.build) h += ", batch " + std::to_string(plan.build->batch) + ", sequence " + std::to_string(plan.build->seq);
    h += "\n";
    std::string hw = plan.hardwareName.empty() ? plan.hardware : plan.hardwareName;
    if (!plan.hardwareName.empty() && !plan.hardware.empty() && plan.hardware != plan.hardwareName)
        hw += " (" + plan.hardware + ")";
    if (hw.empty()) hw = "(unspecified)";
    h += "Hardware:  " + hw + ", " + std::to_string(plan.nodes) + " node(s) x " +
         std::to_string(plan.gpusPerNode) + " GPUs\n";
    h += "Mesh:      " + plan.mesh.toString() + ", " + std::to_string(plan.mesh.deviceCount()) + " devices\n";
    h += "Predicted step time: " + fixedNumber(plan.stepSeconds() * 1e3, 3) + " ms" +
         (plan.simulated.seconds > 0 ? std::string(" (simulated: ") + overlapText(plan.policy) + ")" : std::string()) + "; " +
         fixedNumber(plan.predictedStepSeconds * 1e3, 3) + " ms (search objective), " + fixedNumber(plan.evaluatorStepSeconds * 1e3, 3) +
         " ms (evaluator)\n";
    h += "Memory per device: " + gib(plan.memory.total());
    if (plan.memoryLimitBytes > 0) h += " of " + gib(plan.memoryLimitBytes);
    h += "\n";
    return h;
}

// pyEscape turns newlines into "\n"; docstrings keep real line breaks instead.
std::string pyDocstringLines(const std::string& text) {
    std::string out = "\"\"\"";
    size_t start = 0;
    while (start <= text.size()) {
        const size_t nl = text.find('\n', start);
        const std::string_view line =
            std::string_view(text).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        out += pyEscape(line);
        if (nl == std::string::npos) break;
        out += "\n";
        start = nl + 1;
    }
    return out + "\"\"\"\n";
}

// "{dp=2, tp=4}": the mesh without link classes.
std::string plainMeshText(const Mesh& mesh) {
    std::string out = "{";
    for (size_t i = 0; i < mesh.axes().size(); ++i)
        out += (i ? ", " : "") + mesh.axes()[i].name + "=" + std::to_string(mesh.axes()[i].size);
    return out + "}";
}

std::string meshShapeTuple(const Mesh& mesh) {
    std::vector<std::string> items;
    for (const auto& a : mesh.axes()) items.push_back(std::to_string(a.size));
    return pyTuple(items);
}

std::string meshNamesTuple(const Mesh& mesh) {
    std::vector<std::string> items;
    for (const auto& a : mesh.axes()) items.push_back(pyStr(a.name));
    return pyTuple(items);
}

}  // namespace cfp::exporting
