#include "iopddl/json_io.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "io/atomic_file.h"

#ifdef CFP_HAVE_ZLIB
#include <zlib.h>
#endif

namespace cfp::iopddl {

namespace {

// ---- byte sources -------------------------------------------------------------------------------

class Source {
public:
    virtual ~Source() = default;
    // Fills up to `capacity` bytes; 0 at the end. Errors are thrown as ParseFailure by the caller.
    virtual Result<size_t> read(char* buffer, size_t capacity) = 0;
};

class MemorySource final : public Source {
public:
    explicit MemorySource(std::string_view text) : m_text(text) {}
    Result<size_t> read(char* buffer, size_t capacity) override {
        const size_t n = std::min(capacity, m_text.size() - m_pos);
        std::memcpy(buffer, m_text.data() + m_pos, n);
        m_pos += n;
        return n;
    }

private:
    std::string_view m_text;
    size_t m_pos = 0;
};

#ifdef CFP_HAVE_ZLIB
// zlib reads gzip streams and passes plain files through unchanged.
class FileSource final : public Source {
public:
    static Result<std::unique_ptr<FileSource>> open(const std::string& path) {
        FILE* probe = std::fopen(path.c_str(), "rb");
        if (!probe) return makeError("io.open", std::string("cannot open: ") + std::strerror(errno), path);
        std::fclose(probe);
        gzFile f = gzopen(path.c_str(), "rb");
        if (!f) return makeError("io.open", "cannot open", path);
        gzbuffer(f, 1 << 20);
        return std::unique_ptr<FileSource>(new FileSource(f));
    }
    ~FileSource() override { gzclose(m_file); }
    Result<size_t> read(char* buffer, size_t capacity) override {
        const int n = gzread(m_file, buffer, static_cast<unsigned>(std::min<size_t>(capacity, 1u << 30)));
        if (n < 0) {
            int code = 0;
            const char* message = gzerror(m_file, &code);
            return makeError("iopddl.gzip", std::string("corrupt compressed data: ") + (message ? message : "unknown error"));
        }
        return static_cast<size_t>(n);
    }

private:
    explicit FileSource(gzFile f) : m_file(f) {}
    gzFile m_file;
};
#else
class FileSource final : public Source {
public:
    static Result<std::unique_ptr<FileSource>> open(const std::string& path) {
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) return makeError("io.open", std::string("cannot open: ") + std::strerror(errno), path);
        unsigned char magic[2] = {0, 0};
        const size_t got = std::fread(magic, 1, 2, f);
        if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
            std::fclose(f);
            return makeError("iopddl.gzip", "the file is gzip-compressed and this build has no zlib; decompress it first", path);
        }
        std::rewind(f);
        return std::unique_ptr<FileSource>(new FileSource(f));
    }
    ~FileSource() override { std::fclose(m_file); }
    Result<size_t> read(char* buffer, size_t capacity) override {
        const size_t n = std::fread(buffer, 1, capacity, m_file);
        if (n == 0 && std::ferror(m_file)) return makeError("io.read", "read failed");
        return n;
    }

private:
    explicit FileSource(FILE* f) : m_file(f) {}
    FILE* m_file;
};
#endif

// ---- tokenizer ----------------------------------------------------------------------------------

// Thrown inside this file only; the entry points turn it into an Error.
struct ParseFailure {
    Error error;
};

class Lexer {
public:
    explicit Lexer(Source& source) : m_source(source), m_buffer(1 << 20) {}

    // The next byte without consuming it; -1 at the end.
    int peek() {
        if (m_pos == m_len && !refill()) return -1;
        return static_cast<unsigned char>(m_buffer[m_pos]);
    }
    void advance() { ++m_pos; }

    void skipSpace() {
        for (;;) {
            if (m_pos == m_len && !refill()) return;
            const char c = m_buffer[m_pos];
            if (c == '\n') {
                ++m_line;
                m_lineStart = m_consumed + m_pos + 1;
            } else if (c != ' ' && c != '\t' && c != '\r') {
                return;
            }
            ++m_pos;
        }
    }

    // Skips space, then requires `c`.
    void expect(char c, const char* what) {
        skipSpace();
        if (peek() != c) fail(std::string("expected ") + what + ", got " + describeNext());
        advance();
    }

    // Skips space; true (and consumes it) if the next byte is `c`.
    bool accept(char c) {
        skipSpace();
        if (peek() != c) return false;
        advance();
        return true;
    }

