#include "import/stablehlo_import.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "import/hlo_import.h"

namespace cfp {

namespace {

using hlo::Instruction;
using hlo::Location;
using hlo::Shape;

// ---- tokens ----

struct Tok {
    enum Kind : uint8_t { Word, Value, Symbol, String, Punct, Arrow, End } kind = End;
    std::string text;  // Value: without '%'; Symbol: without '@'; String: unescaped
    Location where;
};

bool wordStart(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '#' || c == '!'; }
bool wordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '#'; }
bool nameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-'; }

Result<std::vector<Tok>> lex(std::string_view text, const std::string& source) {
    std::vector<Tok> out;
    int32_t line = 1, col = 1;
    size_t i = 0;
    auto step = [&](size_t n) {
        for (size_t k = 0; k < n && i < text.size(); ++k, ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
    };
    auto error = [&](const std::string& what) {
        return makeError("stablehlo.syntax", what, hlo::locationText(source, {line, col}));
    };
    while (i < text.size()) {
        const char c = text[i];
        if (std::isspace(static_cast<unsigned char>(c))) {
            step(1);
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i < text.size() && text[i] != '\n') step(1);
            continue;
        }
        Tok t;
        t.where = {line, col};
        if (c == '%' || c == '@') {
            t.kind = c == '%' ? Tok::Value : Tok::Symbol;
            step(1);
            if (i < text.size() && text[i] == '"') {  // @"quoted symbol"
                step(1);
                while (i < text.size() && text[i] != '"') {
                    t.text += text[i];
                    step(1);
                }
                if (i >= text.size()) return error("unterminated quoted name");
                step(1);
            } else {
                while (i < text.size() && nameChar(text[i])) {
                    t.text += text[i];
                    step(1);
                }
                if (t.kind == Tok::Value && i + 1 < text.size() && text[i] == '#' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
                    t.text += '#';
                    step(1);
                    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
                        t.text += text[i];
                        step(1);
                    }
                }
            }
            if (t.text.empty()) return error(std::string("expected a name after '") + c + "'");
        } else if (c == '"') {
            t.kind = Tok::String;
            step(1);
            while (i < text.size() && text[i] != '"') {
                if (text[i] == '\\' && i + 1 < text.size()) {
                    const char e = text[i + 1];
                    if (i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(e)) &&
                        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {  // \22: two hex digits
                        t.text += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
                        step(3);
                        continue;
                    }
                    t.text += e == 'n' ? '\n' : e == 't' ? '\t' : e;
                    step(2);
                    continue;
                }
                t.text += text[i];
                step(1);
            }
            if (i >= text.size()) return error("unterminated string");
            step(1);
        } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
            t.kind = Tok::Arrow;
            t.text = "->";
            step(2);
        } else if (wordStart(c) || (c == '-' && i + 1 < text.size() && (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == 'i'))) {
            t.kind = Tok::Word;
            const bool number = c == '-' || std::isdigit(static_cast<unsigned char>(c));
            t.text += c;
            step(1);
            while (i < text.size()) {
                const char d = text[i];
                const bool exponentSign = number && (d == '+' || d == '-') && (t.text.back() == 'e' || t.text.back() == 'E') &&
                                          t.text.find("0x") == std::string::npos;
                if (!(wordChar(d) || exponentSign)) break;
                t.text += d;
                step(1);
            }
        } else if (std::strchr("(){}[]<>,=:^?*|", c)) {
            t.kind = Tok::Punct;
            t.text = std::string(1, c);
            step(1);
        } else {
            return error(std::string("unexpected character '") + c + "'");
        }
        out.push_back(std::move(t));
        if (out.size() > 50'000'000) return makeError("stablehlo.too_large", "more than 50M tokens", source);
    }
    Tok end;
    end.where = {line, col};
    out.push_back(end);
    return out;
}

// ---- statements ----

struct Region;

struct Stmt {
    std::vector<std::string> results;  // names without '%'
    int count = 1;                     // results of `%x:N`
    std::string op;                    // "stablehlo.add", "call", "return", …
    bool generic = false;              // "stablehlo.op"(…) form
    std::vector<std::string> operands;  // value names as written (`%0#1` → "0#1")
    std::vector<std::string> defs;      // while: the iteration arguments' names
    std::vector<std::string> words;     // top-level words of the header (directions, …)
    std::string header;                 // the header's text: attributes are read from it
    std::string callee;                 // call @callee / custom_call @target
    std::vector<Shape> operandTypes, resultTypes;
    std::vector<Region> regions;
    std::string loc;                    // "#loc12"
    Location where;
};

struct Region {
    std::string name;  // "cond", "do", "reducer", "" (generic)
    std::vector<std::pair<std::string, Shape>> args;
    std::vector<Stmt> body;
};

struct Function {
    std::string name;
    bool isPublic = true;
    std::vector<std::pair<std::string, Shape>> args;
    std::vector<std::string> argShardings;
    std::vector<std::string> argNames;  // from `loc("params['layers']['0']['w']")` (lower(...).as_text(debug_info=True))
    std::vector<Stmt> body;
    Location where;
};

// A string as HLO text quotes it: backslash before quotes and backslashes.
std::string hloEscaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// A pytree path as JAX prints it, as a dotted name: "params['layers']['0']['w']" → "params.layers.0.w",
// "opt_state[0].mu" → "opt_state.0.mu"; empty when it is not one (characters other than names,
// brackets, quotes and dots).
std::string pytreePathName(const std::string& path) {
    std::string out;
    for (char c : path) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') out += c;
        else if (c == '[' || c == '.') out += '.';
        else if (c == ']' || c == '\'' || c == '"') continue;
        else return {};
    }
    std::string clean;
    for (char c : out)
        if (!(c == '.' && (clean.empty() || clean.back() == '.'))) clean += c;
    while (!clean.empty() && clean.back() == '.') clean.pop_back();
    return clean;
}

// MLIR element types in HLO's spelling: i1 → pred, i32 → s32, ui32 → u32, f8E4M3FN → f8e4m3fn; other
// floats unchanged.
std::string hloElementType(const std::string& e) {
    if (e == "i1") return "pred";
    if (e.size() > 1 && e[0] == 'i' && std::isdigit(static_cast<unsigned char>(e[1]))) return "s" + e.substr(1);
    if (e.rfind("ui", 0) == 0) return "u" + e.substr(2);
    if (e.rfind("f8", 0) == 0) {  // f8E4M3FN → f8e4m3fn
        std::string lower = e;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return lower;
    }
    return e;
}

class Parser {
public:
    Parser(std::vector<Tok> toks, const std::string& source) : m_t(std::move(toks)), m_source(source) {}
    const std::string& moduleName() const { return m_moduleName; }

    Result<std::vector<Function>> run(std::map<std::string, std::string>& locs);

private:
    std::vector<Tok> m_t;
    std::string m_moduleName;  // `module @name`
    const std::string& m_source;
    size_t m_i = 0;
    int m_depth = 0;

