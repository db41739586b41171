// The pipe: commands the user typed (see user_command.h).
#include "data/user_command.h"

#include <mutex>
#include <unordered_set>
#include <vector>

#include "common/error.h"
#include "common/terminal.h"
#include "data/shard_stream.h"

namespace bt::data {

namespace {

struct Declared {
  std::mutex mu;
  std::unordered_set<std::string> locations;
};

Declared& declared() {
  static Declared* d = new Declared();  // never destroyed: streams may still look it up while the process exits
  return *d;
}

// `value` and its parts at top-level commas (outside {a,b} braces), as split_train_files cuts --train_file.
std::vector<std::string> parts_of(const std::string& value) {
  std::vector<std::string> out{value};
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= value.size(); ++i) {
    if (i < value.size() && value[i] == '{') ++depth;
    else if (i < value.size() && value[i] == '}') --depth;
    else if (i == value.size() || (value[i] == ',' && depth == 0)) {
      if (start > 0 || i < value.size()) out.push_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

bool is_command_location(const std::string& value) { return value.rfind("pipe:", 0) == 0; }

UserCommand typed_by_user(std::string location, TypedByUser) { return UserCommand(std::move(location)); }

void declare_user_value(const std::string& value, TypedByUser) {
  if (value.find("pipe:") == std::string::npos) return;
  std::vector<std::string> found;
  for (const std::string& part : parts_of(value)) {
    if (!is_command_location(part)) continue;
    found.push_back(part);
    try {  // the expansions the shard reader will open (at most 1,000,000; past that it refuses the pattern itself)
      for (std::string& e : expand_braces(part)) found.push_back(std::move(e));
    } catch (const Error&) {
    }
  }
  Declared& d = declared();
  std::lock_guard lock(d.mu);
  for (std::string& f : found) d.locations.insert(std::move(f));
}

std::optional<UserCommand> find_user_command(const std::string& location) {
  Declared& d = declared();
  std::lock_guard lock(d.mu);
  if (!is_command_location(location) || !d.locations.count(location)) return std::nullopt;
  return UserCommand(location);
}

void refuse_command_from(const std::string& value, const std::string& file, const std::string& field) {
  if (!is_command_location(value)) return;
  fail(file, ": ", field, " '", clip_name(value, 120), "' is a pipe: command, and a command read from a file is never "
       "run (only one you type: pass the data with a flag, e.g. --data, yourself)");
}

}  // namespace bt::data