    int64_t integer() {
        skipSpace();
        bool negative = false;
        if (peek() == '-') {
            negative = true;
            advance();
        }
        int c = peek();
        if (c < '0' || c > '9') fail(std::string("expected an integer, got ") + describeNext());
        // Accumulate the magnitude as unsigned; INT64_MIN's magnitude is one more than INT64_MAX.
        uint64_t magnitude = 0;
        const uint64_t limit = negative ? uint64_t(std::numeric_limits<int64_t>::max()) + 1 : uint64_t(std::numeric_limits<int64_t>::max());
        int digits = 0;
        while (c >= '0' && c <= '9') {
            const uint64_t d = static_cast<uint64_t>(c - '0');
            if (magnitude > (limit - d) / 10) fail("integer does not fit 64 bits");
            magnitude = magnitude * 10 + d;
            ++digits;
            advance();
            c = peek();
        }
        if (digits > 1 && leadingZero(magnitude, digits)) fail("integer with a leading zero");
        if (c == '.' || c == 'e' || c == 'E') fail("expected an integer, got a fraction or exponent");
        if (negative) return magnitude == limit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
        return static_cast<int64_t>(magnitude);
    }

    std::string string() {
        skipSpace();
        if (peek() != '"') fail("expected a string, got " + describeNext());
        advance();
        std::string out;
        for (;;) {
            const int c = peek();
            if (c < 0) fail("unterminated string");
            advance();
            if (c == '"') return out;
            if (c < 0x20) fail("control character in a string");
            if (c != '\\') {
                out.push_back(static_cast<char>(c));
                continue;
            }
            const int e = peek();
            advance();
            switch (e) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': appendUtf8(out, hex4()); break;
                default: fail("bad escape in a string");
            }
        }
    }

    // Skips one value of any type.
    void skipValue(int depth = 0) {
        if (depth > 512) fail("nesting too deep");
        skipSpace();
        int c = peek();
        if (c == '"') {
            string();
        } else if (c == '{') {
            advance();
            if (accept('}')) return;
            do {
                string();
                expect(':', "':'");
                skipValue(depth + 1);
            } while (accept(','));
            expect('}', "',' or '}'");
        } else if (c == '[') {
            advance();
            if (accept(']')) return;
            do skipValue(depth + 1);
            while (accept(','));
            expect(']', "',' or ']'");
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (c == '-') advance();
            while ((c = peek()) >= 0 && (std::isdigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) advance();
        } else if (c == 't') {
            literal("true");
        } else if (c == 'f') {
            literal("false");
        } else if (c == 'n') {
            literal("null");
        } else {
            fail("expected a value, got " + describeNext());
        }
    }

    // Consumes "null" if it is next.
    bool acceptNull() {
        skipSpace();
        if (peek() != 'n') return false;
        literal("null");
        return true;
    }

    void expectEnd() {
        skipSpace();
        if (peek() >= 0) fail("unexpected " + describeNext() + " after the JSON value");
    }

    [[noreturn]] void fail(const std::string& message) {
        const int64_t column = m_consumed + static_cast<int64_t>(m_pos) - m_lineStart + 1;
        throw ParseFailure{makeError("iopddl.syntax", message, std::to_string(m_line) + ":" + std::to_string(column))};
    }

private:
    bool refill() {
        m_consumed += static_cast<int64_t>(m_len);
        m_pos = 0;
        m_len = 0;
        if (m_eof) return false;
        auto n = m_source.read(m_buffer.data(), m_buffer.size());
        if (!n) throw ParseFailure{n.error()};
        m_len = *n;
        if (m_len == 0) m_eof = true;
        return m_len > 0;
    }

    std::string describeNext() {
        const int c = peek();
        if (c < 0) return "the end of the input";
        if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
        char text[16];
        std::snprintf(text, sizeof text, "byte 0x%02x", c);
        return text;
    }

    static bool leadingZero(uint64_t magnitude, int digits) {
        // A number with `digits` digits starts with '0' exactly when it is below 10^(digits-1).
        uint64_t p = 1;
        for (int i = 1; i < digits; ++i) p *= 10;
        return magnitude < p;
    }

    void literal(const char* word) {
        for (const char* p = word; *p; ++p) {
            if (peek() != *p) fail(std::string("expected '") + word + "'");
            advance();
        }
    }

    unsigned hex4() {
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const int c = peek();
            advance();
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return v;
    }

    void appendUtf8(std::string& out, unsigned cp) {
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate must be followed by a low one.
            if (peek() != '\\') fail("unpaired surrogate in a string");
            advance();
            if (peek() != 'u') fail("unpaired surrogate in a string");
            advance();
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("unpaired surrogate in a string");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        if (cp < 0x80) {
            out.push_back(static_cast<char>(cp));
        } else if (cp < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        } else {
            out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }

    Source& m_source;
    std::vector<char> m_buffer;
    size_t m_pos = 0;
    size_t m_len = 0;
    bool m_eof = false;
    int64_t m_consumed = 0;  // bytes before the buffer's start
    int64_t m_line = 1;
    int64_t m_lineStart = 0;  // offset of the current line's first byte
};

// '{' members '}', calling onMember(key) for each; onMember consumes the value and returns false
// for a member it does not know (which is then skipped). A repeated key is an error.
template <typename F>
void forEachMember(Lexer& lex, F&& onMember) {
    lex.expect('{', "an object");
    if (lex.accept('}')) return;
    std::vector<std::string> seen;
    do {
        std::string key = lex.string();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) lex.fail("member '" + key + "' appears twice in one object");
        lex.expect(':', "':'");
        if (!onMember(key)) lex.skipValue();
        seen.push_back(std::move(key));
    } while (lex.accept(','));
    lex.expect('}', "',' or '}'");
}

