#pragma once
// Errors as values at module boundaries.
//
// `Result<T>` is shaped like C++23 `std::expected<T, Error>`: it holds either a value or an `Error`.
// An `Error` carries a stable machine-readable code (e.g. "graph.shape_mismatch"), a message for
// people, and where the problem is (a JSON Pointer, "file:line", or an op name). Codes never change
// once published; tests and scripts may match on them.
//
//   Result<int64_t> r = parseDim("12x");
//   if (!r) std::cerr << r.error().toString() << '\n';   // "/nodes/3/shape: ... [json.bad_dim]"

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cfp {

struct Error {
    std::string code;     // stable id, dotted lower-case: "<area>.<what>"
    std::string message;  // one sentence for people, no trailing period needed
    std::string where;    // JSON Pointer, file:line, op name, or empty

    // "where: message [code]" (or "message [code]" without a location).
    std::string toString() const;

    // Returns a copy with `prefix` prepended to `where` (joined with '/' for pointers, ": " otherwise).
    Error withContext(const std::string& prefix) const;
};

Error makeError(std::string code, std::string message, std::string where = {});

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_data(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_data.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<0>(m_data); }
    const T& value() const& { assert(ok()); return std::get<0>(m_data); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(m_data)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

// Result<void>: success or an error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error& error() const { assert(!ok()); return *m_error; }

private:
    // Empty on success: a successful Status (the common case, on every op of a plan) constructs
    // and destroys no strings.
    std::optional<Error> m_error;
};

using Status = Result<void>;

}  // namespace cfp

// Propagates an error from an expression returning Result<...>/Status.
#define CFP_TRY(expr)                                   \
    do {                                                \
        auto&& cfp_try_result_ = (expr);                \
        if (!cfp_try_result_) return cfp_try_result_.error(); \
    } while (0)
