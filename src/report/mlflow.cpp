// MLflow's local file store, written as mlflow's FileStore writes it (contract in report/mlflow.h).
#include "report/mlflow.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/json.h"

namespace bt::report {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxParamValueLength = 6000;  // mlflow.utils.validation.MAX_PARAM_VAL_LENGTH
constexpr size_t kMaxKeyLength = 250;          // MAX_ENTITY_KEY_LENGTH

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Random bits from the OS: two bridgetune runs started in the same millisecond still get different ids.
uint64_t random_u64() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ uint64_t(rd());
}

std::string hex32() {  // uuid.uuid4().hex: version 4, RFC 4122 variant
  uint64_t hi = random_u64(), lo = random_u64();
  hi = (hi & ~0xF000ull) | 0x4000ull;
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)hi, (unsigned long long)lo);
  return buf;
}

std::string user_name() {  // Python's getpass.getuser()
  for (const char* v : {"LOGNAME", "USER", "LNAME", "USERNAME"})
    if (const std::string u = env(v); !u.empty()) return u;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
  return "unknown";
}

std::string program_name() {  // sys.argv[0], what mlflow records as mlflow.source.name
  try {
    const std::string cmdline = read_small_file("/proc/self/cmdline", 1 << 20);
    if (const std::string first = cmdline.substr(0, cmdline.find('\0')); !first.empty()) return first;
  } catch (const Error&) {
  }
  return "bridgetune";
}

// ---- YAML: the flat mappings of meta.yaml ------------------------------------------------------------------

// A string PyYAML reads back as this same string when written bare: no indicator, number, bool or null look-alike
// (quoting more than PyYAML would is harmless; quoting less would turn an id like 0123 into an int).
bool plain_ok(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return false;
  if (!std::isalpha(uint8_t(s[0])) && s[0] != '_' && s[0] != '/') return false;  // digits, indicators, signs
  for (char c : s)
    if (!std::isalnum(uint8_t(c)) && !std::strchr("_-./: @", c)) return false;
  if (s.find(": ") != std::string::npos || s.back() == ':') return false;
  std::string lower;
  for (char c : s) lower += char(std::tolower(uint8_t(c)));
  for (const char* word : {"y", "n", "yes", "no", "true", "false", "on", "off", "null"})
    if (lower == word) return false;
  return true;
}

