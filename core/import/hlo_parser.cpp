#include "import/hlo_parser.h"

#include <cctype>
#include <charconv>
#include <unordered_set>

namespace cfp::hlo {

std::string Shape::toString() const {
    if (isTuple) {
        std::string out = "(";
        for (size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + elements[i].toString();
        return out + ")";
    }
    std::string out = elementType + "[";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
    return out + "]";
}

const std::string* Instruction::attribute(std::string_view key) const {
    for (const Attribute& a : attributes)
        if (a.key == key) return &a.value;
    return nullptr;
}

std::string locationText(const std::string& sourceName, Location where) {
    std::string pos = std::to_string(where.line) + ":" + std::to_string(where.column);
    return sourceName.empty() ? pos : sourceName + ":" + pos;
}

namespace {

bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '$';
}

class Parser {
public:
    Parser(std::string_view text, const std::string& source, const ParseLimits& limits)
        : m_text(text), m_source(source), m_limits(limits) {}

    Result<Module> run();

private:
    // ---- cursor ----
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek(size_t ahead = 0) const { return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0'; }
    void advance() {
        if (atEnd()) return;
        if (m_text[m_pos] == '\n') {
            ++m_line;
            m_col = 1;
        } else {
            ++m_col;
        }
        ++m_pos;
    }
    Location here() const { return {m_line, m_col}; }
    // Skips whitespace and comments; returns false on an unterminated /* comment.
    bool skipSpace();
    Error error(const std::string& message, std::string code = "hlo.syntax") const {
        return makeError(std::move(code), message, locationText(m_source, here()));
    }
    Error errorAt(Location at, const std::string& message, std::string code) const {
        return makeError(std::move(code), message, locationText(m_source, at));
    }
    std::string describeNext() const {
        if (atEnd()) return "end of input";
        std::string s;
        for (size_t i = m_pos; i < m_text.size() && s.size() < 16 && m_text[i] != '\n'; ++i) s += m_text[i];
        return "'" + s + "'";
    }
    Status expect(char c) {
        if (!skipSpace()) return error("unterminated comment");
        if (peek() != c) return error(std::string("expected '") + c + "', found " + describeNext());
        advance();
        return {};
    }
    bool consume(char c) {
        if (!skipSpace() || peek() != c) return false;
        advance();
        return true;
    }
    bool consumeWord(std::string_view w) {
        if (!skipSpace()) return false;
        if (m_text.substr(m_pos, w.size()) != w) return false;
        if (m_pos + w.size() < m_text.size() && isNameChar(m_text[m_pos + w.size()])) return false;
        for (size_t i = 0; i < w.size(); ++i) advance();
        return true;
    }
    std::string word() {
        std::string out;
        while (!atEnd() && isNameChar(peek())) {
            out += peek();
            advance();
        }
        return out;
    }
    // A name with an optional leading '%'.
    Result<std::string> name(const char* what) {
        if (!skipSpace()) return error("unterminated comment");
        if (peek() == '%') advance();
        std::string n = word();
        if (n.empty()) return error(std::string("expected ") + what + ", found " + describeNext());
        return n;
    }
    Result<int64_t> integer();
    Result<Shape> shape(int depth);
    Result<Shape> arrayShapeAfterType(std::string elementType);
    // Text up to a top-level ',' / newline / closing bracket; balanced, strings kept whole.
    Result<std::string> rawValue();
    // Text inside already-opened parentheses, up to the matching ')', which is consumed.
    Result<std::string> balancedUntilClose();
    Status attributes(std::vector<Attribute>& out);
    Result<Instruction> instruction();
    Result<Computation> computation();
    // The source-location tables a dump may end with (`FileNames`, `FunctionNames`, `FileLocations`,
    // `StackFrames`): rows `N "text"` or `N {…}`, skipped.
    Status stackFrameTable();

    std::string_view m_text;
    const std::string& m_source;
    const ParseLimits& m_limits;
    size_t m_pos = 0;
    int32_t m_line = 1, m_col = 1;
    int64_t m_instructions = 0;
};

bool Parser::skipSpace() {
    while (!atEnd()) {
        const char c = peek();
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            advance();
        } else if (c == '/' && peek(1) == '*') {
            advance();
            advance();
            while (!atEnd() && !(peek() == '*' && peek(1) == '/')) advance();
            if (atEnd()) return false;
            advance();
            advance();
        } else if (c == '/' && peek(1) == '/') {
            while (!atEnd() && peek() != '\n') advance();
        } else {
            break;
        }
    }
    return true;
}

Result<int64_t> Parser::integer() {
    if (!skipSpace()) return error("unterminated comment");
    const size_t start = m_pos;
    if (peek() == '-') advance();
    while (!atEnd() && peek() >= '0' && peek() <= '9') advance();
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(m_text.data() + start, m_text.data() + m_pos, v);
    if (ec == std::errc::result_out_of_range) return error("integer does not fit 64 bits", "hlo.too_large");
    if (ec != std::errc() || ptr != m_text.data() + m_pos) return error("expected an integer, found " + describeNext());
    return v;
}

Result<Shape> Parser::arrayShapeAfterType(std::string elementType) {
    Shape s;
    s.elementType = std::move(elementType);
    CFP_TRY(expect('['));
    if (!consume(']')) {
        while (true) {
            if (static_cast<int32_t>(s.dims.size()) >= m_limits.maxRank)
                return error("shape has more than " + std::to_string(m_limits.maxRank) + " dimensions", "hlo.too_large");
            if (!skipSpace()) return error("unterminated comment");
            if (peek() == '?') {
                advance();
                s.dims.push_back(-1);  // unbounded dynamic dimension: rejected by the importer
            } else {
                if (peek() == '<' && peek(1) == '=') {
                    advance();
                    advance();
                }
                auto d = integer();
                if (!d) return d.error();
                if (*d < 0) return error("negative dimension " + std::to_string(*d));
                s.dims.push_back(*d);
            }
            if (consume(']')) break;
            CFP_TRY(expect(','));
        }
    }
    // Layout: {1,0}, {1,0:T(8,128)(2,1)S(1)}, … — dropped. It follows the dims directly; a '{'
    // after a space is a computation body (`-> f32[] {`).
    if (peek() == '{') {
        int depth = 0;
        do {
            if (atEnd()) return error("unterminated layout");
            if (peek() == '{') ++depth;
            if (peek() == '}') --depth;
            if (depth > m_limits.maxNesting) return error("layout nested too deeply", "hlo.too_deep");
            advance();
        } while (depth > 0);
    }
    return s;
}

Result<Shape> Parser::shape(int depth) {
    if (depth > m_limits.maxNesting) return error("tuple shape nested too deeply", "hlo.too_deep");
    if (!skipSpace()) return error("unterminated comment");
    if (peek() == '(') {
        advance();
        Shape s;
        s.isTuple = true;
        if (consume(')')) return s;
        while (true) {
            auto e = shape(depth + 1);
            if (!e) return e.error();
            s.elements.push_back(std::move(*e));
            if (consume(')')) break;
            CFP_TRY(expect(','));
        }
        return s;
    }
    std::string type = word();
    if (type.empty()) return error("expected a shape, found " + describeNext());
    return arrayShapeAfterType(std::move(type));
}

Result<std::string> Parser::rawValue() {
    if (!skipSpace()) return error("unterminated comment");
    const Location start = here();
    std::string out;
    int depth = 0;
    while (!atEnd()) {
        const char c = peek();
        if (c == '"') {
            out += c;
            advance();
            while (!atEnd() && peek() != '"') {
                if (peek() == '\\') {
                    out += peek();
                    advance();
                    if (atEnd()) break;
                }
                out += peek();
                advance();
            }
            if (atEnd()) return errorAt(start, "unterminated string", "hlo.syntax");
            out += '"';
            advance();
            continue;
        }
        if (depth == 0 && (c == ',' || c == '\n' || c == '}' || c == ')' || c == ']')) break;
        if (c == '{' || c == '(' || c == '[') {
            if (++depth > m_limits.maxNesting) return error("attribute value nested too deeply", "hlo.too_deep");
        } else if (c == '}' || c == ')' || c == ']') {
            --depth;
        }
        out += c;
        advance();
    }
    if (depth != 0) return errorAt(start, "unbalanced brackets in attribute value", "hlo.syntax");
    while (!out.empty() && (out.back() == ' ' || out.back() == '\t' || out.back() == '\r')) out.pop_back();
    if (out.empty()) return errorAt(start, "empty attribute value", "hlo.syntax");
    return out;
}

Result<std::string> Parser::balancedUntilClose() {
    const Location start = here();
    std::string out;
    int depth = 0;
    while (!atEnd()) {
        const char c = peek();
        if (c == ')' && depth == 0) {
            advance();
            return out;
        }
        if (c == '(' || c == '{' || c == '[') {
            if (++depth > m_limits.maxNesting) return error("value nested too deeply", "hlo.too_deep");
        } else if (c == ')' || c == '}' || c == ']') {
            if (--depth < 0) return error("unbalanced brackets");
        }
        out += c;
        advance();
    }
    return errorAt(start, "missing ')'", "hlo.syntax");
}

Status Parser::attributes(std::vector<Attribute>& out) {
    while (consume(',')) {
        if (!skipSpace()) return error("unterminated comment");
        const std::string key = word();
        if (key.empty()) return error("expected an attribute name, found " + describeNext());
        CFP_TRY(expect('='));
        auto value = rawValue();
        if (!value) return value.error();
        out.push_back({key, std::move(*value)});
    }
    return {};
}

Result<Instruction> Parser::instruction() {
    Instruction ins;
    if (!skipSpace()) return error("unterminated comment");
    ins.where = here();
    if (++m_instructions > m_limits.maxInstructions)
        return error("more than " + std::to_string(m_limits.maxInstructions) + " instructions", "hlo.too_large");
    if (consumeWord("ROOT")) ins.isRoot = true;
    auto n = name("an instruction name");
    if (!n) return n.error();
    ins.name = std::move(*n);
    CFP_TRY(expect('='));
    auto s = shape(0);
    if (!s) return s.error();
    ins.shape = std::move(*s);
    if (!skipSpace()) return error("unterminated comment");
    ins.opcode = word();
    if (ins.opcode.empty()) return error("expected an opcode, found " + describeNext());
    CFP_TRY(expect('('));
    if (ins.opcode == "constant" || ins.opcode == "parameter") {
        auto payload = balancedUntilClose();
        if (!payload) return payload.error();
        ins.payload = std::move(*payload);
    } else if (!consume(')')) {
        while (true) {
            if (!skipSpace()) return error("unterminated comment");
            std::string operand;
            if (peek() == '(') {
                auto t = shape(0);  // a tuple-shaped operand's shape
                if (!t) return t.error();
                auto nm = name("an operand name");
                if (!nm) return nm.error();
                operand = std::move(*nm);
            } else if (peek() == '%') {
                advance();
                operand = word();
            } else {
                std::string w = word();
                if (!skipSpace()) return error("unterminated comment");
                if (!w.empty() && peek() == '[') {  // `f32[8]{0} %x`: w was the element type
                    auto t = arrayShapeAfterType(std::move(w));
                    if (!t) return t.error();
                    auto nm = name("an operand name");
                    if (!nm) return nm.error();
                    operand = std::move(*nm);
                } else {
                    operand = std::move(w);
                }
            }
            if (operand.empty()) return error("expected an operand, found " + describeNext());
            ins.operands.push_back(std::move(operand));
            if (consume(')')) break;
            CFP_TRY(expect(','));
        }
    }
    CFP_TRY(attributes(ins.attributes));
    return ins;
}

Result<Computation> Parser::computation() {
    Computation comp;
    if (!skipSpace()) return error("unterminated comment");
    comp.where = here();
    if (consumeWord("ENTRY")) comp.isEntry = true;
    auto n = name("a computation name");
    if (!n) return n.error();
    comp.name = std::move(*n);
    // Optional signature `(a: f32[], b: f32[]) -> f32[]` and computation attributes up to '{'.
    if (consume('(')) {
        auto sig = balancedUntilClose();
        if (!sig) return sig.error();
    }
    if (!skipSpace()) return error("unterminated comment");
    if (peek() == '-' && peek(1) == '>') {
        advance();
        advance();
        auto result = shape(0);
        if (!result) return result.error();
    }
    while (consume(',')) {
        if (!skipSpace()) return error("unterminated comment");
        if (word().empty()) return error("expected a computation attribute, found " + describeNext());
        CFP_TRY(expect('='));
        auto v = rawValue();
        if (!v) return v.error();
    }
    CFP_TRY(expect('{'));
    std::unordered_set<std::string> names;
    while (true) {
        if (!skipSpace()) return error("unterminated comment");
        if (atEnd()) return errorAt(comp.where, "computation '" + comp.name + "' is not closed by '}'", "hlo.syntax");
        if (peek() == '}') {
            advance();
            break;
        }
        auto ins = instruction();
        if (!ins) return ins.error();
        if (!names.insert(ins->name).second)
            return errorAt(ins->where, "instruction name '" + ins->name + "' is used twice in computation '" + comp.name + "'",
                           "hlo.duplicate_name");
        if (ins->isRoot) {
            if (comp.root >= 0)
                return errorAt(ins->where, "computation '" + comp.name + "' has two ROOT instructions", "hlo.syntax");
            comp.root = static_cast<int32_t>(comp.instructions.size());
        }
        comp.instructions.push_back(std::move(*ins));
    }
    if (comp.instructions.empty())
        return errorAt(comp.where, "computation '" + comp.name + "' has no instructions", "hlo.syntax");
    if (comp.root < 0) comp.root = static_cast<int32_t>(comp.instructions.size()) - 1;
    return comp;
}

Status Parser::stackFrameTable() {
    while (true) {
        if (!skipSpace()) return error("unterminated comment");
        if (!std::isdigit(static_cast<unsigned char>(peek()))) return {};
        CFP_TRY(integer());
        if (!skipSpace()) return error("unterminated comment");
        if (peek() != '"' && peek() != '{') return error("expected a string or '{' in a stack-frame table, found " + describeNext());
        auto v = rawValue();
        if (!v) return v.error();
    }
}

Result<Module> Parser::run() {
    if (static_cast<int64_t>(m_text.size()) > m_limits.maxInputBytes)
        return makeError("hlo.too_large", "input is " + std::to_string(m_text.size()) + " bytes, more than the limit of " +
                                              std::to_string(m_limits.maxInputBytes),
                         m_source);
    Module module;
    if (!skipSpace()) return error("unterminated comment");
    if (!consumeWord("HloModule")) return error("expected 'HloModule' at the start of the module", "hlo.no_module");
    auto n = name("a module name");
    if (!n) return n.error();
    module.name = std::move(*n);
    CFP_TRY(attributes(module.attributes));
    std::unordered_set<std::string> names;
    while (true) {
        if (!skipSpace()) return error("unterminated comment");
        if (atEnd()) break;
        if (consumeWord("FileNames") || consumeWord("FunctionNames") || consumeWord("FileLocations") ||
            consumeWord("StackFrames")) {
            CFP_TRY(stackFrameTable());
            continue;
        }
        auto comp = computation();
        if (!comp) return comp.error();
        if (!names.insert(comp->name).second)
            return errorAt(comp->where, "computation name '" + comp->name + "' is used twice", "hlo.duplicate_name");
        if (comp->isEntry) {
            if (module.entry >= 0) return errorAt(comp->where, "the module has two ENTRY computations", "hlo.syntax");
            module.entry = static_cast<int32_t>(module.computations.size());
        }
        module.computations.push_back(std::move(*comp));
    }
    if (module.entry < 0) return makeError("hlo.no_entry", "the module has no ENTRY computation", m_source);
    return module;
}

}  // namespace

Result<Module> parseModule(std::string_view text, const std::string& sourceName, const ParseLimits& limits) {
    return Parser(text, sourceName, limits).run();
}

Result<std::vector<int64_t>> parseIntList(std::string_view value) {
    std::vector<int64_t> out;
    size_t i = 0;
    auto bad = [&] { return makeError("hlo.bad_attribute", "expected a list of integers such as {0,1}, got '" + std::string(value) + "'"); };
    while (i < value.size() && value[i] == ' ') ++i;
    if (i >= value.size() || value[i] != '{') return bad();
    ++i;
    while (true) {
        while (i < value.size() && value[i] == ' ') ++i;
        if (i < value.size() && value[i] == '}') {
            ++i;
            break;
        }
        int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(value.data() + i, value.data() + value.size(), v);
        if (ec != std::errc()) return bad();
        out.push_back(v);
        i = static_cast<size_t>(ptr - value.data());
        while (i < value.size() && value[i] == ' ') ++i;
        if (i < value.size() && value[i] == ',') ++i;
        else if (!(i < value.size() && value[i] == '}')) return bad();
    }
    while (i < value.size() && value[i] == ' ') ++i;
    if (i != value.size()) return bad();
    return out;
}

Result<std::vector<std::array<int64_t, 3>>> parseSliceRanges(std::string_view value) {
    std::vector<std::array<int64_t, 3>> out;
    auto bad = [&] {
        return makeError("hlo.bad_attribute", "expected slice ranges such as {[0:8], [0:16:2]}, got '" + std::string(value) + "'");
    };
    size_t i = 0;
    auto spaces = [&] {
        while (i < value.size() && value[i] == ' ') ++i;
    };
    auto number = [&](int64_t& v) {
        spaces();
        const auto [ptr, ec] = std::from_chars(value.data() + i, value.data() + value.size(), v);
        if (ec != std::errc()) return false;
        i = static_cast<size_t>(ptr - value.data());
        spaces();
        return true;
    };
    spaces();
    if (i >= value.size() || value[i++] != '{') return bad();
    spaces();
    if (i < value.size() && value[i] == '}') return out;
    while (true) {
        spaces();
        if (i >= value.size() || value[i++] != '[') return bad();
        std::array<int64_t, 3> r{0, 0, 1};
        if (!number(r[0]) || i >= value.size() || value[i++] != ':' || !number(r[1])) return bad();
        if (i < value.size() && value[i] == ':') {
            ++i;
            if (!number(r[2])) return bad();
        }
        if (i >= value.size() || value[i++] != ']') return bad();
        out.push_back(r);
        spaces();
        if (i < value.size() && value[i] == ',') {
            ++i;
            continue;
        }
        if (i < value.size() && value[i] == '}') break;
        return bad();
    }
    return out;
}

std::string unquote(std::string_view value) {
    if (value.size() < 2 || value.front() != '"' || value.back() != '"') return std::string(value);
    std::string out;
    for (size_t i = 1; i + 1 < value.size(); ++i) {
        char c = value[i];
        if (c == '\\' && i + 2 < value.size()) {
            c = value[++i];
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        out += c;
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> parseFieldList(std::string_view value) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t i = 0;
    while (i < value.size() && value[i] == ' ') ++i;
    if (i < value.size() && value[i] == '{') ++i;
    while (i < value.size()) {
        while (i < value.size() && (value[i] == ' ' || value[i] == ',')) ++i;
        if (i >= value.size() || value[i] == '}') break;
        const size_t keyStart = i;
        while (i < value.size() && value[i] != '=' && value[i] != ' ' && value[i] != '}') ++i;
        std::string key(value.substr(keyStart, i - keyStart));
        if (i >= value.size() || value[i] != '=') {
            out.emplace_back(std::move(key), "");
            continue;
        }
        ++i;
        const size_t valueStart = i;
        int depth = 0;
        while (i < value.size()) {
            const char c = value[i];
            if (c == '"') {
                ++i;
                while (i < value.size() && value[i] != '"') i += value[i] == '\\' ? 2 : 1;
                if (i < value.size()) ++i;
                continue;
            }
            if (c == '{' || c == '[' || c == '(') ++depth;
            if (c == '}' || c == ']' || c == ')') {
                if (depth == 0) break;
                --depth;
            }
            if (depth == 0 && c == ' ') break;
            ++i;
        }
        out.emplace_back(std::move(key), unquote(value.substr(valueStart, std::min(i, value.size()) - valueStart)));
    }
    return out;
}

}  // namespace cfp::hlo
