#pragma once
// Test helper: two doubles equal up to a relative tolerance (with a floor for values near zero).

#include <algorithm>
#include <cmath>

namespace cfp::test {

inline bool close(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max({1e-12, std::abs(a), std::abs(b)}); }

}  // namespace cfp::test