    const Tok& peek(size_t k = 0) const { return m_t[std::min(m_i + k, m_t.size() - 1)]; }
    bool is(const char* punct, size_t k = 0) const { return peek(k).kind == Tok::Punct && peek(k).text == punct; }
    bool isWord(const char* w, size_t k = 0) const { return peek(k).kind == Tok::Word && peek(k).text == w; }
    Error error(const std::string& what, const Tok& at) const {
        return makeError("stablehlo.syntax", what, hlo::locationText(m_source, at.where));
    }
    Error error(const std::string& what) const { return error(what, peek()); }
    // Shardy's dialect (sdy.mesh, sdy.manual_computation): its manual regions are not read; the
    // pre-Shardy lowering writes them as the SPMDFullToShardShape custom-calls that are.
    Error shardyUnsupported() const {
        return makeError("stablehlo.unsupported",
                         "Shardy's '" + peek().text + "' is not supported: lower with jax_use_shardy_partitioner=False, "
                         "which writes shard_map as SPMDFullToShardShape / SPMDShardToFullShape custom-calls",
                         hlo::locationText(m_source, peek().where));
    }
    Status expect(const char* punct) {
        if (!is(punct)) return error(std::string("expected '") + punct + "'" + (peek().kind == Tok::End ? " before the end" : ", got '" + peek().text + "'"));
        ++m_i;
        return {};
    }
    // Skips one balanced group starting at an opening bracket (or one token).
    Status skipBalanced() {
        const std::string open = peek().text;
        if (peek().kind != Tok::Punct || (open != "(" && open != "{" && open != "[" && open != "<")) {
            ++m_i;
            return {};
        }
        int depth = 0;
        do {
            if (peek().kind == Tok::End) return error("unbalanced '" + open + "'");
            if (peek().kind == Tok::Punct) {
                const std::string& p = peek().text;
                if (p == "(" || p == "{" || p == "[" || p == "<") ++depth;
                if (p == ")" || p == "}" || p == "]" || p == ">") --depth;
            }
            ++m_i;
        } while (depth > 0);
        return {};
    }
    Result<Shape> type();
    bool typeStart() const {
        return isWord("tensor") || isWord("tuple") || (peek().kind == Tok::Word && peek().text.rfind("!stablehlo.token", 0) == 0) ||
               isWord("i1") || isWord("i32") || isWord("i64") || isWord("f32") || isWord("index");
    }
    Status signature(Stmt& s);
    Result<Region> region(const std::string& name, bool withArgs);
    Result<std::vector<Stmt>> block();
    Result<Stmt> statement();
    Status argList(std::vector<std::pair<std::string, Shape>>& args, std::vector<std::string>* shardings,
                   std::vector<std::string>* names = nullptr);
    void skipLoc(std::string* ref);
};

// `tensor<8x16xf32>`, `tensor<f32>`, `tuple<…>`, `!stablehlo.token`.
Result<Shape> Parser::type() {
    Shape s;
    if (peek().kind == Tok::Word && peek().text.rfind("!stablehlo.token", 0) == 0) {
        ++m_i;
        s.elementType = "token";  // the HLO importer reads a token as an empty value
        return s;
    }
    if (isWord("tuple")) {
        ++m_i;
        CFP_TRY(expect("<"));
        s.isTuple = true;
        while (!is(">")) {
            auto e = type();
            if (!e) return e.error();
            s.elements.push_back(std::move(*e));
            if (is(",")) ++m_i;
            else if (!is(">")) return error("expected ',' or '>' in a tuple type");
        }
        ++m_i;
        return s;
    }
    if (peek().kind == Tok::Word && !isWord("tensor")) {  // a bare scalar type (reducer arguments in some prints)
        s.elementType = peek().text;
    } else {
        if (!isWord("tensor")) return error("expected a type such as tensor<8x16xf32>, got '" + peek().text + "'");
        ++m_i;
        CFP_TRY(expect("<"));
        if (is("?") || (peek().kind == Tok::Word && peek().text.find('?') != std::string::npos))
            return makeError("stablehlo.unsupported", "dynamic shapes (tensor<?x…>) are not supported",
                             hlo::locationText(m_source, peek().where));
        if (peek().kind != Tok::Word) return error("expected the shape and element type in tensor<…>");
        std::string spec = peek().text;
        ++m_i;
        // A dynamic dim ('?') or an encoding (`, #stablehlo.bounds<…>`) is not supported.
        if (is("?")) return makeError("stablehlo.unsupported", "dynamic shapes (tensor<?x…>) are not supported",
                                      hlo::locationText(m_source, peek().where));
        if (is(",")) {
            ++m_i;
            CFP_TRY(skipBalanced());
            while (!is(">") && peek().kind != Tok::End) CFP_TRY(skipBalanced());
        }
        if (!is(">")) return error("expected '>' after " + spec);
        ++m_i;
        size_t start = 0;
        while (true) {
            const size_t x = spec.find('x', start);
            const std::string part = spec.substr(start, x == std::string::npos ? std::string::npos : x - start);
            const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            if (x == std::string::npos || !digits) {
                s.elementType = spec.substr(start);
                break;
            }
            int64_t dim = 0;
            const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), dim);
            if (ec != std::errc() || dim > (int64_t{1} << 62)) return error("dimension " + part + " is out of range");
            s.dims.push_back(dim);
            start = x + 1;
        }
        s.elementType = hloElementType(s.elementType);
        return s;
    }
    ++m_i;
    s.elementType = hloElementType(s.elementType);
    return s;
}

void Parser::skipLoc(std::string* ref) {
    if (!isWord("loc") || !is("(", 1)) return;
    ++m_i;
    if (ref && peek(1).kind == Tok::Word && peek(1).text.rfind("#loc", 0) == 0) *ref = peek(1).text;
    (void)skipBalanced();
}

// `: type` / `: type, type` / `: (types) -> type` / `: (types) -> (types)`.
Status Parser::signature(Stmt& s) {
    CFP_TRY(expect(":"));
    auto list = [&](std::vector<Shape>& out) -> Status {
        while (true) {
            auto t = type();
            if (!t) return t.error();
            out.push_back(std::move(*t));
            if (peek().kind == Tok::Punct && peek().text == "{") CFP_TRY(skipBalanced());  // result attributes
            if (!is(",")) return {};
            ++m_i;
        }
    };
    if (is("(")) {
        ++m_i;
        if (!is(")")) CFP_TRY(list(s.operandTypes));
        CFP_TRY(expect(")"));
        if (peek().kind != Tok::Arrow) return error("expected '->' after the operand types");
        ++m_i;
        if (is("(")) {
            ++m_i;
            if (!is(")")) CFP_TRY(list(s.resultTypes));
            return expect(")");
        }
        auto t = type();
        if (!t) return t.error();
        s.resultTypes.push_back(std::move(*t));
        return {};
    }
    std::vector<Shape> types;
    CFP_TRY(list(types));
    if (s.op == "stablehlo.while" || s.op == "stablehlo.optimization_barrier" || s.op == "return" || s.op == "func.return" ||
        s.op == "stablehlo.return") {
        s.resultTypes = types;
        s.operandTypes = types;
    } else {
        s.resultTypes = {types.back()};  // select: (pred type, value type); elementwise: one type
    }
    return {};
}

// `(%a: tensor<f32>, %b: tensor<f32>)` with optional attribute dicts.
Status Parser::argList(std::vector<std::pair<std::string, Shape>>& args, std::vector<std::string>* shardings,
                       std::vector<std::string>* names) {
    CFP_TRY(expect("("));
    while (!is(")")) {
        if (peek().kind != Tok::Value) return error("expected an argument such as %arg0: tensor<…>");
        std::string name = peek().text;
        ++m_i;
        CFP_TRY(expect(":"));
        auto t = type();
        if (!t) return t.error();
        args.emplace_back(std::move(name), std::move(*t));
        std::string sharding;
        if (is("{")) {
            const size_t open = m_i;
            CFP_TRY(skipBalanced());
            for (size_t k = open; k + 2 < m_i; ++k)
                if (m_t[k].kind == Tok::Word && (m_t[k].text == "mhlo.sharding" || m_t[k].text == "sdy.sharding") &&
                    m_t[k + 1].text == "=") {
                    if (m_t[k + 2].kind == Tok::String) sharding = m_t[k + 2].text;
                    else sharding = m_t[k + 2].text;
                }
        }
        // JAX's debug info names the argument by its pytree path: loc("params['layers']['0']['w']").
        std::string named;
        if (isWord("loc") && is("(", 1) && peek(2).kind == Tok::String && is(")", 3)) named = pytreePathName(peek(2).text);
        skipLoc(nullptr);
        if (names) names->push_back(named);
        if (shardings) shardings->push_back(sharding);
        if (is(",")) ++m_i;
        else if (!is(")")) return error("expected ',' or ')' in the argument list");
    }
    ++m_i;
    return {};
}

