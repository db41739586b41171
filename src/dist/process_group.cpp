// c10d glue: store + backend construction, error translation, and the watchdog for stuck collectives.
#include "dist/process_group.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#ifdef BT_DIST_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef BT_DIST_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
// libtorch 2.x split c10d's ProcessGroup into a dispatching front and per-device Backends; Gloo and NCCL are
// Backends there, with the collective signatures 1.13's ProcessGroup had. One group is one backend here.
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
using C10dGroup = c10d::Backend;
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
using C10dGroup = c10d::ProcessGroup;
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "dist/watchdog.h"

namespace bt::dist {

// How long a rank of torchrun's tries to reach its launcher's store before concluding the launcher died.
constexpr double kAgentStoreSeconds = 10.0;

// torchrun's store lives in its launcher: if it does not answer, the launcher is gone (killed before this rank
// could set its parent-death signal), and waiting --ddp_timeout for it would only join the next job on that port.
void require_live_agent_store(const DistEnv& env, const std::string& who) {
  if (!env.agent_store) return;
  if (const std::string why = store_unreachable(env.master_addr, env.master_port, kAgentStoreSeconds); !why.empty())
    fail(who, ": torchrun's store at ", env.master_addr, ":", env.master_port, " does not answer (", why,
         "): its launcher is gone; nothing to save, stopping");
}

bool have_nccl() {
#ifdef BT_DIST_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

bool have_gloo() {
#ifdef BT_DIST_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

struct Group::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<C10dGroup> pg;
  std::unique_ptr<Watchdog> watchdog;
  bool dead = false;
  std::string who;  // "rank 1/2"
  double timeout_s = 0;

  // Runs the body; a c10d failure marks the group dead and becomes one clear bt::Error.
  template <class F>
  void guarded(const char* what, F&& body) {
    if (dead) fail(who, ": ", what, " after an earlier collective failed (the process group is dead)");
    try {
      body();
    } catch (const bt::Error&) {
      dead = true;
      throw;
    } catch (const c10::Error& e) {
      dead = true;
      fail(who, ": ", what, " failed: ", first_line(e.what_without_backtrace()), hint());
    } catch (const std::exception& e) {
      dead = true;
      fail(who, ": ", what, " failed: ", first_line(e.what()), hint());
    }
  }
  std::string hint() const {
    return str(" -- another rank probably exited or hung (see its output); collectives time out after ", timeout_s,
               " s (--ddp_timeout)");
  }
  static std::string first_line(const std::string& s) {
    const auto n = s.find('\n');
    return n == std::string::npos ? s : s.substr(0, n);
  }
  void wait(const c10::intrusive_ptr<c10d::Work>& w, const char* what) {
    const auto id = watchdog ? watchdog->begin(what) : 0;
    try {
      w->wait();
    } catch (...) {
      if (watchdog) watchdog->end(id);
      throw;
    }
    if (watchdog) watchdog->end(id);
  }
};

namespace {

#ifdef BT_DIST_HAVE_GLOO
std::shared_ptr<::gloo::transport::Device> gloo_device(const DistEnv& env) {
  // GLOO_SOCKET_IFNAME as in torch.distributed; loopback rendezvous -> loopback device (CI, one node);
  // else the address this host's name resolves to (c10d's default), which is what other nodes can reach.
  if (const char* ifn = std::getenv("GLOO_SOCKET_IFNAME"); ifn && *ifn) {
    std::string s = ifn;
    s = s.substr(0, s.find(','));
    return c10d::ProcessGroupGloo::createDeviceForInterface(s);
  }
  const std::string& a = env.master_addr;
  if (a == "localhost" || a.rfind("127.", 0) == 0 || a == "::1")
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

}  // namespace

Group::Group(DistEnv env, GroupOptions o) : env_(std::move(env)), options_(std::move(o)) {}

Group::~Group() {
  if (!impl_) return;
  impl_->watchdog.reset();
  if (impl_->dead) {
    // A failed group may have Gloo threads blocked on dead peers; destroying it could hang the exit that is
    // about to report the error. Leak it instead (the process is ending).
    (void)impl_->pg.release();
    (void)impl_->store.release();
  }
}

std::unique_ptr<Group> init_process_group(const DistEnv& env, const GroupOptions& options) {
  std::unique_ptr<Group> g(new Group(env, options));
  if (!env.distributed()) return g;
  if (!(options.timeout_s > 0) || options.timeout_s > 7 * 24 * 3600.0)
    fail("--ddp_timeout ", options.timeout_s, " must be in (0, 604800] seconds");
  const bool cuda = options.cuda;
  if (cuda && !have_nccl())
    fail("--device cuda with WORLD_SIZE=", env.world_size,
         " needs NCCL, but this build's libtorch has no CUDA/NCCL (rebuild against a CUDA libtorch)");
  if (!cuda && !have_gloo())
    fail("--device cpu with WORLD_SIZE=", env.world_size,
         " needs Gloo, but this build found no Gloo headers/library at configure time (Debian: libgloo-dev; "
         "rebuild) -- or run one process");

  auto impl = std::make_unique<Group::Impl>();
  impl->who = str("rank ", env.rank, "/", env.world_size);
  impl->timeout_s = options.timeout_s;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000.0));

  require_live_agent_store(env, impl->who);
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(env.master_port);
  so.isServer = !env.agent_store && env.rank == 0;
  so.numWorkers = env.world_size;
  so.waitWorkers = false;  // the backend's full-mesh connect below waits for everyone anyway
  so.timeout = timeout;
  try {
    c10::intrusive_ptr<c10d::Store> store;
    try {
      store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    } catch (const std::exception& e) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
      // libtorch >= 2.4 asks for the libuv store by default; builds without libuv (Debian's) refuse it.
      if (!so.useLibUV || std::string(e.what()).find("libuv") == std::string::npos) throw;
      so.useLibUV = false;
      store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
#else
      throw;
#endif
    }
    // torchrun's agent store is shared by every restart attempt: use the key space torch's own workers use.
    const std::string prefix = env.agent_store ? str("/worker/attempt_", env.restart_count, "/bt") : "bt";
    impl->store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
  } catch (const std::exception& e) {
    const std::string msg = dynamic_cast<const c10::Error*>(&e)
                                ? Group::Impl::first_line(static_cast<const c10::Error&>(e).what_without_backtrace())
                                : Group::Impl::first_line(e.what());
    fail(impl->who, ": cannot ", so.isServer ? "host" : "reach", " the rendezvous store at ", env.master_addr, ":",
         env.master_port, " (", msg, ")",
         so.isServer ? " -- is the port in use? pick another MASTER_PORT"
                     : " -- is rank 0 running and MASTER_ADDR/MASTER_PORT right?");
  }