std::string yaml_scalar(const std::string& s) {
  if (plain_ok(s)) return s;
  bool printable = true;
  for (char c : s) printable = printable && (uint8_t(c) >= 0x20 && c != 0x7f);
  if (printable) {  // single-quoted, as PyYAML writes '0' or ''
    std::string out = "'";
    for (char c : s) out += c == '\'' ? "''" : std::string(1, c);
    return out + "'";
  }
  // Control characters: a double-quoted scalar; JSON's escapes are YAML's.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string yaml_unquote(const std::string& raw) {
  if (raw.size() >= 2 && raw.front() == '\'' && raw.back() == '\'') {
    std::string out;
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      out += raw[i];
      if (raw[i] == '\'' && raw[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    const nlohmann::json j = try_parse_json(raw);
    return j.is_string() ? j.get<std::string>() : raw.substr(1, raw.size() - 2);
  }
  return raw;
}

// The top-level `key: value` pairs of a flat YAML mapping, values decoded; a continuation line (PyYAML folds long
// scalars) joins its value with a space.
std::map<std::string, std::string> read_flat_yaml(const fs::path& path) {
  std::map<std::string, std::string> raw;
  std::istringstream in(read_small_file(path.string()));
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == ' ' && !last.empty()) {
      raw[last] += " " + line.substr(line.find_first_not_of(' '));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    last = line.substr(0, colon);
    const size_t v = line.find_first_not_of(' ', colon + 1);
    raw[last] = v == std::string::npos ? "" : line.substr(v);
  }
  for (auto& [k, v] : raw) v = yaml_unquote(v);
  return raw;
}

std::string yaml_of(const std::map<std::string, std::string>& fields) {  // values already YAML; keys sorted
  std::string out;
  for (const auto& [k, v] : fields) out += k + ": " + v + "\n";
  return out;
}

// ---- paths and URIs ----------------------------------------------------------------------------------------

std::string file_uri(const fs::path& abs) {  // pathlib's as_uri(): everything but unreserved characters and '/' quoted
  std::string out = "file://";
  for (char c : abs.string()) {
    if (std::isalnum(uint8_t(c)) || std::strchr("_.-~/", c)) out += c;
    else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", unsigned(uint8_t(c)));
      out += buf;
    }
  }
  return out;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(uint8_t(s[i + 1])) && std::isxdigit(uint8_t(s[i + 2]))) {
      out += char(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// MLFLOW_TRACKING_URI as mlflow's local_file_uri_to_path reads it: file:///abs, file:rel, file://host/abs, a path.
fs::path store_root(const std::string& uri) {
  if (uri.empty()) return fs::absolute("mlruns");
  const size_t colon = uri.find(':');
  bool has_scheme = colon != std::string::npos && colon > 1 && std::isalpha(uint8_t(uri[0]));
  for (size_t i = 0; has_scheme && i < colon; ++i)
    has_scheme = std::isalnum(uint8_t(uri[i])) || std::strchr("+.-", uri[i]);
  if (!has_scheme) return fs::absolute(uri);
  if (uri.compare(0, colon, "file") != 0)
    fail("MLFLOW_TRACKING_URI=", uri, ": bridgetune writes MLflow's local file store only (file:PATH or a path); ",
         "a tracking server can serve that folder: mlflow server --backend-store-uri file:PATH");
  std::string path = uri.substr(colon + 1);
  if (path.rfind("//", 0) == 0) path = path.substr(std::min(path.size(), path.find('/', 2)));  // drop the host
  if (path.empty()) fail("MLFLOW_TRACKING_URI=", uri, ": names no folder");
  return fs::absolute(percent_decode(path));
}

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(dir.string(), ": cannot create the MLflow folder: ", ec.message());
}

// ---- experiments -------------------------------------------------------------------------------------------

void write_experiment(const fs::path& root, const std::string& id, const std::string& name) {
  const std::string now = std::to_string(mlflow_now_ms());
  make_dirs(root / id);
  write_file_atomic(root / id / "meta.yaml", yaml_of({{"artifact_location", file_uri(root / id)},
                                                      {"creation_time", now},
                                                      {"experiment_id", yaml_scalar(id)},
                                                      {"last_update_time", now},
                                                      {"lifecycle_stage", "active"},
                                                      {"name", yaml_scalar(name)}}));
}

// The store's folders: .trash/ and experiment 0 "Default" where there is none (neither active nor deleted).
void ensure_store(const fs::path& root) {
  make_dirs(root / ".trash");
  std::error_code ec;
  if (!fs::exists(root / "0", ec) && !fs::exists(root / ".trash" / "0", ec)) write_experiment(root, "0", "Default");
}

// The id of the active experiment called `name`, created when there is none.
std::string experiment_named(const fs::path& root, const std::string& name) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path meta = entry.path() / "meta.yaml";
    const std::string dir = entry.path().filename().string();
    if (dir == ".trash" || dir == "models" || !fs::is_regular_file(meta, ec)) continue;
    const auto fields = read_flat_yaml(meta);
    auto at = [&](const char* k) { return fields.count(k) ? fields.at(k) : std::string(); };
    if (at("name") == name && at("lifecycle_stage") != "deleted") return dir;
  }
  const std::string id = std::to_string(random_u64() & 0x7FFFFFFFFFFFFFFFull);  // _generate_unique_integer_id
  write_experiment(root, id, name);
  return id;
}

}  // namespace

// ---- the public helpers ------------------------------------------------------------------------------------

int64_t mlflow_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);  // shortest: d.ddde±XX
  const std::string sci(buf, res.ptr);
  const size_t e = sci.find('e');
  const bool neg = sci[0] == '-';
  std::string digits;
  for (size_t i = neg ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  const int exp = std::stoi(sci.substr(e + 1));
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 16) {  // repr's switch to exponent form
    out += digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char ex[16];  // "e-308" fits in 8; 16 because gcc cannot see that the exponent has at most 3 digits
    std::snprintf(ex, sizeof ex, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + ex;
  }
  if (exp < 0) return out + "0." + std::string(size_t(-exp - 1), '0') + digits;
  if (digits.size() <= size_t(exp) + 1) return out + digits + std::string(size_t(exp) + 1 - digits.size(), '0') + ".0";
  return out + digits.substr(0, size_t(exp) + 1) + "." + digits.substr(size_t(exp) + 1);
}

