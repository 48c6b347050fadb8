#pragma once
// Number formatting for people: 174.6 B, 1.23 EFLOP, 3.2 GiB, 1,234,567.

#include <cstdint>
#include <string>

namespace cfp::cli {

std::string withCommas(int64_t n);
std::string fixed(double v, int decimals);
std::string humanCount(double n);   // 125.2 M, 174.6 B
std::string humanBytes(double b);   // 512 B, 3.2 GiB
std::string humanFlops(double f);   // 3.1 TFLOP, 1.2 EFLOP
// `other` seconds against `ours`: "1.34x faster" (other / ours ≥ 1) or "1.06x slower".
std::string speedup(double other, double ours);

}  // namespace cfp::cli