  try {
    if (cuda) {
#ifdef BT_DIST_HAVE_NCCL
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = timeout;
      impl->pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, env.rank, env.world_size, o);
      g->backend_ = "nccl";
#endif
    } else {
#ifdef BT_DIST_HAVE_GLOO
      auto o = c10d::ProcessGroupGloo::Options::create(timeout);
      o->devices.push_back(gloo_device(env));
      impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world_size, o);
      g->backend_ = "gloo";
#endif
    }
  } catch (const std::exception& e) {
    const auto* ce = dynamic_cast<const c10::Error*>(&e);
    fail(impl->who, ": rendezvous failed (", Group::Impl::first_line(ce ? ce->what_without_backtrace() : e.what()),
         ") -- not all ", env.world_size, " ranks joined within ", options.timeout_s, " s (--ddp_timeout)");
  }
  if (options.watchdog) impl->watchdog = std::make_unique<Watchdog>(impl->who, options.timeout_s + 10.0);
  g->impl_ = std::move(impl);
  return g;
}

void Group::barrier() {
  if (!impl_) return;
  impl_->guarded("barrier", [&] { impl_->wait(impl_->pg->barrier(), "barrier"); });
}

void Group::all_reduce_sum_(at::Tensor& t) {
  if (!impl_) return;
  std::vector<at::Tensor> v{t};
  all_reduce_sum_(v);
}