Result<Region> Parser::region(const std::string& name, bool withArgs) {
    Region r;
    r.name = name;
    if (withArgs) {
        CFP_TRY(argList(r.args, nullptr));
        while (is("(")) CFP_TRY(argList(r.args, nullptr));  // reducer(%acc0, %x0) (%acc1, %x1)
    }
    auto body = block();
    if (!body) return body.error();
    r.body = std::move(*body);
    return r;
}

// `{ statements }`, or `{ ^bb0(%a: T, …): statements }` (the block arguments become region args
// by the caller when present).
Result<std::vector<Stmt>> Parser::block() {
    if (++m_depth > 64) return makeError("stablehlo.syntax", "regions nest more than 64 deep", hlo::locationText(m_source, peek().where));
    CFP_TRY(expect("{"));
    std::vector<Stmt> body;
    while (!is("}")) {
        if (peek().kind == Tok::End) return error("expected '}' to close the block");
        auto s = statement();
        if (!s) return s.error();
        body.push_back(std::move(*s));
    }
    ++m_i;
    --m_depth;
    return body;
}

Result<Stmt> Parser::statement() {
    Stmt s;
    s.where = peek().where;
    if (peek().kind == Tok::Value) {
        s.results.push_back(peek().text);
        ++m_i;
        if (is(":") && peek(1).kind == Tok::Word) {
            const std::string& n = peek(1).text;
            const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), s.count);
            if (ec != std::errc() || ptr != n.data() + n.size() || s.count < 1 || s.count > 65536)
                return error("expected a result count between 1 and 65536 after ':'", peek(1));
            m_i += 2;
        }
        while (is(",")) {  // %a, %b = …
            ++m_i;
            if (peek().kind != Tok::Value) return error("expected a result name");
            s.results.push_back(peek().text);
            ++m_i;
        }
        CFP_TRY(expect("="));
        if (s.results.size() > 1) s.count = static_cast<int>(s.results.size());
    }
    if (peek().kind == Tok::String) {
        s.generic = true;
        s.op = peek().text;
    } else if (peek().kind == Tok::Word) {
        if (peek().text.rfind("sdy.", 0) == 0) return shardyUnsupported();
        s.op = peek().text;
    } else {
        return error("expected an operation, got '" + peek().text + "'");
    }
    ++m_i;
    if (s.op == "func.call") s.op = "call";
    if (s.op == "func.return") s.op = "return";
    // Header: everything up to the top-level ':' of the signature (a terminator without operands
    // has none: it ends at the block's '}').
    const size_t headerStart = m_i;
    int depth = 0;
    size_t beginOffset = std::string::npos;
    while (true) {
        const Tok& t = peek();
        if (t.kind == Tok::End) return error("expected ':' and the types of '" + s.op + "'", m_t[headerStart - 1]);
        if (t.kind == Tok::Punct) {
            if (t.text == "(" || t.text == "[" || t.text == "{" || t.text == "<") {
                // A region inside a generic op: `({ ^bb0(…): … })`.
                if (s.generic && t.text == "(" && is("{", 1)) {
                    ++m_i;
                    Region r;
                    // `{ [^bb0(args):] statements }`
                    CFP_TRY(expect("{"));
                    if (is("^")) {
                        m_i += 2;  // ^ bb0
                        CFP_TRY(argList(r.args, nullptr));
                        CFP_TRY(expect(":"));
                    }
                    while (!is("}")) {
                        if (peek().kind == Tok::End) return error("expected '}' to close the region");
                        auto st = statement();
                        if (!st) return st.error();
                        r.body.push_back(std::move(*st));
                    }
                    ++m_i;
                    CFP_TRY(expect(")"));
                    s.regions.push_back(std::move(r));
                    continue;
                }
                ++depth;
            } else if (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ">") {
                if (depth == 0 && t.text == "}" && (s.op == "return" || s.op == "stablehlo.return")) break;  // `return` alone
                --depth;
            } else if (t.text == ":" && depth == 0) {
                break;
            }
        }
        if (depth == 0 && t.kind == Tok::Word && isWord("loc") && is("(", 1)) {
            skipLoc(&s.loc);
            continue;
        }
        if (beginOffset == std::string::npos) beginOffset = m_i;
        if (t.kind == Tok::Value) {
            if (is("=", 1) && s.op == "stablehlo.while") s.defs.push_back(t.text);
            else s.operands.push_back(t.text);
        } else if (t.kind == Tok::Symbol && s.callee.empty()) {
            s.callee = t.text;
        } else if (t.kind == Tok::Word && depth == 0) {
            s.words.push_back(t.text);
        }
        s.header += (s.header.empty() ? "" : " ") + (t.kind == Tok::String ? "\"" + hloEscaped(t.text) + "\"" : t.text);
        ++m_i;
    }
    if (is(":")) CFP_TRY(signature(s));
    // Regions of pretty forms.
    if (isWord("cond")) {
        ++m_i;
        auto c = region("cond", false);
        if (!c) return c.error();
        s.regions.push_back(std::move(*c));
        if (!isWord("do")) return error("expected 'do' after the while's condition");
        ++m_i;
        auto b = region("do", false);
        if (!b) return b.error();
        s.regions.push_back(std::move(*b));
    } else if (isWord("reducer")) {
        ++m_i;
        auto r = region("reducer", true);
        if (!r) return r.error();
        s.regions.push_back(std::move(*r));
    }
    skipLoc(&s.loc);
    return s;
}

Result<std::vector<Function>> Parser::run(std::map<std::string, std::string>& locs) {
    std::vector<Function> fns;
    bool inModule = false;
    while (peek().kind != Tok::End) {
        if (peek().kind == Tok::Word && peek().text.rfind("#loc", 0) == 0 && is("=", 1)) {
            // #loc12 = loc("jit(f)/…/dot_general"(…)) — the first string names the op.
            const std::string ref = peek().text;
            m_i += 2;
            const size_t start = m_i;
            CFP_TRY(skipBalanced());  // `loc`
            CFP_TRY(skipBalanced());  // `( … )`
            // skipBalanced may step past the end on a truncated module: only the tokens there are.
            for (size_t k = start; k < std::min(m_i, m_t.size()); ++k)
                if (m_t[k].kind == Tok::String) {
                    locs[ref] = m_t[k].text;
                    break;
                }
            continue;
        }
        if (isWord("module")) {
            ++m_i;
            if (peek().kind == Tok::Symbol) m_moduleName = m_t[m_i++].text;
            if (isWord("attributes")) {
                ++m_i;
                CFP_TRY(skipBalanced());
            }
            CFP_TRY(expect("{"));
            inModule = true;
            continue;
        }
        if (inModule && is("}")) {
            ++m_i;
            inModule = false;
            skipLoc(nullptr);
            continue;
        }
        if (isWord("func.func")) {
            Function f;
            f.where = peek().where;
            ++m_i;
            if (isWord("public") || isWord("private") || isWord("nested")) {
                f.isPublic = peek().text == "public";
                ++m_i;
            }
            if (peek().kind != Tok::Symbol) return error("expected the function's @name");
            f.name = peek().text;
            ++m_i;
            CFP_TRY(argList(f.args, &f.argShardings, &f.argNames));
            if (peek().kind == Tok::Arrow) {
                ++m_i;
                if (is("(")) CFP_TRY(skipBalanced());
                else {
                    auto t = type();  // a single result without attributes (they need parentheses)
                    if (!t) return t.error();
                }
            }
            if (isWord("attributes")) {
                ++m_i;
                CFP_TRY(skipBalanced());
            }
            auto body = block();
            if (!body) return body.error();
            f.body = std::move(*body);
            skipLoc(nullptr);
            fns.push_back(std::move(f));
            continue;
        }
        if (peek().text.rfind("sdy.", 0) == 0) return shardyUnsupported();
        return error("expected 'module', 'func.func' or a #loc definition, got '" + peek().text + "'");
    }
    if (inModule) return error("expected '}' to close the module");
    return fns;
}

