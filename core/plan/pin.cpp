#include "plan/pin.h"

#include <charconv>

namespace cfp {

namespace {

Error badPin(std::string_view text, const std::string& why) { return makeError("plan.bad_pin", "pin '" + std::string(text) + "': " + why); }

// A non-negative decimal number filling the whole text.
std::optional<int32_t> index(std::string_view text) {
    int32_t v = 0;
    if (text.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
    return v;
}

}  // namespace

std::string Pin::target() const {
    switch (scope) {
    case Scope::Segment: return std::to_string(index);
    case Scope::SegmentType: return "T" + std::to_string(index);
    case Scope::Block: return "b" + std::to_string(index);
    }
    return {};
}

std::string Pin::toString() const {
    std::string out = target() + "=";
    auto entry = [](const std::optional<std::string>& e) { return e ? *e : std::string("*"); };
    if (scope == Scope::Block) return out + (strategies.empty() ? std::string("*") : entry(strategies.front()));
    bool commas = false;
    for (const auto& e : strategies) commas = commas || (e && e->find(',') != std::string::npos);
    const char sep = commas ? ';' : ',';
    for (size_t k = 0; k < strategies.size(); ++k) out += (k ? std::string(1, sep) : std::string()) + entry(strategies[k]);
    if (commas && strategies.size() == 1) out += ';';  // marks ';' as the separator
    return out;
}

Result<Pin> parsePin(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        return badPin(text, "expected SEGMENT=COMBO or bN=STRATEGY");
    std::string_view lhs = text.substr(0, eq);
    const std::string_view rhs = text.substr(eq + 1);
    Pin pin;
    if (lhs.rfind("block:", 0) == 0) {
        pin.scope = Pin::Scope::Block;
        lhs.remove_prefix(6);
    } else if (lhs[0] == 'b') {
        pin.scope = Pin::Scope::Block;
        lhs.remove_prefix(1);
    } else if (lhs[0] == 'T' || lhs[0] == 't') {
        pin.scope = Pin::Scope::SegmentType;
        lhs.remove_prefix(1);
    }
    const auto i = index(lhs);
    if (!i) {
        switch (pin.scope) {
        case Pin::Scope::Block: return badPin(text, "no block '" + std::string(text.substr(0, eq)) + "' (blocks are b0, b1, …)");
        case Pin::Scope::SegmentType: return badPin(text, "no segment type '" + std::string(text.substr(0, eq)) + "' (types are T0, T1, …)");
        case Pin::Scope::Segment:
            return badPin(text, "no segment '" + std::string(text.substr(0, eq)) + "' (a segment index, T<k> for a type, or bN for a block)");
        }
    }
    pin.index = *i;
    if (pin.scope == Pin::Scope::Block) {
        // One strategy, taken whole (multi-axis labels contain commas).
        if (rhs == "*") return badPin(text, "a block pin names one strategy");
        pin.strategies.emplace_back(std::string(rhs));
        return pin;
    }
    const char sep = rhs.find(';') != std::string_view::npos ? ';' : ',';
    size_t start = 0;
    while (true) {
        const auto next = rhs.find(sep, start);
        const std::string_view part = rhs.substr(start, next == std::string_view::npos ? std::string_view::npos : next - start);
        if (next == std::string_view::npos && part.empty() && sep == ';' && !pin.strategies.empty()) break;  // one trailing ';'
        if (part.empty()) return badPin(text, "entry " + std::to_string(pin.strategies.size() + 1) + " is empty (use * for a free block)");
        if (part == "*") pin.strategies.emplace_back(std::nullopt);
        else pin.strategies.emplace_back(std::string(part));
        if (next == std::string_view::npos) break;
        start = next + 1;
    }
    return pin;
}

Result<std::vector<Pin>> parsePins(const std::vector<std::string>& texts) {
    std::vector<Pin> pins;
    pins.reserve(texts.size());
    for (const std::string& t : texts) {
        auto p = parsePin(t);
        if (!p) return p.error();
        pins.push_back(std::move(*p));
    }
    return pins;
}

std::vector<std::string> pinTexts(const std::vector<Pin>& pins) {
    std::vector<std::string> out;
    out.reserve(pins.size());
    for (const Pin& p : pins) out.push_back(p.toString());
    return out;
}

MeshChoice MeshChoice::fixed(Mesh mesh) {
    MeshChoice c;
    c.m_mesh = std::move(mesh);
    return c;
}

Result<MeshChoice> MeshChoice::parse(std::string_view text) {
    if (text.empty() || text == "auto") return automatic();
    auto mesh = parseMesh(text);
    if (!mesh) return mesh.error().withContext("mesh");
    return fixed(std::move(*mesh));
}

std::string MeshChoice::toString() const { return isAuto() ? std::string("auto") : meshShapeText(*m_mesh); }

bool MeshChoice::operator==(const MeshChoice& o) const { return toString() == o.toString(); }

std::string meshShapeText(const Mesh& mesh) {
    std::string out;
    for (const MeshAxis& a : mesh.axes()) out += (out.empty() ? "" : ",") + a.name + "=" + std::to_string(a.size);
    return out;
}

}  // namespace cfp
