#include "train/torch/step_profiler.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#else
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

namespace bt::train {

ProfileRange parse_profile_steps(const std::string& spec) {
  if (spec.empty()) return {};
  const auto bad = [&] { return Error(str("--profile_steps '", spec, "': use A:B (steps A to B, 1 <= A <= B) or A")); };
  const size_t colon = spec.find(':');
  ProfileRange r;
  try {
    size_t used = 0;
    const std::string a = spec.substr(0, colon), b = colon == std::string::npos ? a : spec.substr(colon + 1);
    r.first = std::stoll(a, &used);
    if (used != a.size()) throw bad();
    r.last = std::stoll(b, &used);
    if (used != b.size()) throw bad();
  } catch (const std::logic_error&) {  // stoll: not a number, out of range
    throw bad();
  }
  if (r.first < 1 || r.last < r.first) throw bad();
  return r;
}

#if TORCH_VERSION_MAJOR >= 2
// Kineto: CPU ops, and the CUDA kernels and copies when the run is on a GPU.
struct StepProfiler::Session {
  explicit Session(bool cuda) {
    namespace impl = torch::profiler::impl;
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
    std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
    if (cuda) activities.insert(impl::ActivityType::CUDA);
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  }
  void finish(const std::string& path) {
    if (cuda_sync) cuda_sync();
    torch::autograd::profiler::disableProfiler()->save(path);
  }
  std::function<void()> cuda_sync;
};
#else
// libtorch 1.13: the legacy profiler (CPU ops); RecordProfile writes the chrome trace when it ends.
struct StepProfiler::Session {
  explicit Session(bool) {}
  void start(const std::string& path) { rec = std::make_unique<torch::autograd::profiler::RecordProfile>(path); }
  void finish(const std::string&) { rec.reset(); }
  std::unique_ptr<torch::autograd::profiler::RecordProfile> rec;
};
#endif

StepProfiler::StepProfiler(ProfileRange range, std::string output_dir, bool cuda)
    : range_(range), dir_(std::move(output_dir)), cuda_(cuda) {}
StepProfiler::~StepProfiler() {
  try {
    stop();
  } catch (const std::exception& e) {  // a destructor must not throw: the run's own error matters more
    std::fprintf(stderr, "--profile_steps: the trace was not written: %s\n", e.what());
  }
}

std::string StepProfiler::trace_path() const {
  return (std::filesystem::path(dir_) / str("profile_steps_", range_.first, "-", range_.last, ".json")).string();
}

void StepProfiler::before_step(int64_t step) {
  if (session_ || step != range_.first) return;
  std::filesystem::create_directories(dir_);
  session_ = std::make_unique<Session>(cuda_);
#if TORCH_VERSION_MAJOR >= 2
  if (cuda_) session_->cuda_sync = [] { torch::cuda::synchronize(); };  // the range's kernels end inside it
#else
  session_->start(trace_path());
#endif
}

void StepProfiler::after_step(int64_t step) {
  if (session_ && step >= range_.last) stop();
}

void StepProfiler::stop() {
  if (!session_) return;
  auto s = std::move(session_);
  s->finish(trace_path());
}

std::unique_ptr<StepProfiler> make_step_profiler(const std::string& spec, const std::string& output_dir, bool cuda) {
  const ProfileRange r = parse_profile_steps(spec);
  if (r.first == 0) return nullptr;
  return std::make_unique<StepProfiler>(r, output_dir, cuda);
}

}  // namespace bt::train
