#include "dist/grad_sync.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <chrono>

#include "common/error.h"

namespace bt::dist {

struct Bucket {
  at::Tensor flat;
  std::vector<size_t> params;  // indices into State::params
  int pending = 0;             // gradients still missing in this armed backward
  std::unique_ptr<Group::Pending> work;
};

struct GradientSync::State {
  Group* group = nullptr;
  std::vector<at::Tensor> params;
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of;
  std::vector<int64_t> offset_of;
  std::vector<char> ready;
  std::vector<unsigned> hook_ids;
  bool armed = false;
  size_t next_launch = 0;

  at::Tensor slot(size_t i) { return buckets[bucket_of[i]].flat.narrow(0, offset_of[i], params[i].numel()); }

  // Backward hook: this backward's gradient of parameter i (before it is accumulated into .grad()).
  void on_grad(size_t i, const at::Tensor& g) {
    if (!armed) return;
    at::NoGradGuard no_grad;
    Bucket& b = buckets[bucket_of[i]];
    at::Tensor s = slot(i);
    if (ready[i]) {
      if (b.work) fail("GradientSync: a parameter got a second gradient after its bucket was sent; call arm() only "
                       "before the last backward of a step");
      s.add_(g.reshape({-1}));
      return;
    }
    s.copy_(g.reshape({-1}));
    const at::Tensor& acc = params[i].grad();
    if (acc.defined()) s.add_(acc.reshape({-1}));  // gradient accumulation: reduce the running sum
    ready[i] = 1;
    --b.pending;
    launch_ready();
  }

  // Buckets go out strictly in index order so every rank issues the same collective sequence.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) {
      Bucket& b = buckets[next_launch++];
      b.work = group->all_reduce_sum_async(b.flat, "gradient all_reduce");
    }
  }

  // Parameters whose hook did not fire (unused in this backward, or nothing armed): their current .grad().
  void fill_missing(Bucket& b) {
    at::NoGradGuard no_grad;
    for (size_t i : b.params) {
      if (ready[i]) continue;
      at::Tensor s = slot(i);
      const at::Tensor& acc = params[i].grad();
      if (acc.defined())
        s.copy_(acc.reshape({-1}));
      else
        s.zero_();
      ready[i] = 1;
    }
    b.pending = 0;
  }
};

GradientSync::GradientSync(Group& group, std::vector<at::Tensor> params, GradSyncOptions options)
    : group_(group), params_(std::move(params)), options_(options), state_(std::make_shared<State>()) {
  if (!(options_.bucket_mb > 0)) fail("GradientSync: bucket size ", options_.bucket_mb, " MB must be positive");
  for (const auto& p : params_) {
    if (!p.defined() || !p.requires_grad()) fail("GradientSync: every parameter must require grad");
    if (p.is_sparse()) fail("GradientSync: sparse parameters are not supported");
  }
  if (!group_.distributed()) return;
  State& st = *state_;
  st.group = &group_;
  st.params = params_;
  const size_t n = params_.size();
  st.bucket_of.assign(n, 0);
  st.offset_of.assign(n, 0);
  st.ready.assign(n, 0);
  const auto cap = static_cast<int64_t>(options_.bucket_mb * 1024 * 1024);
  // Reverse registration order approximates the order in which backward produces gradients, so the first
  // bucket fills (and goes on the wire) first.
  std::vector<std::vector<size_t>> groups;
  int64_t bytes = 0;
  for (size_t k = n; k-- > 0;) {
    const auto& p = params_[k];
    const bool same = !groups.empty() && params_[groups.back().front()].scalar_type() == p.scalar_type() &&
                      params_[groups.back().front()].device() == p.device();
    const auto pb = static_cast<int64_t>(p.nbytes());
    if (!same || bytes + pb > cap) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(k);
    bytes += pb;
  }
  for (auto& idx : groups) {
    Bucket b;
    int64_t numel = 0;
    for (size_t i : idx) {
      st.bucket_of[i] = st.buckets.size();
      st.offset_of[i] = numel;
      numel += params_[i].numel();
    }
    b.flat = at::zeros({numel}, params_[idx.front()].options().requires_grad(false));
    b.params = idx;
    b.pending = static_cast<int>(idx.size());
    st.buckets.push_back(std::move(b));
  }
  if (options_.overlap) {
    std::weak_ptr<State> weak = state_;
    for (size_t i = 0; i < n; ++i) {
      st.hook_ids.push_back(params_[i].register_hook([weak, i](const at::Tensor& g) {
        if (auto s = weak.lock()) s->on_grad(i, g);
      }));
    }
  }
}

GradientSync::~GradientSync() {
  for (size_t i = 0; i < state_->hook_ids.size(); ++i) params_[i].remove_hook(state_->hook_ids[i]);
}

size_t GradientSync::bucket_count() const { return state_->buckets.size(); }

void GradientSync::broadcast_parameters() { group_.broadcast_(params_, 0); }

void GradientSync::arm() {
  if (!group_.distributed() || !options_.overlap) return;
  State& st = *state_;
  if (st.next_launch != 0) fail("GradientSync::arm() called twice without finish()");
  st.armed = true;
}

void GradientSync::finish() {
  last_wait_s_ = 0;
  if (!group_.distributed()) return;
  State& st = *state_;
  last_sent_in_backward_ = st.next_launch;
  for (size_t b = st.next_launch; b < st.buckets.size(); ++b) st.fill_missing(st.buckets[b]);
  st.launch_ready();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& b : st.buckets) {
    auto w = std::move(b.work);
    w->wait();
  }
  last_wait_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  at::NoGradGuard no_grad;
  const double inv = 1.0 / group_.world_size();
  for (auto& b : st.buckets) {
    b.flat.mul_(inv);
    for (size_t i : b.params) {
      at::Tensor mean = st.slot(i).view(params_[i].sizes());
      at::Tensor& g = params_[i].mutable_grad();
      if (g.defined())
        g.copy_(mean);
      else
        g = mean.clone();
    }
    b.pending = static_cast<int>(b.params.size());
  }
  std::fill(st.ready.begin(), st.ready.end(), 0);
  st.next_launch = 0;
  st.armed = false;
}

}  // namespace bt::dist
