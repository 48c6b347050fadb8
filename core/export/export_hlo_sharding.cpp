// The XLA HloSharding export: one line per trainable parameter (docs/exporters.md).

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

Result<std::string> exportHloSharding(const Context& ctx) {
    std::string out = "# CFP Explorer plan: XLA HloSharding of every trainable parameter; model " +
                      ctx.plan.model + ", mesh " + ctx.plan.mesh.toString() + "\n";
    // Keep the header one line whatever the model name holds.
    std::replace(out.begin(), out.end() - 1, '\n', ' ');
    std::replace(out.begin(), out.end() - 1, '\r', ' ');
    for (const auto& p : ctx.params) {
        auto text = hloShardingText(*p.sharding, ctx.plan.mesh);
        if (!text) return text.error().withContext(p.op->name);
        out += p.path + " " + *text + "\n";
    }
    return out;
}

}  // namespace cfp::exporting