std::string mlflow_key(const std::string& key) {
  std::string out;
  for (char c : key.substr(0, kMaxKeyLength)) out += std::isalnum(uint8_t(c)) || std::strchr("_-. /", c) ? c : '_';
  // No segment may be empty, "." or "..": the name must stay the file it names (mlflow's path_not_unique).
  std::string safe, seg;
  auto flush = [&](bool last) {
    safe += (seg.empty() || seg == "." || seg == "..") ? "_" : seg;
    if (!last) safe += '/';
    seg.clear();
  };
  for (char c : out) {
    if (c == '/') flush(false);
    else seg += c;
  }
  flush(true);
  return safe;
}

MlflowTarget mlflow_target_from_env() {
  MlflowTarget t;
  t.root = store_root(env("MLFLOW_TRACKING_URI"));
  t.experiment_name = env("MLFLOW_EXPERIMENT_NAME");
  t.experiment_id = env("MLFLOW_EXPERIMENT_ID");
  t.run_id = env("MLFLOW_RUN_ID");
  for (char c : t.run_id)
    if (!std::isalnum(uint8_t(c)) && c != '_' && c != '-') fail("MLFLOW_RUN_ID=", t.run_id, ": not an MLflow run id");
  for (char c : t.experiment_id)
    if (!std::isalnum(uint8_t(c)) && c != '_' && c != '-')
      fail("MLFLOW_EXPERIMENT_ID=", t.experiment_id, ": not an MLflow experiment id");
  if (const std::string tags = env("MLFLOW_TAGS"); !tags.empty()) {
    const nlohmann::json j = parse_json_text(tags, "MLFLOW_TAGS");
    if (!j.is_object()) fail("MLFLOW_TAGS: not a JSON object of tags (", tags, ")");
    for (const auto& [k, v] : j.items()) t.tags[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  return t;
}

// ---- the run -----------------------------------------------------------------------------------------------

namespace {

// An existing run's folder (MLFLOW_RUN_ID), searched in every active experiment as FileStore's _find_run_root.
fs::path find_run(const fs::path& root, const std::string& run_id) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string dir = entry.path().filename().string();
    if (dir != ".trash" && fs::is_regular_file(entry.path() / run_id / "meta.yaml", ec)) return entry.path() / run_id;
  }
  fail("MLFLOW_RUN_ID=", run_id, ": no such run in ", root.string());
}

}  // namespace

MlflowRun::MlflowRun(const MlflowTarget& target, const std::string& run_name) : root_(target.root) {
  ensure_store(root_);
  user_ = user_name();
  if (!target.run_id.empty()) {  // reattach (HF: MLFLOW_RUN_ID, for a resumed training)
    run_dir_ = find_run(root_, target.run_id);
    const auto meta = read_flat_yaml(run_dir_ / "meta.yaml");
    if (meta.count("lifecycle_stage") && meta.at("lifecycle_stage") == "deleted")
      fail("MLFLOW_RUN_ID=", target.run_id, ": that run is deleted");
    run_id_ = target.run_id;
    experiment_id_ = run_dir_.parent_path().filename().string();
    run_name_ = meta.count("run_name") ? meta.at("run_name") : run_name;
    start_time_ms_ = meta.count("start_time") ? std::atoll(meta.at("start_time").c_str()) : mlflow_now_ms();
    if (meta.count("user_id")) user_ = meta.at("user_id");
  } else {
    if (!target.experiment_name.empty()) experiment_id_ = experiment_named(root_, target.experiment_name);
    else experiment_id_ = target.experiment_id.empty() ? "0" : target.experiment_id;
    if (!fs::is_regular_file(root_ / experiment_id_ / "meta.yaml"))
      fail("MLFLOW_EXPERIMENT_ID=", experiment_id_, ": no such experiment in ", root_.string());
    run_id_ = hex32();
    const auto tagged = target.tags.find("mlflow.runName");  // mlflow's create_run: the tag names the run
    run_name_ = tagged != target.tags.end() ? tagged->second : run_name.empty() ? run_id_.substr(0, 8) : run_name;
    start_time_ms_ = mlflow_now_ms();
    run_dir_ = root_ / experiment_id_ / run_id_;
    for (const char* sub : {"metrics", "params", "artifacts", "tags"}) make_dirs(run_dir_ / sub);
  }
  write_meta(MlflowStatus::kRunning, -1);
  if (target.run_id.empty()) {
    set_tag("mlflow.runName", run_name_);
    set_tag("mlflow.user", user_);
    set_tag("mlflow.source.name", program_name());
    set_tag("mlflow.source.type", "LOCAL");
  }
  for (const auto& [k, v] : target.tags) set_tag(k, v);
}