// ---- translation to HLO structures ----

// "[1, 0]" or "array<i64: 1, 0>" at `key = ` in a header → "{1,0}".
std::optional<std::string> intListAfter(const std::string& header, const std::string& key, size_t from = 0) {
    size_t k = header.find(key + " = ", from);
    if (k == std::string::npos) return std::nullopt;
    k += key.size() + 3;
    size_t end;
    if (header.compare(k, 6, "array ") == 0 || header.compare(k, 5, "array") == 0) {
        const size_t colon = header.find(':', k);
        end = header.find('>', k);
        if (colon == std::string::npos || end == std::string::npos) return std::nullopt;
        k = colon + 1;
    } else {
        if (k >= header.size() || header[k] != '[') return std::nullopt;
        ++k;
        end = header.find(']', k);
        if (end == std::string::npos) return std::nullopt;
    }
    std::string out = "{";
    for (size_t i = k; i < end; ++i)
        if (std::isdigit(static_cast<unsigned char>(header[i])) || header[i] == '-') out += header[i];
        else if (header[i] == ',') out += ',';
    return out + "}";
}

// `contracting_dims = [1] x [0]` → ("{1}", "{0}").
std::optional<std::pair<std::string, std::string>> pairListAfter(const std::string& header, const std::string& key) {
    const size_t k = header.find(key + " = ");
    if (k == std::string::npos) return std::nullopt;
    auto lhs = intListAfter(header, key, k);
    const size_t x = header.find(" x ", k);
    if (!lhs || x == std::string::npos) return std::nullopt;
    const std::string rest = "r = " + header.substr(x + 3);
    auto rhs = intListAfter(rest, "r");
    if (!rhs) return std::nullopt;
    return std::make_pair(*lhs, *rhs);
}

std::optional<std::string> intAfter(const std::string& header, const std::string& key) {
    size_t k = header.find(key + " = ");
    if (k == std::string::npos) return std::nullopt;
    k += key.size() + 3;
    size_t e = k;
    while (e < header.size() && (std::isdigit(static_cast<unsigned char>(header[e])) || header[e] == '-')) ++e;
    if (e == k) return std::nullopt;
    return header.substr(k, e - k);
}

// A dense<…> literal as HLO constant text for `shape` (splat of a non-scalar: a scalar, broadcast
// by the caller). Hex floats are their bit pattern.
std::string literalValue(std::string v, const std::string& elementType) {
    if (v == "true") return "true";
    if (v == "false") return "false";
    if (v.rfind("0x", 0) == 0 || v.rfind("0X", 0) == 0) {
        uint64_t bits = 0;
        const auto [ptr, ec] = std::from_chars(v.data() + 2, v.data() + v.size(), bits, 16);
        if (ec != std::errc()) return v;  // left for the HLO importer to refuse
        if (elementType == "f32") return std::to_string(std::bit_cast<float>(static_cast<uint32_t>(bits)));
        if (elementType == "f64") return std::to_string(std::bit_cast<double>(bits));
        if (elementType == "bf16") return std::to_string(std::bit_cast<float>(static_cast<uint32_t>(bits << 16)));
        return std::to_string(bits);
    }
    return v;
}

class Translator {
public:
    Translator(const std::vector<Function>& fns, const std::map<std::string, std::string>& locs, const std::string& source)
        : m_fns(fns), m_locs(locs), m_source(source) {}
    Result<hlo::Module> run();

private:
    const std::vector<Function>& m_fns;
    const std::map<std::string, std::string>& m_locs;
    const std::string& m_source;
    hlo::Module m_module;
    int m_regions = 0;

    struct Scope {
        hlo::Computation* comp = nullptr;
        std::map<std::string, std::string> names;  // value → instruction name
        std::map<std::string, Shape> shapes;       // value → shape
        const Scope* outer = nullptr;
    };

    Error fail(const Stmt& s, const std::string& code, const std::string& what) const {
        return makeError(code, "'" + s.op + "': " + what, hlo::locationText(m_source, s.where));
    }
    std::map<std::string, std::string> m_paramNames;  // entry argument → its pytree name
    static std::string instName(const std::string& value) {
        std::string n = value;
        std::replace(n.begin(), n.end(), '#', '.');
        if (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0]))) n = "v" + n;
        return n;
    }
    Instruction& add(Scope& sc, Instruction ins) {
        if (ins.name.empty()) ins.name = "t" + std::to_string(++m_regions);
        sc.comp->instructions.push_back(std::move(ins));
        return sc.comp->instructions.back();
    }
    // The instruction holding `value`; values of enclosing scopes are not visible (regions carry
    // them explicitly).
    Result<std::string> ref(const Scope& sc, const std::string& value, const Stmt& s) const {
        auto it = sc.names.find(value);
        if (it == sc.names.end()) return fail(s, "stablehlo.syntax", "%" + value + " is not defined before its use");
        return it->second;
    }
    Result<Shape> shapeOf(const Scope& sc, const std::string& value, const Stmt& s) const {
        auto it = sc.shapes.find(value);
        if (it == sc.shapes.end()) return fail(s, "stablehlo.syntax", "%" + value + " is not defined before its use");
        return it->second;
    }
    void define(Scope& sc, const std::string& value, const std::string& inst, const Shape& shape) {
        sc.names[value] = inst;
        sc.shapes[value] = shape;
    }
    // Values a region reads that it does not define (its free variables), in first-use order.
    static void freeValues(const std::vector<Stmt>& body, const std::set<std::string>& bound, std::vector<std::string>& out);
    // `captured` values (read from outside a loop region) are elements of the tuple parameter after
    // `params`; `carry` appends them to the root tuple unchanged (a loop body), else the root is
    // what the body returns (a condition).
    Result<std::string> computation(const std::string& name, const std::vector<std::pair<std::string, Shape>>& params,
                                    const std::vector<Stmt>& body, const std::vector<std::string>& captured = {},
                                    const std::vector<Shape>& capturedShapes = {}, bool tupleParam = false, bool carry = false);
    Status lower(Scope& sc, const Stmt& s);
    Status finish(Scope& sc, const Stmt& s, Instruction ins, const Shape& result);
};

