#pragma once
// Test helper: the value of a Result that the test's own fixed input must produce; anything else
// aborts the test with the error (a broken fixture, not a finding).

#include <QtGlobal>
#include <string>
#include <utility>

#include "util/result.h"

namespace cfp::test {

template <typename T>
T must(Result<T> result, const std::string& what) {
    if (!result) qFatal("%s: %s", what.c_str(), result.error().toString().c_str());
    return std::move(result).value();
}

}  // namespace cfp::test