// '[' elements ']', calling onElement(index) for each.
template <typename F>
void forEachElement(Lexer& lex, F&& onElement) {
    lex.expect('[', "an array");
    if (lex.accept(']')) return;
    int64_t i = 0;
    do onElement(i++);
    while (lex.accept(','));
    lex.expect(']', "',' or ']'");
}

// An array of arrays of integers appended to `values`, with `begin` (starting {0}) marking rows.
void readRows(Lexer& lex, std::vector<int64_t>& begin, std::vector<int64_t>& values) {
    forEachElement(lex, [&](int64_t) {
        forEachElement(lex, [&](int64_t) { values.push_back(lex.integer()); });
        begin.push_back(static_cast<int64_t>(values.size()));
    });
}

struct RawProblem {
    Problem problem;
    std::vector<int64_t> usageBegin{0};
    bool haveName = false, haveNodes = false, haveEdges = false;
    bool haveIntervals = false, haveCosts = false, haveUsages = false;
    bool haveEdgeNodes = false, haveEdgeCosts = false;
};

void readNodes(Lexer& lex, RawProblem& raw) {
    Problem& p = raw.problem;
    forEachMember(lex, [&](const std::string& key) {
        if (key == "intervals") {
            raw.haveIntervals = true;
            forEachElement(lex, [&](int64_t) {
                lex.expect('[', "an interval [lo, hi]");
                Interval iv;
                iv.lo = lex.integer();
                lex.expect(',', "',' in an interval [lo, hi]");
                iv.hi = lex.integer();
                lex.expect(']', "']' closing an interval [lo, hi]");
                p.intervals.push_back(iv);
            });
            return true;
        }
        if (key == "costs") {
            raw.haveCosts = true;
            readRows(lex, p.strategyBegin, p.nodeCosts);
            return true;
        }
        if (key == "usages") {
            raw.haveUsages = true;
            readRows(lex, raw.usageBegin, p.nodeUsages);
            return true;
        }
        return false;
    });
}

void readEdges(Lexer& lex, RawProblem& raw) {
    Problem& p = raw.problem;
    forEachMember(lex, [&](const std::string& key) {
        if (key == "nodes") {
            raw.haveEdgeNodes = true;
            readRows(lex, p.edgeNodeBegin, p.edgeNodes);
            return true;
        }
        if (key == "costs") {
            raw.haveEdgeCosts = true;
            readRows(lex, p.edgeCostBegin, p.edgeCosts);
            return true;
        }
        return false;
    });
}

Error formatError(std::string message, std::string where) {
    return makeError("iopddl.format", std::move(message), std::move(where));
}

