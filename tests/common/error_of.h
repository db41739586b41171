// The message of the bt::Error a call throws, or "" when it throws none: the helper of the tests that check
// one-line errors (tests in this folder include it as "error_of.h").
#pragma once
#include <functional>
#include <string>

#include "common/error.h"

namespace bt::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const bt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace bt::test
