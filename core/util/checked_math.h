#pragma once
// Overflow-checked integer arithmetic for sizes. A crafted shape (e.g. dims of 2^40 x 2^40) must
// be rejected, never wrap around into a small number.

#include <cstdint>
#include <optional>
#include <span>

namespace cfp {

// Largest element count or byte size any tensor may have (2^62): leaves head-room so that sums of
// a few sizes cannot overflow int64 either.
inline constexpr int64_t kMaxTensorSize = int64_t{1} << 62;

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
    int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out) || out > kMaxTensorSize) return std::nullopt;
    return out;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
    int64_t out = 0;
    if (__builtin_add_overflow(a, b, &out) || out > kMaxTensorSize) return std::nullopt;
    return out;
}

// Product of non-negative dims, or nullopt if any is negative or the product exceeds kMaxTensorSize.
inline std::optional<int64_t> checkedProduct(std::span<const int64_t> dims) {
    int64_t out = 1;
    for (int64_t d : dims) {
        if (d < 0) return std::nullopt;
        auto next = checkedMul(out, d);
        if (!next) return std::nullopt;
        out = *next;
    }
    return out;
}

}  // namespace cfp
