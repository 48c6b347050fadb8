#include "sharding/hlo_sharding.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace cfp {

namespace {

Error syntaxError(std::string_view text, const std::string& what) {
    return makeError("sharding.hlo_syntax", "'" + std::string(text) + "': " + what);
}

// A cursor over the text, spaces skipped before every token.
struct Cursor {
    std::string_view s;
    size_t at = 0;

    void space() {
        while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
    }
    bool done() {
        space();
        return at >= s.size();
    }
    bool peek(char c) {
        space();
        return at < s.size() && s[at] == c;
    }
    bool eat(std::string_view word) {
        space();
        if (s.substr(at, word.size()) != word) return false;
        at += word.size();
        return true;
    }
    bool integer(int64_t& out) {
        space();
        const size_t start = at;
        int64_t v = 0;
        while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) {
            if (v > (int64_t{1} << 40)) return false;  // far beyond any device id or grid size
            v = v * 10 + (s[at] - '0');
            ++at;
        }
        out = v;
        return at > start;
    }
    // "[a,b,…]" (empty allowed).
    bool list(std::vector<int64_t>& out, char open = '[', char close = ']') {
        out.clear();
        if (!eat(std::string_view(&open, 1))) return false;
        if (eat(std::string_view(&close, 1))) return true;
        while (true) {
            int64_t v = 0;
            if (!integer(v)) return false;
            out.push_back(v);
            if (eat(std::string_view(&close, 1))) return true;
            if (!eat(",")) return false;
        }
    }
    // Skips one attribute: a word, optionally `=` and a value balanced over ()[]{} and strings.
    bool skipAttribute() {
        space();
        const size_t start = at;
        int depth = 0;
        bool quoted = false;
        while (at < s.size()) {
            const char c = s[at];
            if (quoted) {
                if (c == '\\') ++at;
                else if (c == '"') quoted = false;
            } else if (c == '"') {
                quoted = true;
            } else if (c == '(' || c == '[' || c == '{') {
                ++depth;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) break;  // the sharding's own closing brace
                --depth;
            } else if (depth == 0 && (std::isspace(static_cast<unsigned char>(c)) || c == ',')) {
                break;
            }
            ++at;
        }
        if (at < s.size() && s[at] == ',') ++at;
        return at > start && depth == 0 && !quoted;
    }
};

Result<int64_t> product(std::string_view text, const std::vector<int64_t>& dims) {
    int64_t p = 1;
    for (int64_t d : dims) {
        if (d <= 0) return syntaxError(text, "sizes must be positive");
        if (p > kMaxHloShardingDevices / d)
            return makeError("sharding.hlo_unsupported", "'" + std::string(text) + "': more than 2^20 devices");
        p *= d;
    }
    return p;
}

// `<=[dims]T(perm)` after the grid: iota 0..n-1 reshaped to dims, transposed by perm, flattened.
Result<std::vector<int64_t>> iotaList(std::string_view text, Cursor& c) {
    std::vector<int64_t> dims, perm;
    if (!c.list(dims)) return syntaxError(text, "expected <=[d0,…] after the grid");
    if (c.eat("T")) {
        if (!c.list(perm, '(', ')')) return syntaxError(text, "expected T(p0,…)");
    } else {
        perm.resize(dims.size());
        std::iota(perm.begin(), perm.end(), int64_t{0});
    }
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != static_cast<int64_t>(k) || perm.size() != dims.size())
            return syntaxError(text, "T(…) is not a permutation of the iota's dims");
    auto n = product(text, dims);
    if (!n) return n.error();
    const size_t r = dims.size();
    std::vector<int64_t> stride(r, 1);
    for (size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * dims[k];
    std::vector<int64_t> out(static_cast<size_t>(*n));
    std::vector<int64_t> idx(r, 0);  // position over the transposed dims, row-major
    for (int64_t pos = 0; pos < *n; ++pos) {
        int64_t value = 0;
        for (size_t k = 0; k < r; ++k) value += idx[k] * stride[static_cast<size_t>(perm[k])];
        out[static_cast<size_t>(pos)] = value;
        for (size_t k = r; k-- > 0;) {
            if (++idx[k] < dims[static_cast<size_t>(perm[k])]) break;
            idx[k] = 0;
        }
    }
    return out;
}