void Translator::freeValues(const std::vector<Stmt>& body, const std::set<std::string>& boundIn, std::vector<std::string>& out) {
    std::set<std::string> bound = boundIn;
    for (const Stmt& s : body) {
        for (const std::string& o : s.operands) {
            const std::string base = o.substr(0, o.find('#'));
            if (!bound.count(base) && std::find(out.begin(), out.end(), base) == out.end()) out.push_back(base);
        }
        for (const Region& r : s.regions) {
            std::set<std::string> inner = bound;
            for (const auto& a : r.args) inner.insert(a.first);
            for (const std::string& d : s.defs) inner.insert(d);
            std::vector<std::string> nested;
            freeValues(r.body, inner, nested);
            for (const std::string& v : nested)
                if (!bound.count(v) && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
        for (const std::string& r : s.results) bound.insert(r);
    }
}

// A computation named `name`: parameters (or one tuple parameter whose elements are the params
// followed by the captured values), the body, ROOT the returned value(s).
Result<std::string> Translator::computation(const std::string& name, const std::vector<std::pair<std::string, Shape>>& params,
                                            const std::vector<Stmt>& body, const std::vector<std::string>& captured,
                                            const std::vector<Shape>& capturedShapes, bool tupleParam, bool carry) {
    m_module.computations.emplace_back();
    const size_t index = m_module.computations.size() - 1;
    m_module.computations[index].name = name;
    hlo::Computation comp;
    comp.name = name;
    Scope sc;
    sc.comp = &comp;
    if (tupleParam) {
        Instruction p;
        p.name = name + ".param";
        p.opcode = "parameter";
        p.payload = "0";
        p.shape.isTuple = true;
        for (const auto& a : params) p.shape.elements.push_back(a.second);
        for (const Shape& c : capturedShapes) p.shape.elements.push_back(c);
        const Shape tupleShape = p.shape;
        add(sc, std::move(p));
        auto element = [&](const std::string& value, const Shape& shape, size_t k) {
            Instruction g;
            g.name = instName(value) + ".in";
            g.opcode = "get-tuple-element";
            g.shape = shape;
            g.operands = {name + ".param"};
            g.attributes.push_back({"index", std::to_string(k)});
            add(sc, std::move(g));
            define(sc, value, instName(value) + ".in", shape);
        };
        for (size_t k = 0; k < params.size(); ++k) element(params[k].first, params[k].second, k);
        for (size_t k = 0; k < captured.size(); ++k) element(captured[k], capturedShapes[k], params.size() + k);
        (void)tupleShape;
    } else {
        for (size_t k = 0; k < params.size(); ++k) {
            Instruction p;
            const auto named = m_paramNames.find(params[k].first);
            p.name = named != m_paramNames.end() ? named->second : instName(params[k].first);
            p.opcode = "parameter";
            p.payload = std::to_string(k);
            p.shape = params[k].second;
            const std::string pname = p.name;
            add(sc, std::move(p));
            define(sc, params[k].first, pname, params[k].second);
        }
    }
    bool returned = false;
    for (const Stmt& s : body) {
        if (s.op == "return" || s.op == "stablehlo.return") {
            Instruction root;
            root.isRoot = true;
            if (s.operands.size() == 1 && !carry) {
                // The returned instruction is the root itself (a loop condition's compare must be).
                auto r = ref(sc, s.operands[0], s);
                if (!r) return r.error();
                for (size_t k = 0; k < comp.instructions.size(); ++k)
                    if (comp.instructions[k].name == *r) {
                        comp.instructions[k].isRoot = true;
                        comp.root = static_cast<int32_t>(k);
                    }
                returned = true;
                break;
            } else {
                root.name = name + ".root";
                root.opcode = "tuple";
                root.shape.isTuple = true;
                std::vector<std::string> outs = s.operands;
                if (carry)
                    for (const std::string& c : captured) outs.push_back(c);  // carried through unchanged
                for (const std::string& o : outs) {
                    auto r = ref(sc, o, s);
                    if (!r) return r.error();
                    auto sh = shapeOf(sc, o, s);
                    if (!sh) return sh.error();
                    root.operands.push_back(*r);
                    root.shape.elements.push_back(*sh);
                }
            }
            add(sc, std::move(root));
            returned = true;
            break;
        }
        CFP_TRY(lower(sc, s));
    }
    if (!returned) return makeError("stablehlo.syntax", "function or region '" + name + "' has no return", m_source);
    if (comp.root < 0) comp.root = static_cast<int32_t>(comp.instructions.size()) - 1;
    m_module.computations[index] = std::move(comp);
    return name;
}

Status Translator::finish(Scope& sc, const Stmt& s, Instruction ins, const Shape& result) {
    if (!s.loc.empty())
        if (auto it = m_locs.find(s.loc); it != m_locs.end())
            ins.attributes.push_back({"metadata", "{op_name=\"" + it->second + "\"}"});
    if (s.header.find("mhlo.sharding = ") != std::string::npos) {
        const size_t k = s.header.find("mhlo.sharding = ") + 16;
        const size_t q0 = s.header.find('"', k), q1 = q0 == std::string::npos ? q0 : s.header.find('"', q0 + 1);
        if (q1 != std::string::npos) ins.attributes.push_back({"sharding", s.header.substr(q0 + 1, q1 - q0 - 1)});
    }
    ins.where = s.where;
    ins.shape = result;
    const std::string base = s.results.empty() ? std::string() : s.results[0];
    ins.name = base.empty() ? "" : instName(base);
    Instruction& placed = add(sc, std::move(ins));
    const std::string placedName = placed.name;
    if (base.empty()) return {};
    if (s.count <= 1) {
        define(sc, base, placedName, result);
        return {};
    }
    // Multi-result: %x#k (or the names of `%a, %b = …`) are the tuple's elements.
    for (int k = 0; k < s.count; ++k) {
        Instruction g;
        g.name = placedName + "." + std::to_string(k);
        g.opcode = "get-tuple-element";
        g.operands = {placedName};
        g.attributes.push_back({"index", std::to_string(k)});
        g.shape = result.isTuple && k < static_cast<int>(result.elements.size()) ? result.elements[static_cast<size_t>(k)] : result;
        g.where = s.where;
        const Shape sh = g.shape;
        add(sc, std::move(g));
        const std::string value = s.results.size() > 1 ? s.results[static_cast<size_t>(k)] : base + "#" + std::to_string(k);
        define(sc, value, placedName + "." + std::to_string(k), sh);
    }
    return {};
}

Status Translator::lower(Scope& sc, const Stmt& s) {
    if (s.resultTypes.empty()) return fail(s, "stablehlo.syntax", "expected ':' and the result types");
    if (s.results.empty()) return fail(s, "stablehlo.syntax", "its result needs a name (%x = …)");
    if (s.count > 1 && s.resultTypes.size() != static_cast<size_t>(s.count) && s.op != "stablehlo.while")
        return fail(s, "stablehlo.syntax", std::to_string(s.count) + " results but " + std::to_string(s.resultTypes.size()) + " result types");
    Instruction ins;
    Shape result;
    if (s.resultTypes.size() == 1) {
        result = s.resultTypes[0];
    } else {
        result.isTuple = true;
        result.elements = s.resultTypes;
    }
    std::string op = s.op;
    const std::string prefix = op.substr(0, op.find('.') + 1);
    if (op.rfind("stablehlo.", 0) == 0 || op.rfind("mhlo.", 0) == 0 || op.rfind("chlo.", 0) == 0) op = op.substr(prefix.size());
    std::string opcode = op;
    std::replace(opcode.begin(), opcode.end(), '_', '-');
    auto operandsTo = [&](Instruction& i, const std::vector<std::string>& values) -> Status {
        for (const std::string& v : values) {
            auto r = ref(sc, v, s);
            if (!r) return r.error();
            i.operands.push_back(*r);
        }
        return {};
    };
    if (op == "constant") {
        const size_t d = s.header.find("dense <");
        const size_t d2 = s.header.find("dense<");
        const size_t at = d != std::string::npos ? d + 7 : d2 != std::string::npos ? d2 + 6 : std::string::npos;
        if (at == std::string::npos || result.isTuple) return fail(s, "stablehlo.unsupported", "only dense<…> constants are supported");
        const size_t end = s.header.rfind('>');
        std::string v = s.header.substr(at, end == std::string::npos || end < at ? std::string::npos : end - at);
        v.erase(std::remove(v.begin(), v.end(), ' '), v.end());
        ins.opcode = "constant";
        if (!v.empty() && v[0] == '"') {
            ins.payload = "{...}";  // a hex blob: values elided
        } else if (!v.empty() && v[0] == '[') {
            std::string payload;
            std::string token;
            auto flush = [&] {
                if (!token.empty()) payload += literalValue(token, result.elementType);
                token.clear();
            };
            for (char c : v) {
                if (c == '[') payload += '{';
                else if (c == ']') {
                    flush();
                    payload += '}';
                } else if (c == ',') {
                    flush();
                    payload += ", ";
                } else {
                    token += c;
                }
            }
            ins.payload = payload;
        } else if (!result.dims.empty()) {
            // A splat: a scalar constant broadcast to the shape.
            Instruction scalar;
            scalar.name = instName(s.results.at(0)) + ".splat";
            scalar.opcode = "constant";
            scalar.payload = literalValue(v, result.elementType);
            scalar.shape.elementType = result.elementType;
            scalar.where = s.where;
            add(sc, std::move(scalar));
            ins.opcode = "broadcast";
            ins.operands = {instName(s.results.at(0)) + ".splat"};
            ins.attributes.push_back({"dimensions", "{}"});
        } else {
            ins.payload = literalValue(v, result.elementType);
        }
        return finish(sc, s, std::move(ins), result);
    }
    if (op == "call") {
        ins.opcode = "call";
        CFP_TRY(operandsTo(ins, s.operands));
        ins.attributes.push_back({"to_apply", s.callee});
        return finish(sc, s, std::move(ins), result);
    }
    if (op == "while") {
        if (s.regions.size() != 2) return fail(s, "stablehlo.syntax", "a while needs cond and do regions");
        std::vector<std::pair<std::string, Shape>> params;
        for (size_t k = 0; k < s.defs.size(); ++k)
            params.emplace_back(s.defs[k], k < s.operandTypes.size() ? s.operandTypes[k] : Shape{});
        if (params.size() != s.operands.size()) return fail(s, "stablehlo.syntax", "the while's arguments and operands differ in number");
        std::set<std::string> bound;
        for (const auto& p : params) bound.insert(p.first);
        std::vector<std::string> captured;
        freeValues(s.regions[0].body, bound, captured);
        freeValues(s.regions[1].body, bound, captured);
        std::vector<Shape> capturedShapes;
        for (const std::string& c : captured) {
            auto sh = shapeOf(sc, c, s);
            if (!sh) return sh.error();
            capturedShapes.push_back(*sh);
        }
        const std::string base = "while" + std::to_string(++m_regions);
        // The condition reads the captured values and returns its predicate; the body carries them.
        auto cond = computation(base + ".cond", params, s.regions[0].body, captured, capturedShapes, true, false);
        if (!cond) return cond.error();
        auto body = computation(base + ".body", params, s.regions[1].body, captured, capturedShapes, true, true);
        if (!body) return body.error();
        Instruction init;
        init.name = base + ".init";
        init.opcode = "tuple";
        init.shape.isTuple = true;
        std::vector<std::string> all = s.operands;
        for (const std::string& c : captured) all.push_back(c);
        CFP_TRY(operandsTo(init, all));
        for (const std::string& v : all) {
            auto sh = shapeOf(sc, v, s);
            if (!sh) return sh.error();
            init.shape.elements.push_back(*sh);
        }
        const Shape loopShape = init.shape;
        add(sc, std::move(init));
        ins.opcode = "while";
        ins.operands = {base + ".init"};
        ins.attributes.push_back({"condition", *cond});
        ins.attributes.push_back({"body", *body});
        // The results are the first N elements of the loop tuple.
        Stmt loop = s;
        loop.count = static_cast<int>(s.operands.size());
        if (s.results.size() == 1 && loop.count == 1) loop.count = 1;
        Shape full = loopShape;
        if (full.elements.empty()) return fail(s, "stablehlo.syntax", "a while needs at least one operand");
        if (loop.count == 1) {
            // One loop value: the while yields the tuple; its element 0 is the value.
            ins.where = s.where;
            ins.shape = full;
            ins.name = instName(s.results.at(0)) + ".loop";
            const std::string loopName = ins.name;
            add(sc, std::move(ins));
            Instruction g;
            g.name = instName(s.results.at(0));
            g.opcode = "get-tuple-element";
            g.operands = {loopName};
            g.attributes.push_back({"index", "0"});
            g.shape = full.elements.at(0);
            g.where = s.where;
            const Shape sh = g.shape;
            add(sc, std::move(g));
            define(sc, s.results.at(0), instName(s.results.at(0)), sh);
            return {};
        }
        return finish(sc, loop, std::move(ins), full);
    }
    if (op == "reduce") {
        // (%in init: %init), … : inputs first, then inits.
        std::vector<std::string> inputs, inits;
        for (size_t k = 0; k + 1 < s.operands.size(); k += 2) {
            inputs.push_back(s.operands[k]);
            inits.push_back(s.operands[k + 1]);
        }
        if (s.generic) {  // "stablehlo.reduce"(%a, %b, %init_a, %init_b)
            const size_t n = s.operands.size() / 2;
            inputs.assign(s.operands.begin(), s.operands.begin() + static_cast<std::ptrdiff_t>(n));
            inits.assign(s.operands.begin() + static_cast<std::ptrdiff_t>(n), s.operands.end());
        }
        auto dims = intListAfter(s.header, "dimensions");
        if (!dims) return fail(s, "stablehlo.syntax", "reduce needs dimensions = […]");
        if (inputs.empty() || inputs.size() != inits.size())
            return fail(s, "stablehlo.syntax", "reduce needs (%input init: %init) operands");
        std::vector<std::string> all = inputs;
        all.insert(all.end(), inits.begin(), inits.end());
        CFP_TRY(operandsTo(ins, all));
        ins.opcode = "reduce";
        ins.attributes.push_back({"dimensions", *dims});
        std::vector<Shape> scalars;
        for (const std::string& i : inits) {
            auto sh = shapeOf(sc, i, s);
            if (!sh) return sh.error();
            scalars.push_back(*sh);
        }
        std::string reducer;
        const size_t applies = s.header.find("applies ");
        if (applies != std::string::npos) {
            std::string fn = s.header.substr(applies + 8);
            fn = fn.substr(0, fn.find(' '));
            if (fn.rfind("stablehlo.", 0) == 0) fn = fn.substr(10);
            Stmt apply;
            apply.op = "stablehlo." + fn;
            apply.results = {"r"};
            apply.operands = {"a", "b"};
            apply.resultTypes = {scalars.at(0)};
            apply.where = s.where;
            Stmt ret;
            ret.op = "return";
            ret.operands = {"r"};
            auto c = computation("reducer" + std::to_string(++m_regions), {{"a", scalars.at(0)}, {"b", scalars.at(0)}}, {apply, ret});
            if (!c) return c.error();
            reducer = *c;
        } else if (!s.regions.empty()) {
            // reducer(%acc0, %x0) (%acc1, %x1): HLO's order is (acc0, acc1, x0, x1).
            const auto& args = s.regions[0].args;
            std::vector<std::pair<std::string, Shape>> ordered;
            const size_t n = inputs.size();
            if (args.size() == 2 * n) {
                for (size_t k = 0; k < n; ++k) ordered.push_back(args[2 * k]);
                for (size_t k = 0; k < n; ++k) ordered.push_back(args[2 * k + 1]);
            } else {
                ordered = args;
            }
            auto c = computation("reducer" + std::to_string(++m_regions), ordered, s.regions[0].body);
            if (!c) return c.error();
            reducer = *c;
        } else {
            return fail(s, "stablehlo.syntax", "reduce needs `applies <op>` or a reducer region");
        }
        ins.attributes.push_back({"to_apply", reducer});
        return finish(sc, s, std::move(ins), result);
    }
    CFP_TRY(operandsTo(ins, s.operands));
    ins.opcode = opcode;
    const std::string& h = s.header;
    // An attribute under its pretty name or its generic one, as HLO's `hloKey` (a list `{…}`, or an
    // integer, braced when HLO wants a list).
    auto renamed = [&](bool list, const char* pretty, const char* generic, const char* hloKey, bool braces) -> Status {
        auto v = list ? intListAfter(h, pretty) : intAfter(h, pretty);
        if (!v) v = list ? intListAfter(h, generic) : intAfter(h, generic);
        if (!v) return fail(s, "stablehlo.syntax", op + " needs " + pretty + (list ? " = […]" : " = N"));
        ins.attributes.push_back({hloKey, braces ? "{" + *v + "}" : *v});
        return {};
    };
    if (op == "dot_general" || op == "dot") {
        ins.opcode = "dot";
        if (op == "dot") {
            if (s.operands.size() != 2) return fail(s, "stablehlo.syntax", "dot takes two operands");
            auto l = shapeOf(sc, s.operands[0], s);
            if (!l) return l.error();
            ins.attributes.push_back({"lhs_contracting_dims", "{" + std::to_string(static_cast<int64_t>(l->dims.size()) - 1) + "}"});
            ins.attributes.push_back({"rhs_contracting_dims", "{0}"});
        } else {
            if (auto b = pairListAfter(h, "batching_dims")) {
                ins.attributes.push_back({"lhs_batch_dims", b->first});
                ins.attributes.push_back({"rhs_batch_dims", b->second});
            }
            if (auto c = pairListAfter(h, "contracting_dims")) {
                ins.attributes.push_back({"lhs_contracting_dims", c->first});
                ins.attributes.push_back({"rhs_contracting_dims", c->second});
            } else {
                // Generic form: #stablehlo.dot<lhs_batching_dimensions = [0], …>.
                for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
                         {"lhs_batching_dimensions", "lhs_batch_dims"}, {"rhs_batching_dimensions", "rhs_batch_dims"},
                         {"lhs_contracting_dimensions", "lhs_contracting_dims"}, {"rhs_contracting_dimensions", "rhs_contracting_dims"}})
                    if (auto v = intListAfter(h, from)) ins.attributes.push_back({to, *v});
            }
        }
    } else if (op == "broadcast_in_dim") {
        ins.opcode = "broadcast";
        CFP_TRY(renamed(true, "dims", "broadcast_dimensions", "dimensions", false));
    } else if (op == "transpose") {
        CFP_TRY(renamed(true, "dims", "permutation", "dimensions", false));
    } else if (op == "iota") {
        CFP_TRY(renamed(false, "dim", "iota_dimension", "iota_dimension", false));
    } else if (op == "concatenate") {
        CFP_TRY(renamed(false, "dim", "dimension", "dimensions", true));
    } else if (op == "compare") {
        std::string dir;
        for (const std::string& w : s.words)
            if (w == "EQ" || w == "NE" || w == "LT" || w == "LE" || w == "GT" || w == "GE") dir = w;
        if (dir.empty())
            for (const char* d : {"EQ", "NE", "LT", "LE", "GT", "GE"})
                if (h.find(std::string("comparison_direction ") + d) != std::string::npos ||
                    h.find(std::string("comparison_direction  ") + d) != std::string::npos)
                    dir = d;
        if (dir.empty()) return fail(s, "stablehlo.syntax", "compare needs a direction (EQ, NE, LT, LE, GT, GE)");
        ins.attributes.push_back({"direction", dir});
    } else if (op == "slice") {
        std::string ranges = "{";
        const size_t open = h.find('[');
        if (auto st = intListAfter(h, "start_indices")) {
            auto li = intListAfter(h, "limit_indices");
            auto sd = intListAfter(h, "strides");
            auto a = hlo::parseIntList(*st);
            auto b = li ? hlo::parseIntList(*li) : Result<std::vector<int64_t>>(makeError("x", "x"));
            if (!a || !b) return fail(s, "stablehlo.syntax", "slice needs start_indices and limit_indices");
            auto c = sd ? hlo::parseIntList(*sd) : Result<std::vector<int64_t>>(std::vector<int64_t>(a->size(), 1));
            if (!c) return c.error();
            for (size_t k = 0; k < a->size(); ++k)
                ranges += (k ? ", [" : "[") + std::to_string((*a)[k]) + ":" + std::to_string(b->at(k)) + ":" + std::to_string(c->at(k)) + "]";
        } else if (open != std::string::npos) {
            const size_t close = h.find(']', open);
            std::string body = h.substr(open + 1, close - open - 1);
            body.erase(std::remove(body.begin(), body.end(), ' '), body.end());
            size_t start = 0;
            bool first = true;
            while (start <= body.size()) {
                size_t comma = body.find(',', start);
                if (comma == std::string::npos) comma = body.size();
                ranges += (first ? "[" : ", [") + body.substr(start, comma - start) + "]";
                first = false;
                start = comma + 1;
            }
        } else {
            return fail(s, "stablehlo.syntax", "slice needs [start:limit, …]");
        }
        ins.attributes.push_back({"slice", ranges + "}"});
    } else if (op == "pad") {
        // low = [..], high = [..], interior = [..] → padding=l_h_i x …
        auto lo = intListAfter(h, "low"), hi = intListAfter(h, "high"), in = intListAfter(h, "interior");
        if (!lo) lo = intListAfter(h, "edge_padding_low");
        if (!hi) hi = intListAfter(h, "edge_padding_high");
        if (!in) in = intListAfter(h, "interior_padding");
        if (!lo || !hi) return fail(s, "stablehlo.syntax", "pad needs low = […] and high = […]");
        auto l = hlo::parseIntList(*lo), r = hlo::parseIntList(*hi);
        auto i = in ? hlo::parseIntList(*in) : Result<std::vector<int64_t>>(std::vector<int64_t>{});
        if (!l || !r || !i || l->size() != r->size() || (!i->empty() && i->size() != l->size()))
            return fail(s, "stablehlo.syntax", "pad's low, high and interior lists differ in length");
        std::string padding;
        for (size_t k = 0; k < l->size(); ++k) {
            if (k) padding += 'x';
            padding += std::to_string((*l)[k]) + "_" + std::to_string((*r)[k]);
            if (!i->empty() && (*i)[k] != 0) padding += "_" + std::to_string((*i)[k]);
        }
        ins.attributes.push_back({"padding", padding});
    } else if (op == "dynamic_slice") {
        if (auto d = intListAfter(h, "sizes")) ins.attributes.push_back({"dynamic_slice_sizes", *d});
        else if (auto d2 = intListAfter(h, "slice_sizes")) ins.attributes.push_back({"dynamic_slice_sizes", *d2});
    } else if (op == "gather" || op == "scatter") {
        static const char* kKeys[] = {"offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
                                      "start_indices_batching_dims", "update_window_dims", "inserted_window_dims",
                                      "scatter_dims_to_operand_dims", "input_batching_dims", "scatter_indices_batching_dims",
                                      "slice_sizes"};
        // The pretty form leaves empty lists out; HLO needs its dimension lists present.
        static const std::set<std::string> kRequired = {"offset_dims", "collapsed_slice_dims", "start_index_map",
                                                        "update_window_dims", "inserted_window_dims",
                                                        "scatter_dims_to_operand_dims"};
        const bool gather = op == "gather";
        for (const char* key : kKeys) {
            const std::string k(key);
            const bool forGather = k == "offset_dims" || k == "collapsed_slice_dims" || k == "start_index_map";
            if (auto v = intListAfter(h, key)) ins.attributes.push_back({key, *v});
            else if (kRequired.count(k) && forGather == gather) ins.attributes.push_back({key, "{}"});
        }
        if (auto v = intAfter(h, "index_vector_dim")) ins.attributes.push_back({"index_vector_dim", *v});
        if (op == "scatter") {
            if (s.regions.empty()) return fail(s, "stablehlo.syntax", "scatter needs its combiner region");
            auto c = computation("combiner" + std::to_string(++m_regions), s.regions[0].args, s.regions[0].body);
            if (!c) return c.error();
            ins.attributes.push_back({"to_apply", *c});
        }
    } else if (op == "all_reduce") {
        // A psum in a shard_map: replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64> and the
        // combiner region, as HLO's replica_groups={{0,1},{2,3}} and to_apply.
        size_t k = h.find("replica_groups = dense");
        if (k != std::string::npos) k = h.find('<', k);
        if (k != std::string::npos) {
            const size_t end = h.find('>', k + 1);
            std::string groups = h.substr(k + 1, end == std::string::npos ? std::string::npos : end - (k + 1));
            groups.erase(std::remove(groups.begin(), groups.end(), ' '), groups.end());
            std::replace(groups.begin(), groups.end(), '[', '{');
            std::replace(groups.begin(), groups.end(), ']', '}');
            if (groups.rfind("{{", 0) != 0) groups = "{" + groups + "}";  // one group: dense<[0, 1]>
            ins.attributes.push_back({"replica_groups", groups});
        }
        if (s.regions.empty()) return fail(s, "stablehlo.syntax", "all_reduce needs its combiner region");
        auto c = computation("combiner" + std::to_string(++m_regions), s.regions[0].args, s.regions[0].body);
        if (!c) return c.error();
        ins.attributes.push_back({"to_apply", *c});
    } else if (op == "sort") {
        auto d = intAfter(h, "dimension");
        ins.attributes.push_back({"dimensions", "{" + d.value_or("0") + "}"});
        if (!s.regions.empty()) {
            auto c = computation("comparator" + std::to_string(++m_regions), s.regions[0].args, s.regions[0].body);
            if (!c) return c.error();
            ins.attributes.push_back({"to_apply", *c});
        }
    } else if (op == "custom_call") {
        ins.opcode = "custom-call";
        std::string target = s.callee;
        if (target.empty()) {
            const size_t k = h.find("call_target_name = \"");
            if (k != std::string::npos) target = h.substr(k + 20, h.find('"', k + 20) - k - 20);
        }
        ins.attributes.push_back({"custom_call_target", "\"" + target + "\""});
        const size_t bc = h.find("backend_config = \"");
        if (bc != std::string::npos) {  // the header keeps strings escaped as HLO text does
            size_t end = bc + 18;
            while (end < h.size() && h[end] != '"') end += h[end] == '\\' ? 2 : 1;
            ins.attributes.push_back({"backend_config", h.substr(bc + 17, end + 1 - (bc + 17))});
        }
    } else if (op == "optimization_barrier") {
        // Its results are its operands.
        for (size_t k = 0; k < s.operands.size() && k < static_cast<size_t>(std::max<int>(1, s.count)); ++k) {
            const std::string value = s.results.size() > 1 ? s.results[k] : s.count > 1 ? s.results.at(0) + "#" + std::to_string(k) : s.results.at(0);
            auto r = ref(sc, s.operands[k], s);
            auto sh = shapeOf(sc, s.operands[k], s);
            if (!r || !sh) return fail(s, "stablehlo.syntax", "operand not defined");
            define(sc, value, *r, *sh);
        }
        return {};
    } else if (op == "rng_bit_generator") {
        ins.attributes.push_back({"algorithm", "rng_default"});
    } else if (op == "count_leading_zeros") {
        ins.opcode = "clz";
    }
    return finish(sc, s, std::move(ins), result);
}

