// Tests' key to data/user_command.h: a test declares the pipe: commands it runs as the CLI declares what the user
// typed (cli/args.cpp), so streams under test go through the same gate as the program's.
#pragma once
#include <string>

#include "data/user_command.h"

namespace bt::data {
struct TestArguments {
  static TypedByUser key() { return TypedByUser(); }
};
}  // namespace bt::data

namespace bt::test {
// `value` as if the user had typed it; returns it, so a call reads `open(typed("pipe:cat x"))`.
inline std::string typed(const std::string& value) {
  data::declare_user_value(value, data::TestArguments::key());
  return value;
}
}  // namespace bt::test