// A device list after the grid: explicit ids or an iota; `count` entries, each id once in 0..count-1.
Result<std::vector<int64_t>> deviceList(std::string_view text, Cursor& c, int64_t count) {
    std::vector<int64_t> devices;
    if (c.eat("<=")) {
        auto l = iotaList(text, c);
        if (!l) return l.error();
        devices = std::move(*l);
    } else {
        int64_t v = 0;
        while (static_cast<int64_t>(devices.size()) < count && c.integer(v)) {
            devices.push_back(v);
            if (static_cast<int64_t>(devices.size()) < count && !c.eat(",")) break;
        }
    }
    if (static_cast<int64_t>(devices.size()) != count)
        return syntaxError(text, "the grid has " + std::to_string(count) + " tiles but the device list " +
                                     std::to_string(devices.size()) + " entries");
    std::vector<char> seen(static_cast<size_t>(count), 0);
    for (int64_t d : devices) {
        if (d < 0 || d >= count || seen[static_cast<size_t>(d)]++)
            return syntaxError(text, "the device list is not a permutation of 0.." + std::to_string(count - 1));
    }
    return devices;
}

std::string joinInts(const std::vector<int64_t>& v) {
    std::string out;
    for (size_t k = 0; k < v.size(); ++k) out += (k ? "," : "") + std::to_string(v[k]);
    return out;
}

Error mismatch(const std::string& what) { return makeError("sharding.mesh_mismatch", what); }

// The device at each position of a tile grid whose axes, major to minor, are the mesh axes
// `tileOrder` (indices into mesh.axes()), positions row-major (the last tile axis fastest), devices
// numbered row-major over the mesh (mesh.h). The writer and the matcher below share it.
std::vector<int64_t> gridDevices(const Mesh& mesh, const std::vector<size_t>& tileOrder) {
    const auto& axes = mesh.axes();
    std::vector<int64_t> stride(axes.size(), 1);
    for (size_t i = axes.size(); i-- > 1;) stride[i - 1] = stride[i] * axes[i].size;
    int64_t tiles = 1;
    for (size_t i : tileOrder) tiles *= axes[i].size;
    std::vector<int64_t> out(static_cast<size_t>(tiles));
    for (int64_t n = 0; n < tiles; ++n) {
        int64_t rest = n, device = 0;
        for (size_t k = tileOrder.size(); k-- > 0;) {
            const size_t a = tileOrder[k];
            device += (rest % axes[a].size) * stride[a];
            rest /= axes[a].size;
        }
        out[static_cast<size_t>(n)] = device;
    }
    return out;
}

}  // namespace

int64_t HloSharding::tensorRank() const {
    if (kind != Kind::Tiled) return -1;
    return static_cast<int64_t>(tileDims.size()) - (replicateLast ? 1 : 0);
}

std::string HloSharding::toString() const {
    switch (kind) {
        case Kind::Replicated: return "{replicated}";
        case Kind::Manual: return "{manual}";
        case Kind::Maximal: return "{maximal device=" + std::to_string(devices.empty() ? 0 : devices[0]) + "}";
        case Kind::Tiled: break;
    }
    return "{devices=[" + joinInts(tileDims) + "]" + joinInts(devices) + (replicateLast ? " last_tile_dim_replicate}" : "}");
}