Result<hlo::Module> Translator::run() {
    m_module.name = "stablehlo";
    const Function* entry = nullptr;
    for (const Function& f : m_fns)
        if (f.name == "main") entry = &f;
    if (!entry)
        for (const Function& f : m_fns)
            if (f.isPublic) {
                if (entry) return makeError("stablehlo.no_entry", "several public functions and none named @main", m_source);
                entry = &f;
            }
    if (!entry) return makeError("stablehlo.no_entry", "no function @main (nor a public one)", m_source);
    // Callees first (any order works: the HLO importer resolves computations by name).
    for (const Function& f : m_fns) {
        if (&f == entry) continue;
        auto c = computation(f.name, f.args, f.body);
        if (!c) return c.error();
    }
    // The entry's parameters take their pytree names where JAX gave them (unique ones only).
    std::set<std::string> seen;
    for (size_t k = 0; k < entry->argNames.size() && k < entry->args.size(); ++k) {
        const std::string& n = entry->argNames[k];
        if (!n.empty() && seen.insert(n).second) m_paramNames[entry->args[k].first] = n;
    }
    auto e = computation(entry->name, entry->args, entry->body);
    m_paramNames.clear();
    if (!e) return e.error();
    for (size_t k = 0; k < m_module.computations.size(); ++k)
        if (m_module.computations[k].name == *e) m_module.entry = static_cast<int32_t>(k);
    hlo::Computation& ec = m_module.computations[static_cast<size_t>(m_module.entry)];
    ec.isEntry = true;
    for (size_t k = 0; k < entry->argShardings.size() && k < ec.instructions.size(); ++k)
        if (!entry->argShardings[k].empty()) ec.instructions[k].attributes.push_back({"sharding", entry->argShardings[k]});
    m_module.name = "jit_" + entry->name;
    return std::move(m_module);
}

}  // namespace

