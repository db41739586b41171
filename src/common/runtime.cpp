#include "common/runtime.h"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/error.h"
#include "common/process_memory.h"
#include "common/terminal.h"

namespace bt {
namespace {

static_assert(std::atomic<RuntimeSwitches>::is_always_lock_free, "RuntimeSwitches must stay a few bytes");

// The value of `spec`'s variable, or of its deprecated alias (one warning line), or nullptr when neither is set.
const char* lookup(const RuntimeSwitchSpec& spec, const EnvLookup& env, std::vector<std::string>* warnings) {
  const char* v = env(spec.name);
  if (!spec.deprecated_alias) return v;
  const char* old = env(spec.deprecated_alias);
  if (!old) return v;
  if (warnings)
    warnings->push_back(v ? str(spec.deprecated_alias, " is deprecated and ignored: ", spec.name, " is set")
                          : str(spec.deprecated_alias, " is deprecated: set ", spec.name, "=", old, " instead"));
  return v ? v : old;
}

// One switch's value among `choices` (index), or `fallback` (the default) with a warning for anything else.
int choice(const RuntimeSwitchSpec& spec, const EnvLookup& env, std::vector<std::string>* warnings,
           std::initializer_list<std::string_view> choices, int fallback) {
  const char* v = lookup(spec, env, warnings);
  if (!v || !*v) return fallback;
  int i = 0;
  for (std::string_view c : choices) {
    if (c == v) return i;
    ++i;
  }
  if (warnings)
    warnings->push_back(str(spec.name, "=", std::string_view(v).substr(0, 40), " is not one of ", spec.values,
                            "; using ", spec.default_value));
  return fallback;
}

// A count 0..255 (the cap of BRIDGETUNE_MAX_THREADS), or 0 with a warning for anything else.
uint8_t count(const RuntimeSwitchSpec& spec, const EnvLookup& env, std::vector<std::string>* warnings) {
  const char* v = lookup(spec, env, warnings);
  if (!v || !*v) return 0;
  const std::string_view text(v);
  int n = 0;
  bool ok = text.size() <= 3;
  for (char c : text) ok = ok && c >= '0' && c <= '9';
  for (char c : text) n = ok ? n * 10 + (c - '0') : 0;
  if (ok && n <= 255) return static_cast<uint8_t>(n);
  if (warnings)
    warnings->push_back(str(spec.name, "=", text.substr(0, 40), " is not one of ", spec.values, "; using ",
                            spec.default_value));
  return 0;
}

RuntimeSwitches read_and_warn() {
  std::vector<std::string> warnings;
  const RuntimeSwitches s = read_runtime_switches([](const char* n) { return std::getenv(n); }, &warnings);
  // A value is the environment's, maybe anyone's (a job script, a shared profile): its control bytes escaped.
  for (const auto& w : warnings) std::fprintf(stderr, "bridgetune: warning: %s\n", printable(w).c_str());
  return s;
}

std::atomic<RuntimeSwitches>& process_switches() {
  static std::atomic<RuntimeSwitches> s{read_and_warn()};  // read once, at the first use or init_runtime
  return s;
}

}  // namespace

RuntimeSwitches read_runtime_switches(const EnvLookup& env, std::vector<std::string>* warnings) {
  const auto& t = kRuntimeSwitchTable;
  RuntimeSwitches s;
  s.keep_freed_memory = choice(t[0], env, warnings, {"0", "1"}, 1) == 1;
  s.cpu_gemm_onednn = choice(t[1], env, warnings, {"torch", "onednn"}, 1) == 1;
  switch (choice(t[2], env, warnings, {"1", "0", "fail"}, 0)) {
    case 1: s.fused_ops = FusedOps::kOff; break;
    case 2: s.fused_ops = FusedOps::kFail; break;
    default: s.fused_ops = FusedOps::kOn;
  }
  s.max_threads = count(t[3], env, warnings);
  return s;
}

RuntimeSwitches runtime_switches() { return process_switches().load(std::memory_order_relaxed); }

ScopedRuntimeSwitches::ScopedRuntimeSwitches(const RuntimeSwitches& s) : previous_(process_switches().exchange(s)) {}
ScopedRuntimeSwitches::~ScopedRuntimeSwitches() { process_switches().store(previous_); }

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

int capped_threads(int n) {
  const int cap = runtime_switches().max_threads;
  return cap > 0 && n > cap ? cap : n;
}

void pin_openblas_to_one_thread() {
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) fn(1);
}

void init_runtime(const RuntimeOptions&) {
  process_switches();             // the switches, read once (and their warnings printed)
  keep_freed_memory_for_reuse();  // before the first big allocation (common/process_memory.h)
  pin_openblas_to_one_thread();
}

}  // namespace bt