void Group::all_reduce_sum_(std::vector<at::Tensor>& ts) {
  if (!impl_ || ts.empty()) return;
  impl_->guarded("all_reduce", [&] {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& t : ts) {
      std::vector<at::Tensor> one{t};
      works.push_back(impl_->pg->allreduce(one));
    }
    for (auto& w : works) impl_->wait(w, "all_reduce");
  });
}

double Group::all_reduce_sum(double x) { return all_reduce_sum(std::vector<double>{x})[0]; }

std::vector<double> Group::all_reduce_sum(const std::vector<double>& xs) {
  if (!impl_ || xs.empty()) return xs;
  at::Tensor t = at::tensor(xs, at::kDouble);
  if (backend_ == "nccl") t = t.to(at::Device(at::kCUDA, env_.local_rank));
  all_reduce_sum_(t);
  t = t.cpu();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

void Group::broadcast_(const std::vector<at::Tensor>& ts, int root) {
  if (!impl_ || ts.empty()) return;
  if (root < 0 || root >= world_size()) fail("broadcast root ", root, " out of range");
  constexpr int64_t kBucketBytes = 25 << 20;
  at::NoGradGuard no_grad;
  impl_->guarded("broadcast", [&] {
    size_t i = 0;
    while (i < ts.size()) {
      // One bucket: consecutive tensors of one dtype/device up to kBucketBytes.
      size_t j = i;
      int64_t bytes = 0;
      std::vector<at::Tensor> flat_parts;
      while (j < ts.size() && ts[j].scalar_type() == ts[i].scalar_type() && ts[j].device() == ts[i].device() &&
             (j == i || bytes + static_cast<int64_t>(ts[j].nbytes()) <= kBucketBytes)) {
        bytes += static_cast<int64_t>(ts[j].nbytes());
        flat_parts.push_back(ts[j].detach().reshape({-1}));
        ++j;
      }
      std::vector<at::Tensor> flat{at::cat(flat_parts)};
      c10d::BroadcastOptions bo;
      bo.rootRank = root;
      impl_->wait(impl_->pg->broadcast(flat, bo), "broadcast");
      int64_t off = 0;
      for (size_t k = i; k < j; ++k) {
        const int64_t n = ts[k].numel();
        ts[k].detach().copy_(flat[0].narrow(0, off, n).view(ts[k].sizes()));
        off += n;
      }
      i = j;
    }
  });
}

at::Tensor Group::all_gather_cat(const at::Tensor& t) {
  if (!impl_) return t;
  at::Tensor out;
  impl_->guarded("all_gather", [&] {
    std::vector<at::Tensor> in{t.detach().contiguous()};
    std::vector<std::vector<at::Tensor>> outs(1);
    for (int r = 0; r < world_size(); ++r) outs[0].push_back(at::empty_like(in[0]));
    impl_->wait(impl_->pg->allgather(outs, in), "all_gather");
    out = at::cat(outs[0], 0);
  });
  return out;
}

namespace {

class PendingWork final : public Group::Pending {
 public:
  PendingWork(Group::Impl* impl, c10::intrusive_ptr<c10d::Work> w, const char* what)
      : impl_(impl), work_(std::move(w)), what_(what) {}
  void wait() override {
    if (!work_) return;
    auto w = std::move(work_);
    impl_->guarded(what_, [&] { impl_->wait(w, what_); });
  }

 private:
  Group::Impl* impl_;
  c10::intrusive_ptr<c10d::Work> work_;
  const char* what_;
};

class DonePending final : public Group::Pending {
 public:
  void wait() override {}
};

}  // namespace

std::unique_ptr<Group::Pending> Group::all_reduce_sum_async(at::Tensor& t, const char* what) {
  if (!impl_) return std::make_unique<DonePending>();
  c10::intrusive_ptr<c10d::Work> w;
  impl_->guarded(what, [&] {
    std::vector<at::Tensor> one{t};
    w = impl_->pg->allreduce(one);
  });
  return std::make_unique<PendingWork>(impl_.get(), std::move(w), what);
}

}  // namespace bt::dist