Result<hlo::Module> stableHloToHlo(std::string_view text, const std::string& sourceName) {
    auto toks = lex(text, sourceName);
    if (!toks) return toks.error();
    std::map<std::string, std::string> locs;
    Parser p(std::move(*toks), sourceName);
    auto fns = p.run(locs);
    if (!fns) return fns.error();
    auto module = Translator(*fns, locs, sourceName).run();
    if (!module) return module.error();
    if (!p.moduleName().empty()) module->name = p.moduleName();
    return module;
}

Result<ImportedModel> importStableHloText(std::string_view text, const std::string& sourceName, const ImportOptions& options) {
    if (static_cast<int64_t>(text.size()) > options.maxFileBytes)
        return makeError("stablehlo.too_large", "the file is larger than " + std::to_string(options.maxFileBytes) + " bytes", sourceName);
    auto module = stableHloToHlo(text, sourceName);
    if (!module) return module.error();
    auto out = importHloModule(*module, sourceName, options);
    if (out) out->format = "stablehlo";
    return out;
}

Result<ImportedModel> importStableHloFile(const std::string& path, const ImportOptions& options) {
    auto text = readImportFile(path, options.maxFileBytes, "stablehlo");
    if (!text) return text.error();
    return importStableHloText(*text, path, options);
}

bool looksLikeStableHlo(std::string_view text) {
    const std::string_view head = text.substr(0, std::min<size_t>(text.size(), 1 << 16));
    return (head.find("func.func") != std::string_view::npos || head.find("module @") != std::string_view::npos) &&
           head.find("stablehlo.") != std::string_view::npos;
}

}  // namespace cfp
