// Which `pipe:COMMAND` locations may run: only those the user typed -- a flag on the command line, an args file
// they named, a Python caller's argument. A value read from any file (an index's index.json, a checkpoint, a
// dataset card, a captions row, a parquet field, a shard list, a glob match) is a path or a URL, never a command.
//
// Contract:
//  - UserCommand is the only thing the pipe stream runs (byte_stream.h: open_pipe_stream takes one). Code gets one
//    in two ways only: typed_by_user() with a TypedByUser key, or find_user_command(location), which finds one only
//    for a location a key holder declared typed: the value itself, a top-level comma part of it (--train_file
//    a.tar,pipe:...), or one of their brace expansions (pipe:cat s-{0..9}.tar is ten commands).
//  - TypedByUser's constructor is private. Its friends are the places that read what the user typed: the CLI's
//    argument reader (cli/args.cpp, after the args file is read in), the Python module's loader (python/
//    loader_core.cpp) and tests (tests/common/user_typed.h). `grep -rn TypedByUser src` lists every one.
//  - refuse_command_from(value, file, field): bt::Error "FILE: FIELD 'pipe:...' is a command, and a command read
//    from a file is never run ..." when value is a pipe: location; each reader that takes a location out of a file
//    calls it, so the refusal names the file. The stream refuses an undeclared command anyway (naming it), so a
//    reader that forgets still runs nothing.
//  - Thread-safe; the declared set lives for the process.
#pragma once
#include <optional>
#include <string>

namespace bt::data {

class TypedByUser {
  TypedByUser() = default;
  friend struct CliArguments;     // cli/args.cpp
  friend struct PythonArguments;  // python/loader_core.cpp
  friend struct TestArguments;    // tests/common/user_typed.h
};

class UserCommand {
 public:
  const std::string& location() const { return location_; }  // "pipe:COMMAND"
  std::string command() const { return location_.substr(5); }

 private:
  explicit UserCommand(std::string location) : location_(std::move(location)) {}
  friend UserCommand typed_by_user(std::string location, TypedByUser);
  friend std::optional<UserCommand> find_user_command(const std::string& location);
  std::string location_;
};

// A location the caller holds from the user directly (it need not be declared).
UserCommand typed_by_user(std::string location, TypedByUser);
// Declares what the user typed: every pipe: location in `value` (as a whole, its top-level comma parts, and their
// brace expansions) may run. A value holding no "pipe:" is ignored.
void declare_user_value(const std::string& value, TypedByUser);
// The command for `location` when the user typed it (see declare_user_value), else nullopt.
std::optional<UserCommand> find_user_command(const std::string& location);

bool is_command_location(const std::string& value);  // "pipe:..."
// Throws (naming `file` and `field`) when `value` is a pipe: location; see the contract.
void refuse_command_from(const std::string& value, const std::string& file, const std::string& field);

}  // namespace bt::data