Status checkRaw(RawProblem& raw) {
    Problem& p = raw.problem;
    if (!raw.haveNodes) return formatError("missing member 'nodes'", "/problem");
    if (!raw.haveEdges) return formatError("missing member 'edges'", "/problem");
    if (!raw.haveIntervals) return formatError("missing member 'intervals'", "/problem/nodes");
    if (!raw.haveCosts) return formatError("missing member 'costs'", "/problem/nodes");
    if (!raw.haveUsages) return formatError("missing member 'usages'", "/problem/nodes");
    if (!raw.haveEdgeNodes) return formatError("missing member 'nodes'", "/problem/edges");
    if (!raw.haveEdgeCosts) return formatError("missing member 'costs'", "/problem/edges");
    const size_t n = p.intervals.size();
    if (p.strategyBegin.size() != n + 1)
        return formatError(std::to_string(n) + " intervals but " + std::to_string(p.strategyBegin.size() - 1) + " cost lists", "/problem/nodes/costs");
    if (raw.usageBegin.size() != n + 1)
        return formatError(std::to_string(n) + " intervals but " + std::to_string(raw.usageBegin.size() - 1) + " usage lists", "/problem/nodes/usages");
    for (size_t i = 0; i < n; ++i)
        if (raw.usageBegin[i + 1] != p.strategyBegin[i + 1])
            return formatError("node " + std::to_string(i) + " has " + std::to_string(p.strategyCount(static_cast<int64_t>(i))) + " costs but " +
                                   std::to_string(raw.usageBegin[i + 1] - raw.usageBegin[i]) + " usages",
                               "/problem/nodes/usages/" + std::to_string(i));
    if (p.edgeCostBegin.size() != p.edgeNodeBegin.size())
        return formatError(std::to_string(p.edgeNodeBegin.size() - 1) + " edges but " + std::to_string(p.edgeCostBegin.size() - 1) + " cost lists",
                           "/problem/edges/costs");
    return validateProblem(p);
}

Result<Problem> parseFrom(Source& source) {
    RawProblem raw;
    try {
        Lexer lex(source);
        bool haveProblem = false;
        forEachMember(lex, [&](const std::string& key) {
            if (key != "problem") return false;
            haveProblem = true;
            forEachMember(lex, [&](const std::string& member) {
                if (member == "name") {
                    raw.problem.name = lex.string();
                    raw.haveName = true;
                } else if (member == "nodes") {
                    raw.haveNodes = true;
                    readNodes(lex, raw);
                } else if (member == "edges") {
                    raw.haveEdges = true;
                    readEdges(lex, raw);
                } else if (member == "usage_limit") {
                    if (!lex.acceptNull()) raw.problem.usageLimit = lex.integer();
                } else {
                    return false;
                }
                return true;
            });
            return true;
        });
        lex.expectEnd();
        if (!haveProblem) return formatError("missing member 'problem'", "");
    } catch (const ParseFailure& f) {
        return f.error;
    }
    if (auto st = checkRaw(raw); !st) return st.error();
    return std::move(raw.problem);
}

Error atPath(const Error& e, const std::string& path) {
    Error out = e;
    out.where = e.where.empty() ? path : (e.where == path ? path : path + ":" + (e.where.front() == '/' ? " " : "") + e.where);
    return out;
}

}  // namespace

Status validateProblem(const Problem& p) {
    const int64_t n = p.nodeCount();
    if (static_cast<int64_t>(p.strategyBegin.size()) != n + 1 || p.nodeUsages.size() != p.nodeCosts.size())
        return formatError("strategy offsets do not match the node count", "/problem/nodes");
    for (int64_t i = 0; i < n; ++i) {
        if (p.strategyCount(i) < 1) return formatError("node " + std::to_string(i) + " has no strategies", "/problem/nodes/costs/" + std::to_string(i));
        const Interval iv = p.intervals[static_cast<size_t>(i)];
        if (iv.lo < 0 || iv.hi < 0)
            return formatError("node " + std::to_string(i) + " has a negative time in its interval", "/problem/nodes/intervals/" + std::to_string(i));
    }
    const int64_t e = p.edgeCount();
    for (int64_t k = 0; k < e; ++k) {
        const auto ends = p.edgeEnds(k);
        if (ends.empty()) return formatError("edge " + std::to_string(k) + " joins no nodes", "/problem/edges/nodes/" + std::to_string(k));
        int64_t product = 1;
        for (size_t j = 0; j < ends.size(); ++j) {
            if (ends[j] < 0 || ends[j] >= n)
                return formatError("edge " + std::to_string(k) + " names node " + std::to_string(ends[j]) + ", not in 0.." + std::to_string(n - 1),
                                   "/problem/edges/nodes/" + std::to_string(k) + "/" + std::to_string(j));
            const int64_t kj = p.strategyCount(ends[j]);
            if (product > std::numeric_limits<int64_t>::max() / kj)
                return formatError("edge " + std::to_string(k) + " has too many strategy combinations", "/problem/edges/costs/" + std::to_string(k));
            product *= kj;
        }
        const int64_t have = static_cast<int64_t>(p.edgeCostTable(k).size());
        if (have != product)
            return formatError("edge " + std::to_string(k) + " has " + std::to_string(have) + " costs, expected " + std::to_string(product) +
                                   " (the product of its nodes' strategy counts)",
                               "/problem/edges/costs/" + std::to_string(k));
    }
    return {};
}

