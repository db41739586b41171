// CLI11's parse errors in the project's words (contract in cli/usage_error.h). CLI11 2.1 gives each error class
// one message format (CLI/Error.hpp); each is taken apart here by its class name, and anything not recognised is
// passed on as CLI11 wrote it, still on one line.
#include "cli/usage_error.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace bt::cli {

namespace {

const CLI::App* given_command(const CLI::App& app) {
  const auto subs = app.get_subcommands();
  return subs.empty() ? nullptr : subs.front();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// What a value of `opt`'s type looks like, from CLI11's type name.
std::string expected_value(const CLI::Option* opt) {
  std::string t = opt ? opt->get_type_name() : "";
  t = t.substr(0, t.find(':'));  // "INT:POSITIVE": the type, then its validators' descriptions
  if (t == "FLOAT") return "a number (e.g. 0.5 or 5e-5)";
  if (t == "INT") return "a whole number";
  if (t == "UINT") return "a whole number >= 0";
  if (t == "BOOLEAN") return "true or false";
  return "a value of type " + (t.empty() ? std::string("TEXT") : t);
}

std::string number_text(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return s;
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// Whether `opt` is checked by CLI::PositiveNumber, whose bound CLI11's message prints as 0.000000 (its type name
// carries the validator's description: "INT:POSITIVE").
bool positive_only(const CLI::Option* opt) {
  const std::string t = opt ? opt->get_type_name() : "";
  return t.find(":POSITIVE") != std::string::npos;
}

// "Value X not in range A to B" (CLI::Range, PositiveNumber, NonNegativeNumber) as the bound it states.
std::string range_text(const CLI::Option* opt, const std::string& flag, const std::string& msg) {
  const std::string head = "Value ", mid = " not in range ", to = " to ";
  const size_t m = msg.find(mid), t = msg.rfind(to);
  if (!starts_with(msg, head) || m == std::string::npos || t == std::string::npos || t < m) return flag + ": " + msg;
  const std::string value = msg.substr(head.size(), m - head.size());
  const std::string lo = msg.substr(m + mid.size(), t - m - mid.size()), hi = msg.substr(t + to.size());
  const double high = std::strtod(hi.c_str(), nullptr);
  std::string bound;
  if (positive_only(opt))
    bound = "must be > 0";
  else if (high > 1e300)
    bound = "must be >= " + number_text(lo);
  else
    bound = "must be between " + number_text(lo) + " and " + number_text(hi);
  return flag + " " + value + ": " + bound;
}

// NAME and the rest of "NAME<sep>rest", or "" when sep is not there.
std::pair<std::string, std::string> split_at(const std::string& s, const std::string& sep) {
  const size_t at = s.find(sep);
  if (at == std::string::npos) return {"", ""};
  return {s.substr(0, at), s.substr(at + sep.size())};
}

std::string conversion_line(const CLI::App* cmd, const std::string& msg) {
  if (starts_with(msg, "Could not convert: ")) {  // "Could not convert: --flag = v1,v2"
    const auto [flag, value] = split_at(msg.substr(19), " = ");
    if (!flag.empty())
      return flag + " " + value + ": not " + expected_value(cmd ? cmd->get_option_no_throw(flag) : nullptr);
  }
  if (starts_with(msg, "The value ")) {  // "The value V is not an allowed value for --flag"
    const auto [value, flag] = split_at(msg.substr(10), " is not an allowed value for ");
    if (!flag.empty()) return flag + " " + value + ": not an allowed value";
  }
  return msg;
}

std::string line_of(const CLI::App* cmd, const std::string& kind, const std::string& msg) {
  if (kind == "ConversionError") return conversion_line(cmd, msg);
  if (kind == "ValidationError") {  // "--flag: validator message"
    const auto [flag, why] = split_at(msg, ": ");
    return flag.empty() ? msg : range_text(cmd ? cmd->get_option_no_throw(flag) : nullptr, flag, why);
  }
  if (kind == "ExcludesError") {  // "--a excludes --b"
    const auto [a, b] = split_at(msg, " excludes ");
    if (!a.empty()) return "give " + a + " or " + b + ", not both";
  }
  if (kind == "RequiresError") {  // "--a requires --b"
    const auto [a, b] = split_at(msg, " requires ");
    if (!a.empty()) return a + " needs " + b + " too";
  }
  if (kind == "RequiredError") {
    if (msg == "A subcommand is required") return "give a command";
    const auto [flag, rest] = split_at(msg, " is required");
    if (!flag.empty()) return flag + " is required";
  }
  if (kind == "ArgumentMismatch") {
    const auto [flag, rest] = split_at(msg, ": ");  // "--flag: 1 required TEXT missing"
    if (!flag.empty() && rest.find(" missing") != std::string::npos) return flag + " needs a value";
    if (starts_with(msg, "Expected ")) return "e" + msg.substr(1);  // "expected exactly 1 arguments to --flag, got 2"
  }
  if (kind == "ExtrasError") {  // "The following argument(s) was/were not expected: a b"
    const auto [head, extras] = split_at(msg, " expected: ");
    if (!extras.empty())
      return "unexpected argument" + std::string(extras.find(' ') != std::string::npos ? "s " : " ") + extras +
             " (a value follows its --flag)";
  }
  return msg;
}

}  // namespace

std::string help_hint(const CLI::App& app) {
  const CLI::App* cmd = given_command(app);
  return cmd ? " (bridgetune " + cmd->get_name() + " --help lists its flags)"
             : " (bridgetune --help lists the commands)";
}

std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e) {
  std::string line = line_of(given_command(app), e.get_name(), e.what());
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return line + help_hint(app);
}

}  // namespace bt::cli