MlflowRun::~MlflowRun() {
  try {
    end(MlflowStatus::kFailed);
  } catch (...) {  // a destructor never throws; the run stays RUNNING, as a killed mlflow client leaves it
  }
}

void MlflowRun::write_meta(MlflowStatus status, int64_t end_time_ms) {
  write_file_atomic(run_dir_ / "meta.yaml",
                    yaml_of({{"artifact_uri", yaml_scalar(file_uri(run_dir_ / "artifacts"))},
                             {"deleted_time", "null"},
                             {"end_time", end_time_ms < 0 ? "null" : std::to_string(end_time_ms)},
                             {"entry_point_name", "''"},
                             {"experiment_id", yaml_scalar(experiment_id_)},
                             {"lifecycle_stage", "active"},
                             {"run_id", yaml_scalar(run_id_)},
                             {"run_name", yaml_scalar(run_name_)},
                             {"run_uuid", yaml_scalar(run_id_)},
                             {"source_name", "''"},
                             {"source_type", "4"},
                             {"source_version", "''"},
                             {"start_time", std::to_string(start_time_ms_)},
                             {"status", std::to_string(int(status))},
                             {"tags", "[]"},
                             {"user_id", yaml_scalar(user_)}}));
}

namespace {
std::string python_str(const nlohmann::json& v) {  // str(value), as MLflow stores a parameter HF gives it
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_number_float()) return python_float(v.get<double>());
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

std::vector<std::string> MlflowRun::log_params(const nlohmann::json& params) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> dropped;
  for (const auto& [k, v] : params.items()) {
    const std::string value = python_str(v);
    if (value.size() > kMaxParamValueLength) {
      dropped.push_back(k);
      continue;
    }
    const fs::path path = run_dir_ / "params" / mlflow_key(k);
    std::error_code ec;
    if (fs::exists(path, ec)) continue;  // a parameter keeps its first value (a reattached run's)
    make_dirs(path.parent_path());
    write_file_atomic(path, value);
  }
  return dropped;
}

void MlflowRun::log_metric(const std::string& key, double value, int64_t step, int64_t timestamp_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const fs::path path = run_dir_ / "metrics" / mlflow_key(key);
  make_dirs(path.parent_path());
  const std::string line = str(timestamp_ms, " ", python_float(value), " ", step, "\n");
  std::FILE* f = std::fopen(path.c_str(), "a");  // appended and closed per value, as FileStore does: a kill keeps it
  if (!f) fail(path.string(), ": cannot append the MLflow metric: ", std::strerror(errno));
  const bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size();
  if (std::fclose(f) != 0 || !ok) fail(path.string(), ": cannot append the MLflow metric: ", std::strerror(errno));
}

void MlflowRun::set_tag(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  const fs::path path = run_dir_ / "tags" / mlflow_key(key);
  make_dirs(path.parent_path());
  write_file_atomic(path, value);
}

void MlflowRun::end(MlflowStatus status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_) return;
  ended_ = true;
  write_meta(status, mlflow_now_ms());
}

namespace {
std::mutex active_mu;
std::shared_ptr<MlflowRun> active_run;
}  // namespace

void set_active_mlflow_run(std::shared_ptr<MlflowRun> run) {
  std::lock_guard<std::mutex> lock(active_mu);
  active_run = std::move(run);
}

std::shared_ptr<MlflowRun> active_mlflow_run() {
  std::lock_guard<std::mutex> lock(active_mu);
  return active_run;
}

}  // namespace bt::report