Result<Problem> parseProblem(std::string_view text) {
    MemorySource source(text);
    return parseFrom(source);
}

Result<Problem> readProblemFile(const std::string& path) {
    auto source = FileSource::open(path);
    if (!source) return source.error();
    auto problem = parseFrom(**source);
    if (!problem) return atPath(problem.error(), path);
    return problem;
}

namespace {

void appendRow(std::string& out, std::span<const int64_t> row) {
    out.push_back('[');
    for (size_t i = 0; i < row.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(row[i]);
    }
    out.push_back(']');
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else {
            out.push_back(ch);
        }
    }
    return out + "\"";
}

template <typename Row>
void appendRows(std::string& out, const char* key, int64_t count, Row row, bool last) {
    out += "      \"";
    out += key;
    out += "\": [";
    for (int64_t i = 0; i < count; ++i) {
        out += i ? ",\n        " : "\n        ";
        appendRow(out, row(i));
    }
    out += count ? "\n      ]" : "]";
    out += last ? "\n" : ",\n";
}

#ifdef CFP_HAVE_ZLIB
Result<std::string> gzipCompress(std::string_view bytes) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return makeError("iopddl.gzip", "cannot start compression");
    std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    const size_t written = out.size() - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return makeError("iopddl.gzip", "compression failed");
    out.resize(written);
    return out;
}
#endif

}  // namespace

std::string problemToJson(const Problem& p) {
    std::string out = "{\n  \"problem\": {\n    \"name\": " + jsonString(p.name) + ",\n    \"nodes\": {\n";
    const int64_t n = p.nodeCount();
    int64_t pair[2] = {0, 0};
    appendRows(out, "intervals", n, [&](int64_t i) {
        pair[0] = p.intervals[static_cast<size_t>(i)].lo;
        pair[1] = p.intervals[static_cast<size_t>(i)].hi;
        return std::span<const int64_t>(pair, 2);
    }, false);
    appendRows(out, "costs", n, [&](int64_t i) { return p.costs(i); }, false);
    appendRows(out, "usages", n, [&](int64_t i) { return p.usages(i); }, true);
    out += "    },\n    \"edges\": {\n";
    appendRows(out, "nodes", p.edgeCount(), [&](int64_t k) { return p.edgeEnds(k); }, false);
    appendRows(out, "costs", p.edgeCount(), [&](int64_t k) { return p.edgeCostTable(k); }, true);
    out += "    }";
    if (p.usageLimit) out += ",\n    \"usage_limit\": " + std::to_string(*p.usageLimit);
    out += "\n  }\n}\n";
    return out;
}

Status writeProblemFile(const std::string& path, const Problem& problem) {
    const std::string text = problemToJson(problem);
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
#ifdef CFP_HAVE_ZLIB
        auto packed = gzipCompress(text);
        if (!packed) return packed.error().withContext(path);
        return writeFileAtomically(path, *packed);
#else
        return makeError("iopddl.gzip", "this build has no zlib; write a .json file instead", path);
#endif
    }
    return writeFileAtomically(path, text);
}

Result<Solution> parseSolution(std::string_view text) {
    // The contest's reference program prints "Solution: [..]"; accept that line as it is.
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text.substr(first).starts_with("Solution:")) text.remove_prefix(first + 9);
    MemorySource source(text);
    Solution s;
    try {
        Lexer lex(source);
        forEachElement(lex, [&](int64_t) { s.push_back(lex.integer()); });
        lex.expectEnd();
    } catch (const ParseFailure& f) {
        Error e = f.error;
        e.code = "iopddl.solution";
        e.message = "not a JSON array of strategy indices: " + e.message;
        return e;
    }
    return s;
}

Result<Solution> readSolutionFile(const std::string& path) {
    auto text = readFileLimited(path, int64_t(1) << 32);
    if (!text) return text.error();
    auto s = parseSolution(*text);
    if (!s) return atPath(s.error(), path);
    return s;
}

std::string solutionToJson(const Solution& solution) {
    std::string out = "[";
    for (size_t i = 0; i < solution.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(solution[i]);
    }
    return out + "]\n";
}

Status writeSolutionFile(const std::string& path, const Solution& solution) {
    return writeFileAtomically(path, solutionToJson(solution));
}

}  // namespace cfp::iopddl