Result<HloSharding> parseHloSharding(std::string_view text) {
    Cursor c{text};
    if (!c.eat("{")) return syntaxError(text, "a sharding starts with '{'");
    HloSharding out;
    if (c.peek('{')) return makeError("sharding.hlo_unsupported", "'" + std::string(text) + "': a tuple sharding");
    if (c.eat("replicated")) {
        out.kind = HloSharding::Kind::Replicated;
    } else if (c.eat("manual")) {
        out.kind = HloSharding::Kind::Manual;
    } else if (c.eat("maximal")) {
        int64_t d = 0;
        if (!c.eat("device") || !c.eat("=") || !c.integer(d)) return syntaxError(text, "expected maximal device=N");
        out.kind = HloSharding::Kind::Maximal;
        out.devices = {d};
    } else if (c.eat("devices")) {
        out.kind = HloSharding::Kind::Tiled;
        if (!c.eat("=") || !c.list(out.tileDims) || out.tileDims.empty()) return syntaxError(text, "expected devices=[t0,…]");
        auto count = product(text, out.tileDims);
        if (!count) return count.error();
        auto devices = deviceList(text, c, *count);
        if (!devices) return devices.error();
        out.devices = std::move(*devices);
    } else {
        return makeError("sharding.hlo_unsupported", "'" + std::string(text) + "': not a replicated, manual, maximal or tiled sharding");
    }
    // Attributes up to the closing brace.
    while (!c.peek('}')) {
        if (c.done()) return syntaxError(text, "missing '}'");
        if (c.eat("last_tile_dim_replicate")) {
            out.replicateLast = true;
        } else if (c.eat("last_tile_dims")) {
            // Subgroups: only a replicating one is understood (a manual subgroup is a partially
            // manual region, whose other axes the partitioner still chooses).
            if (!c.eat("=") || !c.eat("{")) return syntaxError(text, "expected last_tile_dims={…}");
            int kinds = 0;
            while (!c.eat("}")) {
                if (c.eat("replicated")) {
                    ++kinds;
                } else {
                    return makeError("sharding.hlo_unsupported",
                                     "'" + std::string(text) + "': a subgroup other than replicated (a partially manual sharding)");
                }
                c.eat(",");
                if (c.done()) return syntaxError(text, "missing '}'");
            }
            if (kinds != 1) return syntaxError(text, "last_tile_dims needs one kind");
            out.replicateLast = true;
        } else if (!c.skipAttribute()) {
            return syntaxError(text, "unbalanced attribute");
        }
    }
    c.eat("}");
    if (!c.done()) return syntaxError(text, "text after the closing '}'");
    if (out.kind == HloSharding::Kind::Tiled && out.replicateLast && out.tileDims.size() < 2)
        return syntaxError(text, "last_tile_dim_replicate needs a grid dim besides the replicating one");
    if (out.kind != HloSharding::Kind::Tiled && out.replicateLast) return syntaxError(text, "last_tile_dim_replicate without devices=[…]");
    return out;
}

Result<ReplicaGroups> parseReplicaGroups(std::string_view text) {
    Cursor c{text};
    ReplicaGroups groups;
    if (c.peek('[')) {
        std::vector<int64_t> shape;
        if (!c.list(shape) || shape.size() != 2) return syntaxError(text, "expected [groups,size]<=[…]");
        auto count = product(text, shape);
        if (!count) return count.error();
        if (!c.eat("<=")) return syntaxError(text, "expected <=[…] after [groups,size]");
        auto list = iotaList(text, c);
        if (!list) return list.error();
        if (static_cast<int64_t>(list->size()) != *count)
            return syntaxError(text, "the iota has " + std::to_string(list->size()) + " devices for " + std::to_string(*count));
        for (int64_t g = 0; g < shape[0]; ++g)
            groups.emplace_back(list->begin() + g * shape[1], list->begin() + (g + 1) * shape[1]);
    } else {
        if (!c.eat("{")) return syntaxError(text, "replica groups start with '{' or '['");
        int64_t total = 0;
        while (!c.eat("}")) {
            std::vector<int64_t> g;
            if (!c.list(g, '{', '}')) return syntaxError(text, "expected {d0,d1,…}");
            total += static_cast<int64_t>(g.size());
            if (total > kMaxHloShardingDevices)
                return makeError("sharding.hlo_unsupported", "'" + std::string(text) + "': more than 2^20 devices");
            groups.push_back(std::move(g));
            c.eat(",");
            if (c.done()) return syntaxError(text, "missing '}'");
        }
    }
    if (!c.done()) return syntaxError(text, "text after the replica groups");
    return groups;
}

