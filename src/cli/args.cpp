#include "cli/args.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_gate.h"
#include "data/user_command.h"

namespace bt::data {
// The command line's key to data/user_command.h: what normalize_args reads is what the user typed (argv, and the
// args file argv names).
struct CliArguments {
  static TypedByUser key() { return TypedByUser(); }
};
}  // namespace bt::data

namespace bt::cli {

namespace {

constexpr std::uintmax_t kMaxArgsFileBytes = 1 << 20;

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_bool_word(const std::string& s) {
  static const std::vector<std::string> words{"true", "false", "1", "0", "on", "off", "yes", "no"};
  return std::find(words.begin(), words.end(), lower(s)) != words.end();
}

std::string read_args_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail(path, ": args file not found");
  if (!fs::is_regular_file(st)) fail(path, ": args file is not a regular file");
  return read_small_file(path, kMaxArgsFileBytes);
}

// One flag group from a scalar or list value.
void add_flag(std::vector<std::string>& out, const std::string& path, const std::string& key,
              const nlohmann::json& v) {
  const std::string flag = "--" + key;
  if (key.find('\0') != std::string::npos) fail(path, ": a key holds a NUL byte");
  auto scalar = [&](const nlohmann::json& x) -> std::string {
    // A NUL would cut the value wherever it becomes a C string (a folder created under the cut name).
    if (x.is_string() && x.get_ref<const std::string&>().find('\0') != std::string::npos)
      fail(path, ": the value of '", key, "' holds a NUL byte");
    if (x.is_string()) return x.get<std::string>();
    if (x.is_boolean()) return x.get<bool>() ? "true" : "false";
    if (x.is_number()) return x.dump();
    fail(path, ": value of '", key, "' must be a string, number, boolean or a list of them");
  };
  if (v.is_null()) return;  // HF writes null for "not set"
  if (v.is_boolean()) {
    out.push_back(flag + "=" + scalar(v));
  } else if (v.is_array()) {
    if (v.empty()) return;
    out.push_back(flag);
    for (const auto& x : v) out.push_back(scalar(x));
  } else {
    out.push_back(flag);
    out.push_back(scalar(v));
  }
}

std::vector<std::string> json_flags(const std::string& path, const std::string& text) {
  nlohmann::json j;
  try {
    // Depth is checked while parsing: an args file is one object of scalars and lists.
    j = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > 2) fail(path, ": args file nests deeper than an object of lists");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  if (!j.is_object()) fail(path, ": an args file must be a JSON object of flag names to values");
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) add_flag(out, path, k, v);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// A YAML scalar as JSON: quoted strings stay strings, true/false are booleans, numbers numbers, null null.
nlohmann::json yaml_scalar(const std::string& raw) {
  const std::string s = trim(raw);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  const std::string l = lower(s);
  if (l == "true") return true;
  if (l == "false") return false;
  if (l.empty() || l == "null" || l == "~") return nullptr;
  const auto number = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
  return number.is_number() ? number : nlohmann::json(s);
}

// The flat subset HF args files use: `key: value`, `key: [a, b]`, `key:` + `- item` lines, `#` comments.
std::vector<std::string> yaml_flags(const std::string& path, const std::string& text) {
  std::istringstream in(text);
  std::string line, key;
  nlohmann::json obj = nlohmann::json::object();
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto hash = line.find(" #");
    if (hash != std::string::npos) line.resize(hash);
    if (trim(line).empty() || trim(line)[0] == '#' || trim(line) == "---") continue;
    const std::string t = trim(line);
    if (t.rfind("- ", 0) == 0 || t == "-") {
      if (key.empty() || !obj[key].is_array()) fail(path, ":", n, ": a list item outside a `key:` list");
      obj[key].push_back(yaml_scalar(t.size() > 1 ? t.substr(2) : ""));
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') fail(path, ":", n, ": nested YAML is not an args file");
    const auto colon = line.find(':');
    if (colon == std::string::npos) fail(path, ":", n, ": expected `key: value`");
    key = trim(line.substr(0, colon));
    const std::string v = trim(line.substr(colon + 1));
    if (v.empty()) {
      obj[key] = nlohmann::json::array();
    } else if (v.front() == '[' && v.back() == ']') {
      nlohmann::json a = nlohmann::json::array();
      std::stringstream items(v.substr(1, v.size() - 2));
      for (std::string it; std::getline(items, it, ',');)
        if (!trim(it).empty()) a.push_back(yaml_scalar(it));
      obj[key] = a;
    } else if (v.front() == '{') {
      fail(path, ":", n, ": nested YAML is not an args file");
    } else {
      obj[key] = yaml_scalar(v);
    }
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : obj.items()) add_flag(out, path, k, v);
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

const CLI::Option* find_long(const CLI::App& app, const std::string& flag) {
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames())
      if ("--" + n == flag) return o;
  return nullptr;
}

// A list for a flag that takes one value, in an args file (`path`) or on the command line (path ""): one short line
// (CLI11 would echo every extra item: 100,000 of them made a 200 KB line). Stops at "--".
void check_single_values(const CLI::App& sub, const std::vector<std::string>& flags, const std::string& path) {
  for (size_t i = 0; i < flags.size() && flags[i] != "--"; ++i) {
    if (flags[i].rfind("--", 0) != 0) continue;
    size_t values = 0;
    while (i + 1 + values < flags.size() && flags[i + 1 + values].rfind("--", 0) != 0) ++values;
    const CLI::Option* o = find_long(sub, flags[i].substr(0, flags[i].find('=')));
    if (!o || values <= 1 || o->get_items_expected_max() > 1) continue;
    if (!path.empty()) fail(path, ": '", flags[i].substr(2), "' takes one value; the file gives a list of ", values);
    fail(flags[i].substr(0, std::min<size_t>(flags[i].find('='), 100)), " takes one value; the command line gives ",
         values, " after it");
  }
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& k : known) {
    const size_t d = edit_distance(name, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best_d != std::string::npos && best_d <= std::max<size_t>(2, name.size() / 3) ? best : "";
}

std::vector<std::string> args_file_flags(const std::string& path) {
  return args_text_flags(read_args_file(path), !ends_with(lower(path), ".json"), path);
}

std::vector<std::string> args_text_flags(const std::string& text, bool yaml, const std::string& what) {
  return yaml ? yaml_flags(what, text) : json_flags(what, text);
}

std::vector<std::string> normalize_args(CLI::App& app, std::vector<std::string> args) {
  if (args.empty() || args[0].rfind("-", 0) == 0) return args;  // --help, --version: CLI11's own
  std::vector<std::string> commands;
  CLI::App* sub = nullptr;
  for (CLI::App* s : app.get_subcommands({})) {
    commands.push_back(s->get_name());
    if (s->get_name() == args[0]) sub = s;
  }
  if (!sub) {
    const std::string near = closest_name(args[0], commands);
    std::string list;
    for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
    fail("unknown command '", args[0], "'", near.empty() ? "" : " (did you mean '" + near + "'?)",
         "; commands: ", list);
  }
  // args[1] an args file: its flags first, so the command line's own flags (after it) win. Commands with a
  // positional argument of their own (preprocess IMAGE) take none.
  const auto opts = sub->get_options();
  const bool has_positional = std::any_of(opts.begin(), opts.end(), [](const CLI::Option* o) {
    return !o->nonpositional();
  });
  if (!has_positional && args.size() > 1 && args[1].rfind("-", 0) != 0) {
    const std::string l = lower(args[1]);
    if (ends_with(l, ".json") || ends_with(l, ".yaml") || ends_with(l, ".yml")) {
      auto flags = args_file_flags(args[1]);
      check_single_values(*sub, flags, args[1]);
      args.erase(args.begin() + 1);
      args.insert(args.begin() + 1, flags.begin(), flags.end());
    }
  }
  if (!has_positional) check_single_values(*sub, args, "");
  for (CLI::Option* o : sub->get_options({}))
    if (o->get_items_expected_max() <= 1) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  const std::vector<std::string> known = long_names(*sub);
  std::vector<std::string> out{args[0]};
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (a.rfind("--", 0) != 0) {
      out.push_back(a);
      continue;
    }
    const std::string name = a.substr(0, a.find('='));
    const CLI::Option* o = find_long(*sub, name);
    if (!o) {
      const std::string near = closest_name(name, known);
      fail("unknown flag ", name, " for `bridgetune ", args[0], "`", near.empty() ? "" : " (did you mean " + near + "?)",
           "; see bridgetune ", args[0], " --help");
    }
    const bool is_flag = o->get_expected_max() == 0;  // a flag takes no separate value in CLI11
    if (is_flag && name == a && i + 1 < args.size() && is_bool_word(args[i + 1])) {
      out.push_back(a + "=" + lower(args[++i]));
      continue;
    }
    out.push_back(a);
  }
  // Every value here was typed by the user: a pipe: command among them may run (data/user_command.h).
  for (const std::string& a : out) {
    data::declare_user_value(a, data::CliArguments::key());
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos)
      data::declare_user_value(a.substr(a.find('=') + 1), data::CliArguments::key());
  }
  return out;
}

}  // namespace bt::cli
