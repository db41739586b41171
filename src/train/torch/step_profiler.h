// --profile_steps A:B (train and bench): torch's profiler around training steps A to B (1-based, inclusive), its
// chrome trace (chrome://tracing, Perfetto) written to OUTPUT_DIR/profile_steps_A-B.json when step B ends (or when
// the run stops inside the range). On libtorch 2.x Kineto's profiler (CPU ops and, on CUDA, the kernels: what the
// issue-46 step work reads); on 1.13 the legacy profiler's RecordProfile (CPU ops, aten::*). Only the main rank
// traces. Torch-free header.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace bt::train {

struct ProfileRange {
  int64_t first = 0, last = 0;  // first == 0: none
};
// "A:B" (1 <= A <= B) or "A" (one step); "" is none. Anything else throws bt::Error naming --profile_steps.
ProfileRange parse_profile_steps(const std::string& spec);

class StepProfiler {
 public:
  StepProfiler(ProfileRange range, std::string output_dir, bool cuda);
  ~StepProfiler();  // writes the trace of a range the run stopped inside
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;
  void before_step(int64_t step);  // the 1-based number of the step about to run
  void after_step(int64_t step);
  std::string trace_path() const;

 private:
  struct Session;
  void stop();
  ProfileRange range_;
  std::string dir_;
  bool cuda_;
  std::unique_ptr<Session> session_;
};

// Null when spec is empty.
std::unique_ptr<StepProfiler> make_step_profiler(const std::string& spec, const std::string& output_dir, bool cuda);

// One step under the profiler (nullptr: none): before_step now, after_step at the end of the scope.
class ProfiledStep {
 public:
  ProfiledStep(StepProfiler* p, int64_t step) : p_(p), step_(step) {
    if (p_) p_->before_step(step_);
  }
  ~ProfiledStep() {
    if (p_) p_->after_step(step_);
  }
  ProfiledStep(const ProfiledStep&) = delete;
  ProfiledStep& operator=(const ProfiledStep&) = delete;

 private:
  StepProfiler* p_;
  int64_t step_;
};

}  // namespace bt::train
