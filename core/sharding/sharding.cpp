#include "sharding/sharding.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "util/checked_math.h"

namespace cfp {

namespace {

std::string joinAxes(const TensorSharding::AxisList& axes) {
    std::string out = "{";
    for (size_t i = 0; i < axes.size(); ++i) {
        if (i) out += ",";
        out += axes[i];
    }
    return out + "}";
}

// Hand-written recursive-descent parser over the text form; errors name the column.
class ShardingParser {
public:
    explicit ShardingParser(std::string_view text) : m_text(text) {}

    Result<TensorSharding> parse() {
        skipSpace();
        CFP_TRY(expect('['));
        std::vector<TensorSharding::AxisList> dims;
        skipSpace();
        if (!peek(']')) {
            while (true) {
                auto list = parseAxisList();
                if (!list) return list.error();
                dims.push_back(std::move(*list));
                skipSpace();
                if (peek(',')) {
                    ++m_pos;
                    skipSpace();
                    continue;
                }
                break;
            }
        }
        CFP_TRY(expect(']'));
        skipSpace();
        TensorSharding::AxisList partial;
        if (m_pos < m_text.size()) {
            if (m_text.substr(m_pos, 7) != "partial") return error("expected 'partial{…}' or the end");
            m_pos += 7;
            skipSpace();
            auto list = parseAxisList();
            if (!list) return list.error();
            partial = std::move(*list);
            skipSpace();
            if (m_pos != m_text.size()) return error("unexpected text after the sharding");
        }
        auto sharding = TensorSharding::create(std::move(dims), std::move(partial));
        if (!sharding) return sharding.error().withContext(std::string(m_text));
        return sharding;
    }

private:
    Result<TensorSharding::AxisList> parseAxisList() {
        CFP_TRY(expect('{'));
        TensorSharding::AxisList axes;
        skipSpace();
        if (peek('}')) {
            ++m_pos;
            return axes;
        }
        while (true) {
            skipSpace();
            size_t start = m_pos;
            while (m_pos < m_text.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
                ++m_pos;
            if (start == m_pos) return error("expected a mesh axis name");
            axes.emplace_back(m_text.substr(start, m_pos - start));
            skipSpace();
            if (peek(',')) {
                ++m_pos;
                continue;
            }
            CFP_TRY(expect('}'));
            return axes;
        }
    }

    bool peek(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }
    void skipSpace() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
    }
    Status expect(char c) {
        if (!peek(c)) return error(std::string("expected '") + c + "'");
        ++m_pos;
        return {};
    }
    Error error(const std::string& message) const {
        return makeError("sharding.syntax", message + " at column " + std::to_string(m_pos + 1),
                         std::string(m_text));
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

void fnvMix(uint64_t& h, std::string_view bytes) {
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
}

}  // namespace

Result<TensorSharding> TensorSharding::create(std::vector<AxisList> dimAxes, AxisList partialAxes) {
    std::set<std::string, std::less<>> seen;
    auto check = [&](const std::string& axis) -> Status {
        if (!isValidAxisName(axis))
            return makeError("sharding.bad_name", "mesh axis name '" + axis + "' is not an identifier", axis);
        if (!seen.insert(axis).second)
            return makeError("sharding.duplicate_axis", "mesh axis " + axis + " is used more than once", axis);
        return {};
    };
    for (const AxisList& dim : dimAxes)
        for (const std::string& axis : dim) CFP_TRY(check(axis));
    for (const std::string& axis : partialAxes) CFP_TRY(check(axis));
    TensorSharding out;
    out.m_dims = std::move(dimAxes);
    out.m_partial = std::move(partialAxes);
    std::sort(out.m_partial.begin(), out.m_partial.end());
    return out;
}

TensorSharding TensorSharding::replicated(int64_t rank) {
    TensorSharding out;
    out.m_dims.resize(static_cast<size_t>(std::max<int64_t>(rank, 0)));
    return out;
}

AxisUse TensorSharding::use(std::string_view axis) const {
    for (size_t d = 0; d < m_dims.size(); ++d)
        for (size_t k = 0; k < m_dims[d].size(); ++k)
            if (m_dims[d][k] == axis)
                return AxisUse{AxisUse::Kind::Dim, static_cast<int64_t>(d), static_cast<int64_t>(k)};
    if (isPartialOver(axis)) return AxisUse{AxisUse::Kind::Partial, -1, -1};
    return {};
}

bool TensorSharding::isPartialOver(std::string_view axis) const {
    return std::find(m_partial.begin(), m_partial.end(), axis) != m_partial.end();
}

bool TensorSharding::isReplicated() const {
    if (!m_partial.empty()) return false;
    for (const AxisList& dim : m_dims)
        if (!dim.empty()) return false;
    return true;
}

TensorSharding::AxisList TensorSharding::splitAxes() const {
    AxisList out;
    for (const AxisList& dim : m_dims) out.insert(out.end(), dim.begin(), dim.end());
    return out;
}

Result<TensorSharding> TensorSharding::withDimAxes(int64_t dim, AxisList axes) const {
    if (dim < 0 || dim >= rank())
        return makeError("sharding.rank_mismatch",
                         "dimension " + std::to_string(dim) + " is outside rank " + std::to_string(rank()),
                         toString());
    std::vector<AxisList> dims = m_dims;
    dims[static_cast<size_t>(dim)] = std::move(axes);
    return create(std::move(dims), m_partial);
}

Result<TensorSharding> TensorSharding::withPartialAxes(AxisList partialAxes) const {
    return create(m_dims, std::move(partialAxes));
}

std::string TensorSharding::toString() const {
    std::string out = "[";
    for (size_t d = 0; d < m_dims.size(); ++d) {
        if (d) out += ",";
        out += joinAxes(m_dims[d]);
    }
    return out + "] partial" + joinAxes(m_partial);
}

size_t TensorSharding::hash() const {
    uint64_t h = 14695981039346656037ull;
    for (const AxisList& dim : m_dims) {
        for (const std::string& axis : dim) {
            fnvMix(h, axis);
            fnvMix(h, ",");
        }
        fnvMix(h, "|");
    }
    fnvMix(h, "#");
    for (const std::string& axis : m_partial) {
        fnvMix(h, axis);
        fnvMix(h, ",");
    }
    return static_cast<size_t>(h);
}

Result<TensorSharding> parseSharding(std::string_view text) { return ShardingParser(text).parse(); }

Status validateSharding(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type) {
    // The text form names the place of an error; built only then (this runs on every tensor of a plan).
    auto where = [&] { return sharding.toString(); };
    CFP_TRY(validateTensorType(type));
    if (sharding.rank() != type.rank())
        return makeError("sharding.rank_mismatch",
                         "sharding has " + std::to_string(sharding.rank()) + " dimensions but " + type.toString() +
                             " has " + std::to_string(type.rank()),
                         where());
    auto known = [&](const std::string& axis) -> Status {
        if (!mesh.findAxis(axis))
            return makeError("sharding.unknown_axis", "mesh " + mesh.toString() + " has no axis '" + axis + "'",
                             where());
        return {};
    };
    for (const std::string& axis : sharding.partialAxes()) CFP_TRY(known(axis));
    for (int64_t d = 0; d < sharding.rank(); ++d) {
        for (const std::string& axis : sharding.dimAxes(d)) CFP_TRY(known(axis));
        // The product of axis sizes is ≤ the device count ≤ kMaxMeshDevices: no overflow.
        const int64_t factor = splitFactor(sharding, mesh, d);
        const int64_t size = type.dims[static_cast<size_t>(d)];
        if (size % factor != 0)
            return makeError("sharding.uneven",
                             "dimension " + std::to_string(d) + " of " + type.toString() + " (size " +
                                 std::to_string(size) + ") does not split evenly over " +
                                 joinAxes(sharding.dimAxes(d)) + " (" + std::to_string(factor) + " shards)",
                             where());
    }
    return {};
}

int64_t splitFactor(const TensorSharding& sharding, const Mesh& mesh, int64_t dim) {
    int64_t factor = 1;
    for (const std::string& axis : sharding.dimAxes(dim)) factor *= mesh.axisSize(axis).value_or(1);
    return factor;
}

Result<std::vector<int64_t>> localShape(const TensorSharding& sharding, const Mesh& mesh,
                                        const TensorType& type) {
    CFP_TRY(validateSharding(sharding, mesh, type));
    std::vector<int64_t> dims = type.dims;
    for (int64_t d = 0; d < sharding.rank(); ++d) dims[static_cast<size_t>(d)] /= splitFactor(sharding, mesh, d);
    return dims;
}

Result<TensorType> localType(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type) {
    auto dims = localShape(sharding, mesh, type);
    if (!dims) return dims.error();
    return TensorType{type.dtype, std::move(*dims)};
}

Result<int64_t> bytesPerDevice(const TensorSharding& sharding, const Mesh& mesh, const TensorType& type) {
    auto local = localType(sharding, mesh, type);
    if (!local) return local.error();
    return local->byteSize();
}

}  // namespace cfp
