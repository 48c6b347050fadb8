#include "io/strict_json.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace cfp {

namespace {

using Json = nlohmann::json;

// Builds the DOM from SAX events, rejecting an object that repeats a key with the key's JSON
// Pointer, and recording where a syntax error is. nlohmann's callback parser could check keys too,
// but it rescans the parent container at every object end, which is quadratic in the node count.
class DomBuilder : public nlohmann::json_sax<Json> {
public:
    explicit DomBuilder(Json& root) : m_root(root) {}

    bool null() override { return add(Json(nullptr)); }
    bool boolean(bool v) override { return add(Json(v)); }
    bool number_integer(number_integer_t v) override { return add(Json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return add(Json(v)); }
    bool number_float(number_float_t v, const string_t&) override { return add(Json(v)); }
    bool string(string_t& v) override { return add(Json(std::move(v))); }
    bool binary(binary_t& v) override { return add(Json::binary(std::move(v))); }
    bool start_object(std::size_t) override { return open(Json::object()); }
    bool start_array(std::size_t) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& key) override {
        Frame& top = m_stack.back();
        if (top.container->contains(key)) {
            duplicateKey = key;
            duplicatePointer = childPointer(pointer(m_stack.size() - 1), key);
            return false;  // stops the parse
        }
        top.key = std::move(key);
        return true;
    }
    bool parse_error(std::size_t lastRead, const std::string&, const nlohmann::detail::exception& ex) override {
        // nlohmann's `last_token` is not reliable enough to find the token's start (it may hold
        // earlier text or a placeholder like "<end of input>"), so the location is where the
        // parser stopped: the last byte of the offending token, or just past the end of the input.
        syntaxError = true;
        position = lastRead;
        message = ex.what();
        return false;
    }

    std::optional<std::string> duplicateKey;
    std::string duplicatePointer;
    bool syntaxError = false;
    size_t position = 0;  // 1-based index of the last byte read (size + 1 at end of input)
    std::string message;

private:
    struct Frame {
        Json* container;
        std::string key;  // key of the member being read, for objects
    };

    // Places `v` in the innermost open container (or as the root) and returns where it lives.
    Json* place(Json&& v) {
        if (m_stack.empty()) {
            m_root = std::move(v);
            return &m_root;
        }
        Frame& top = m_stack.back();
        if (top.container->is_array()) {
            auto& array = top.container->get_ref<Json::array_t&>();
            array.push_back(std::move(v));
            return &array.back();
        }
        return &top.container->get_ref<Json::object_t&>().emplace(top.key, std::move(v)).first->second;
    }
    bool add(Json&& v) {
        place(std::move(v));
        return true;
    }
    bool open(Json&& container) {
        m_stack.push_back(Frame{place(std::move(container)), {}});
        return true;
    }
    bool close() {
        m_stack.pop_back();
        return true;
    }
    // Pointer of the container in frame `depth` (the element being filled is each array's last).
    std::string pointer(size_t depth) const {
        std::string out;
        for (size_t i = 0; i < depth; ++i) {
            const Json& c = *m_stack[i].container;
            out = c.is_array() ? childPointer(out, c.size() - 1) : childPointer(out, m_stack[i].key);
        }
        return out;
    }

    Json& m_root;
    std::vector<Frame> m_stack;
};

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error …" → "syntax error …"
std::string stripNlohmannPrefix(std::string text) {
    if (auto p = text.find("] "); p != std::string::npos && text.rfind('[', 0) == 0) text.erase(0, p + 2);
    if (text.rfind("parse error", 0) == 0)
        if (auto p = text.find(": "); p != std::string::npos) text.erase(0, p + 2);
    return text;
}

// "line:column" (1-based) of the byte at 1-based `position`, the form nlohmann's sax parser reports.
std::string lineColumn(std::string_view text, size_t position) {
    const size_t offset = std::min(position == 0 ? 0 : position - 1, text.size());
    const std::string_view before = text.substr(0, offset);
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t lastNewline = before.rfind('\n');
    const size_t column = lastNewline == std::string_view::npos ? offset + 1 : offset - lastNewline;
    return std::to_string(line) + ":" + std::to_string(column);
}

}  // namespace

Result<nlohmann::json> StrictJson::parse(std::string_view text) const {
    Json doc;
    DomBuilder builder(doc);
    bool parsed = false;
    try {
        parsed = Json::sax_parse(text.begin(), text.end(), &builder, Json::input_format_t::json, /*strict=*/true,
                                 /*ignore_comments=*/allowComments);
    } catch (const Json::exception& ex) {
        return makeError(std::string(syntaxCode), stripNlohmannPrefix(ex.what()));
    }
    if (builder.duplicateKey)
        return makeError(std::string(duplicateKeyCode), "key '" + *builder.duplicateKey + "' appears twice in one object",
                         std::move(builder.duplicatePointer));
    if (builder.syntaxError)
        return makeError(std::string(syntaxCode), stripNlohmannPrefix(std::move(builder.message)),
                         lineColumn(text, builder.position));
    if (!parsed) return makeError(std::string(syntaxCode), "the JSON text could not be parsed");
    return Result<nlohmann::json>(std::move(doc));
}

Error StrictJson::typeError(const std::string& ptr, std::string_view expected, const nlohmann::json& j) const {
    return makeError(std::string(typeCode), "expected " + std::string(expected) + ", got " + j.type_name(), ptr);
}

Error StrictJson::missingField(const std::string& ptr, std::string_view key) const {
    return makeError(std::string(missingFieldCode), "missing required field '" + std::string(key) + "'",
                     childPointer(ptr, key));
}

Error StrictJson::unknownField(const std::string& ptr, const std::string& key) const {
    return makeError(std::string(unknownFieldCode), "unknown field '" + key + "'", childPointer(ptr, key));
}

Result<const nlohmann::json*> StrictJson::member(const nlohmann::json& obj, const std::string& ptr,
                                                 std::string_view key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return missingField(ptr, key);
    return &*it;
}

Result<std::string> StrictJson::string(const nlohmann::json& j, const std::string& ptr) const {
    if (!j.is_string()) return typeError(ptr, "a string", j);
    return j.get<std::string>();
}

Result<int64_t> StrictJson::int64(const nlohmann::json& j, const std::string& ptr) const {
    if (j.is_number_unsigned()) {
        const auto u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return makeError(std::string(outOfRangeCode), std::to_string(u) + " does not fit a 64-bit signed integer", ptr);
        return static_cast<int64_t>(u);
    }
    if (j.is_number_integer()) return j.get<int64_t>();
    return typeError(ptr, "an integer", j);
}

std::string escapePointerToken(std::string_view token) {
    std::string out;
    for (char c : token) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

std::string childPointer(const std::string& parent, std::string_view key) {
    return parent + "/" + escapePointerToken(key);
}

std::string childPointer(const std::string& parent, size_t index) { return parent + "/" + std::to_string(index); }

const std::string* firstUnknownKey(const nlohmann::json& obj, std::span<const std::string_view> allowed) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) return &it.key();
    return nullptr;
}

}  // namespace cfp