std::string replicaGroupsText(const ReplicaGroups& groups) {
    std::string out = "{";
    for (size_t g = 0; g < groups.size(); ++g) out += (g ? ",{" : "{") + joinInts(groups[g]) + "}";
    return out + "}";
}

Result<TensorSharding> shardingOnMesh(const HloSharding& sharding, const Mesh& mesh, int64_t rank) {
    if (sharding.kind == HloSharding::Kind::Replicated) return TensorSharding::replicated(rank);
    if (sharding.kind != HloSharding::Kind::Tiled)
        return makeError("sharding.hlo_unsupported", sharding.toString() + " is neither replicated nor tiled");
    if (sharding.tensorRank() != rank)
        return mismatch("it tiles " + std::to_string(sharding.tensorRank()) + " dims of a rank-" + std::to_string(rank) + " value");
    const int64_t count = static_cast<int64_t>(sharding.devices.size());
    if (count != mesh.deviceCount())
        return mismatch("it spans " + std::to_string(count) + " devices, the mesh " + mesh.toString() + " " +
                        std::to_string(mesh.deviceCount()));
    const auto& axes = mesh.axes();
    std::vector<size_t> order;  // axes that split anything, tried in every order
    for (size_t i = 0; i < axes.size(); ++i)
        if (axes[i].size > 1) order.push_back(i);
    const auto& grid = sharding.tileDims;
    const size_t gridRank = grid.size();
    // Devices of a replicating last dim compared as a set: each tile's sorted list.
    const int64_t inner = sharding.replicateLast ? grid.back() : 1;
    std::vector<int64_t> given = sharding.devices, expected(given.size());
    if (inner > 1)
        for (int64_t t = 0; t < count; t += inner) std::sort(given.begin() + t, given.begin() + t + inner);
    do {
        // Split the axis order into consecutive runs whose sizes multiply to each grid dim.
        std::vector<std::vector<size_t>> dimAxes(gridRank);
        size_t next = 0;
        bool fits = true;
        for (size_t d = 0; d < gridRank && fits; ++d) {
            int64_t p = 1;
            while (p < grid[d] && next < order.size()) {
                p *= axes[order[next]].size;
                dimAxes[d].push_back(order[next++]);
            }
            fits = p == grid[d];
        }
        if (!fits || next != order.size()) continue;
        // The device at each grid position under this assignment (as hloShardingText writes it).
        std::vector<size_t> tileOrder;
        for (const auto& list : dimAxes) tileOrder.insert(tileOrder.end(), list.begin(), list.end());
        expected = gridDevices(mesh, tileOrder);
        if (inner > 1)
            for (int64_t t = 0; t < count; t += inner) std::sort(expected.begin() + t, expected.begin() + t + inner);
        if (expected != given) continue;
        std::vector<TensorSharding::AxisList> dims(static_cast<size_t>(rank));
        for (size_t d = 0; d < static_cast<size_t>(rank); ++d)
            for (size_t a : dimAxes[d]) dims[d].push_back(axes[a].name);
        return TensorSharding::create(std::move(dims));
    } while (std::next_permutation(order.begin(), order.end()));
    std::string grids;
    for (size_t d = 0; d < gridRank; ++d) grids += (d ? " × " : "") + std::to_string(grid[d]);
    return mismatch("no order of the axes of the mesh " + mesh.toString() + " numbers its grid of " + grids +
                    " tiles the same way");
}

