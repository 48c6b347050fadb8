#include "sharding/mesh.h"

#include <cctype>
#include <set>

#include "util/checked_math.h"

namespace cfp {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    return out;
}

bool allDigits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// Parses a positive axis size. Negative numbers and zero are bad sizes (a person's mistake worth
// naming), anything else that is not a number is a syntax error.
Result<int64_t> parseSize(std::string_view token, std::string_view text) {
    token = trim(token);
    std::string where = std::string(text);
    if (!token.empty() && token.front() == '-' && allDigits(token.substr(1)))
        return makeError("mesh.bad_size", "axis size " + std::string(token) + " is not positive", where);
    if (!allDigits(token))
        return makeError("mesh.syntax", "expected an axis size, got '" + std::string(token) + "'", where);
    int64_t value = 0;
    for (char c : token) {
        auto next = checkedMul(value, 10);
        if (next) next = checkedAdd(*next, c - '0');
        if (!next || *next > kMaxMeshDevices)
            return makeError("mesh.too_large", "axis size " + std::string(token) + " is too large", where);
        value = *next;
    }
    if (value == 0) return makeError("mesh.bad_size", "axis size 0 is not positive", where);
    return value;
}

// One "name=size" entry, optionally followed by "(intra)" or "(inter)".
Result<MeshAxis> parseNamedAxis(std::string_view entry, std::string_view text) {
    std::string where = std::string(text);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos)
        return makeError("mesh.syntax", "expected 'name=size', got '" + std::string(trim(entry)) + "'", where);
    MeshAxis axis;
    axis.name = std::string(trim(entry.substr(0, eq)));
    std::string_view rest = trim(entry.substr(eq + 1));
    size_t paren = rest.find('(');
    if (paren != std::string_view::npos) {
        std::string_view link = trim(rest.substr(paren));
        rest = rest.substr(0, paren);
        if (link == "(intra)") {
            axis.link = LinkClass::IntraNode;
        } else if (link == "(inter)") {
            axis.link = LinkClass::InterNode;
        } else {
            return makeError("mesh.syntax", "expected '(intra)' or '(inter)', got '" + std::string(link) + "'",
                             where);
        }
    }
    auto size = parseSize(rest, text);
    if (!size) return size.error();
    axis.size = *size;
    return axis;
}

}  // namespace

std::string_view linkClassName(LinkClass link) {
    switch (link) {
    case LinkClass::IntraNode: return "intra";
    case LinkClass::InterNode: return "inter";
    }
    return "?";
}

