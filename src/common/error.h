// bt::Error is the one exception type that crosses module boundaries. Its message is meant to be shown to
// the user as-is on one line: it names the file (or flag) at fault and what to fix.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace bt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run that stopped on request (a preemption signal) after saving what it had: main prints the message and exits
// with exit_code (128 + the signal, as a shell reports a process the signal ended).
class StopRequested : public Error {
 public:
  StopRequested(const std::string& message, int exit_code) : Error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Concatenate anything streamable: bt::str("file ", path, ": bad header").
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(bt::str(args...));
}

}  // namespace bt