Result<std::vector<std::string>> groupAxesOnMesh(const ReplicaGroups& groups, const Mesh& mesh) {
    const auto& axes = mesh.axes();
    const int64_t n = mesh.deviceCount();
    std::vector<std::string> all;
    for (const MeshAxis& a : axes)
        if (a.size > 1) all.push_back(a.name);
    if (groups.empty()) return all;  // every device in one group
    const std::string text = replicaGroupsText(groups);
    std::vector<char> seen(static_cast<size_t>(n), 0);
    int64_t total = 0;
    for (const auto& g : groups) {
        if (g.empty()) return mismatch("replica groups " + text + " hold an empty group");
        for (int64_t d : g) {
            if (d < 0 || d >= n || seen[static_cast<size_t>(d)]++)
                return mismatch("replica groups " + text + " are not a partition of the " + std::to_string(n) + " devices of the mesh " +
                                mesh.toString());
            ++total;
        }
    }
    if (total != n)
        return mismatch("replica groups " + text + " cover " + std::to_string(total) + " devices, the mesh " + mesh.toString() + " " +
                        std::to_string(n));
    // The axes along which the first group varies; every group must be the orbit of its first
    // member along exactly those axes.
    std::vector<char> varies(axes.size(), 0);
    auto first = mesh.coordinates(groups[0][0]);
    if (!first) return first.error();
    for (int64_t d : groups[0]) {
        auto c = mesh.coordinates(d);
        if (!c) return c.error();
        for (size_t a = 0; a < axes.size(); ++a) varies[a] = varies[a] || (*c)[a] != (*first)[a];
    }
    std::vector<std::string> out;
    int64_t size = 1;
    for (size_t a = 0; a < axes.size(); ++a)
        if (varies[a]) {
            out.push_back(axes[a].name);
            size *= axes[a].size;
        }
    for (const auto& g : groups) {
        bool ok = static_cast<int64_t>(g.size()) == size;
        auto base = mesh.coordinates(g[0]);
        if (!base) return base.error();
        for (size_t k = 0; k < g.size() && ok; ++k) {
            auto c = mesh.coordinates(g[k]);
            if (!c) return c.error();
            for (size_t a = 0; a < axes.size(); ++a) ok = ok && (varies[a] || (*c)[a] == (*base)[a]);
        }
        if (!ok) return mismatch("replica groups " + text + " are not the groups of any set of axes of the mesh " + mesh.toString());
    }
    return out;
}

Result<std::string> hloShardingText(const TensorSharding& sharding, const Mesh& mesh) {
    if (sharding.isPartial())
        return makeError("export.bad_plan",
                         "HloSharding cannot express a pending partial sum (" + sharding.toString() + ")");
    const auto& axes = mesh.axes();
    std::vector<size_t> tileOrder;     // mesh axis index per tile position, major to minor
    std::vector<int64_t> tileDims;
    std::vector<bool> used(axes.size(), false);
    bool anySplit = false;
    for (const auto& dimAxes : sharding.dims()) {
        int64_t product = 1;
        for (const auto& a : dimAxes) {
            const auto idx = mesh.axisIndex(a);
            if (!idx) return makeError("export.bad_plan", "mesh " + mesh.toString() + " has no axis '" + a + "'");
            const auto i = static_cast<size_t>(*idx);
            used[i] = true;
            tileOrder.push_back(i);
            product *= axes[i].size;
            anySplit = anySplit || axes[i].size > 1;
        }
        tileDims.push_back(product);
    }
    if (!anySplit) return std::string("{replicated}");
    int64_t replicated = 1;
    for (size_t i = 0; i < axes.size(); ++i)
        if (!used[i] && axes[i].size > 1) {
            tileOrder.push_back(i);
            replicated *= axes[i].size;
        }
    if (replicated > 1) tileDims.push_back(replicated);

    std::string out = "{devices=[";
    for (size_t i = 0; i < tileDims.size(); ++i) out += (i ? "," : "") + std::to_string(tileDims[i]);
    out += "]";
    const std::vector<int64_t> devices = gridDevices(mesh, tileOrder);
    for (size_t n = 0; n < devices.size(); ++n) out += (n ? "," : "") + std::to_string(devices[n]);
    if (replicated > 1) out += " last_tile_dim_replicate";
    return out + "}";
}

}  // namespace cfp