bool isValidAxisName(std::string_view name) {
    if (name.empty()) return false;
    if (!(std::isalpha(static_cast<unsigned char>(name.front())) || name.front() == '_')) return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

std::vector<std::string> defaultAxisNames(int64_t rank) {
    static const char* kShort[] = {"x", "y", "z", "w"};
    std::vector<std::string> names;
    for (int64_t i = 0; i < rank; ++i)
        names.push_back(rank <= 4 ? std::string(kShort[i]) : "a" + std::to_string(i));
    return names;
}

Result<Mesh> Mesh::create(std::vector<MeshAxis> axes) {
    Mesh mesh;
    std::set<std::string> seen;
    int64_t count = 1;
    for (const MeshAxis& axis : axes) {
        if (!isValidAxisName(axis.name))
            return makeError("mesh.bad_name", "axis name '" + axis.name + "' is not an identifier", axis.name);
        if (!seen.insert(axis.name).second)
            return makeError("mesh.duplicate_axis", "axis name '" + axis.name + "' is used twice", axis.name);
        if (axis.size < 1)
            return makeError("mesh.bad_size", "axis size " + std::to_string(axis.size) + " is not positive",
                             axis.name);
        auto next = checkedMul(count, axis.size);
        if (!next || *next > kMaxMeshDevices)
            return makeError("mesh.too_large",
                             "mesh has more than " + std::to_string(kMaxMeshDevices) + " devices", axis.name);
        count = *next;
    }
    mesh.m_axes = std::move(axes);
    mesh.m_deviceCount = count;
    return mesh;
}

std::optional<int64_t> Mesh::axisIndex(std::string_view name) const {
    for (size_t i = 0; i < m_axes.size(); ++i)
        if (m_axes[i].name == name) return static_cast<int64_t>(i);
    return std::nullopt;
}

std::optional<int64_t> Mesh::axisSize(std::string_view name) const {
    const MeshAxis* axis = findAxis(name);
    if (!axis) return std::nullopt;
    return axis->size;
}

const MeshAxis* Mesh::findAxis(std::string_view name) const {
    for (const MeshAxis& axis : m_axes)
        if (axis.name == name) return &axis;
    return nullptr;
}

bool Mesh::hasLinkClasses() const {
    for (const MeshAxis& axis : m_axes)
        if (!axis.link) return false;
    return true;
}

Result<std::vector<int64_t>> Mesh::coordinates(int64_t device) const {
    if (device < 0 || device >= m_deviceCount)
        return makeError("mesh.bad_device",
                         "device " + std::to_string(device) + " is outside a mesh of " +
                             std::to_string(m_deviceCount) + " devices",
                         toString());
    std::vector<int64_t> coords(m_axes.size());
    for (size_t i = m_axes.size(); i-- > 0;) {
        coords[i] = device % m_axes[i].size;
        device /= m_axes[i].size;
    }
    return coords;
}

Result<int64_t> Mesh::deviceAt(const std::vector<int64_t>& coords) const {
    if (coords.size() != m_axes.size())
        return makeError("mesh.bad_device",
                         std::to_string(coords.size()) + " coordinates for a mesh of rank " +
                             std::to_string(m_axes.size()),
                         toString());
    int64_t device = 0;
    for (size_t i = 0; i < m_axes.size(); ++i) {
        if (coords[i] < 0 || coords[i] >= m_axes[i].size)
            return makeError("mesh.bad_device",
                             "coordinate " + std::to_string(coords[i]) + " is outside axis " + m_axes[i].name,
                             toString());
        device = device * m_axes[i].size + coords[i];
    }
    return device;
}

Result<std::vector<int64_t>> Mesh::axisGroup(int64_t device, std::string_view axis) const {
    auto index = axisIndex(axis);
    if (!index)
        return makeError("mesh.unknown_axis", "mesh has no axis '" + std::string(axis) + "'", toString());
    auto coords = coordinates(device);
    if (!coords) return coords.error();
    std::vector<int64_t> group;
    for (int64_t k = 0; k < m_axes[*index].size; ++k) {
        (*coords)[*index] = k;
        auto member = deviceAt(*coords);
        if (!member) return member.error();
        group.push_back(*member);
    }
    return group;
}

std::string Mesh::toString() const {
    std::string out = "{";
    for (size_t i = 0; i < m_axes.size(); ++i) {
        if (i) out += ", ";
        out += m_axes[i].name + "=" + std::to_string(m_axes[i].size);
        if (m_axes[i].link) out += " (" + std::string(linkClassName(*m_axes[i].link)) + ")";
    }
    return out + "}";
}

Result<Mesh> parseMesh(std::string_view text) {
    std::string_view body = trim(text);
    if (body.empty()) return makeError("mesh.syntax", "empty mesh text", std::string(text));
    if (body.front() == '{') {
        if (body.back() != '}')
            return makeError("mesh.syntax", "missing closing '}'", std::string(text));
        body = trim(body.substr(1, body.size() - 2));
        if (body.empty()) return Mesh::create({});  // "{}": no axes, one device
    }
    std::vector<MeshAxis> axes;
    if (body.find('=') != std::string_view::npos) {
        for (std::string_view entry : split(body, ',')) {
            auto axis = parseNamedAxis(entry, text);
            if (!axis) return axis.error();
            axes.push_back(std::move(*axis));
        }
    } else {
        std::vector<std::string_view> sizes = split(body, 'x');
        std::vector<std::string> names = defaultAxisNames(static_cast<int64_t>(sizes.size()));
        for (size_t i = 0; i < sizes.size(); ++i) {
            auto size = parseSize(sizes[i], text);
            if (!size) return size.error();
            axes.push_back(MeshAxis{names[i], *size, std::nullopt});
        }
    }
    auto mesh = Mesh::create(std::move(axes));
    if (!mesh) return mesh.error().withContext(std::string(text));
    return mesh;
}

Status checkDeviceCount(const Mesh& mesh, int64_t deviceCount) {
    if (mesh.deviceCount() != deviceCount)
        return makeError("mesh.device_count",
                         "mesh " + mesh.toString() + " has " + std::to_string(mesh.deviceCount()) +
                             " devices but " + std::to_string(deviceCount) + " are available",
                         mesh.toString());
    return {};
}

Result<Mesh> parseMesh(std::string_view text, int64_t deviceCount) {
    auto mesh = parseMesh(text);
    if (!mesh) return mesh.error();
    CFP_TRY(checkDeviceCount(*mesh, deviceCount));
    return mesh;
}

Result<Mesh> assignLinkClasses(const Mesh& mesh, int64_t gpusPerNode) {
    const int64_t g = gpusPerNode;
    if (g < 1)
        return makeError("mesh.bad_gpus_per_node", "GPUs per node must be positive, got " + std::to_string(g),
                         mesh.toString());
    const int64_t n = mesh.deviceCount();
    if (n > g && n % g != 0)
        return makeError("mesh.partial_node",
                         std::to_string(n) + " devices do not fill nodes of " + std::to_string(g) +
                             " GPUs evenly",
                         mesh.toString());
    std::vector<MeshAxis> axes = mesh.axes();
    int64_t stride = 1;  // product of the sizes of the axes inside the current one
    for (size_t i = axes.size(); i-- > 0;) {
        const int64_t span = stride * axes[i].size;  // fits: ≤ device count
        if (n <= g || g % span == 0) {
            axes[i].link = LinkClass::IntraNode;
        } else if (span % g == 0 && (g % stride == 0 || stride % g == 0)) {
            axes[i].link = LinkClass::InterNode;
        } else {
            return makeError("mesh.node_straddle",
                             "axis " + axes[i].name + " (size " + std::to_string(axes[i].size) + ", stride " +
                                 std::to_string(stride) + ") straddles nodes of " + std::to_string(g) +
                                 " GPUs unevenly",
                             mesh.toString());
        }
        stride = span;
    }
    return Mesh::create(std::move(axes));
}

}  // namespace cfp
