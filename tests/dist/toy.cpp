#include "toy.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <fstream>
#include <stdexcept>

#include "dist/gather.h"
#include "dist/grad_sync.h"
#include "model/contrastive_loss.h"

namespace bt::dist::testing {
namespace {

constexpr int kImgIn = 12, kTxtIn = 10, kHidden = 16, kEmbed = 8;

struct Toy {
  std::vector<at::Tensor> params;  // iw1, ib1, iw2, tw1, tw2, logit_scale
  std::pair<at::Tensor, at::Tensor> embed(const at::Tensor& img, const at::Tensor& txt) const {
    at::Tensor i = at::matmul(at::tanh(at::matmul(img, params[0]) + params[1]), params[2]);
    at::Tensor t = at::matmul(at::gelu(at::matmul(txt, params[3])), params[4]);
    auto l2 = [](const at::Tensor& x) { return x / x.norm(2, {-1}, true); };
    return {l2(i), l2(t)};
  }
};

Toy make_toy(int seed) {
  at::manual_seed(seed);
  Toy m;
  for (auto shape : std::vector<std::vector<int64_t>>{{kImgIn, kHidden}, {kHidden}, {kHidden, kEmbed},
                                                      {kTxtIn, kHidden}, {kHidden, kEmbed}})
    m.params.push_back((at::randn(shape) * 0.5).set_requires_grad(true));
  m.params.push_back(at::full({}, 2.0).set_requires_grad(true));
  return m;
}

// The global batch of (step, micro) is fixed; rank r of W gets rows [r*B, (r+1)*B).
std::pair<at::Tensor, at::Tensor> global_batch(int step, int micro, int rows) {
  at::manual_seed(1000 + step * 17 + micro);
  return {at::randn({rows, kImgIn}), at::randn({rows, kTxtIn})};
}

std::vector<double> flat(const std::vector<at::Tensor>& ts, bool grads) {
  std::vector<double> out;
  for (const auto& t : ts) {
    at::Tensor v = (grads ? t.grad() : t).detach().to(at::kDouble).reshape({-1}).contiguous();
    out.insert(out.end(), v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
  }
  return out;
}

void sgd(Toy& m, double lr) {
  at::NoGradGuard ng;
  for (auto& p : m.params) {
    p.sub_(p.grad() * lr);
    p.mutable_grad().zero_();
  }
}

constexpr double kLr = 0.5;

}  // namespace

at::Tensor clip_loss(const at::Tensor& image, const at::Tensor& text, const at::Tensor& logit_scale) {
  const at::Tensor scale = logit_scale.exp();
  return (model::contrastive_ce(image, text, scale) + model::contrastive_ce(text, image, scale)) / 2.0;
}

ToyResult run_toy_rank(Group& group, const ToySpec& spec) {
  const int W = group.world_size(), r = group.rank(), B = spec.per_rank_batch;
  Toy m = make_toy(spec.init_seed + r);
  GradientSync sync(group, m.params, GradSyncOptions{spec.bucket_mb, spec.overlap});
  sync.broadcast_parameters();
  ToyResult res;
  res.init_params = flat(m.params, false);
  for (int s = 0; s < spec.steps; ++s) {
    double logged = 0;
    for (int a = 0; a < spec.accum; ++a) {
      auto [img, txt] = global_batch(s, a, W * B);
      auto [ie, te] = m.embed(img.narrow(0, r * B, B), txt.narrow(0, r * B, B));
      if (spec.gather) {
        ie = gather_with_grad(group, ie);
        te = gather_with_grad(group, te);
      }
      at::Tensor loss = clip_loss(ie, te, m.params[5]) / spec.accum;
      if (a == spec.accum - 1) sync.arm();
      loss.backward();
      logged += loss.item<double>();
    }
    sync.finish();
    res.losses.push_back(group.all_reduce_mean(logged));
    if (s == 0) res.first_grads = flat(m.params, true);
    sgd(m, kLr);
  }
  res.final_params = flat(m.params, false);
  res.buckets = {static_cast<double>(sync.bucket_count()), static_cast<double>(sync.last_sent_in_backward())};
  return res;
}

ToyResult run_toy_reference(const ToySpec& spec, int world) {
  const int B = spec.per_rank_batch;
  Toy m = make_toy(spec.init_seed);
  ToyResult res;
  res.init_params = flat(m.params, false);
  for (int s = 0; s < spec.steps; ++s) {
    double logged = 0;
    for (int a = 0; a < spec.accum; ++a) {
      auto [img, txt] = global_batch(s, a, world * B);
      at::Tensor loss;
      if (spec.gather) {
        auto [ie, te] = m.embed(img, txt);
        loss = clip_loss(ie, te, m.params[5]);
      } else {
        loss = at::zeros({});
        for (int r = 0; r < world; ++r) {
          auto [ie, te] = m.embed(img.narrow(0, r * B, B), txt.narrow(0, r * B, B));
          loss = loss + clip_loss(ie, te, m.params[5]) / world;
        }
      }
      loss = loss / spec.accum;
      loss.backward();
      logged += loss.item<double>();
    }
    res.losses.push_back(logged);
    if (s == 0) res.first_grads = flat(m.params, true);
    sgd(m, kLr);
  }
  res.final_params = flat(m.params, false);
  return res;
}

void write_result(const std::string& path, const ToyResult& r) {
  std::ofstream f(path, std::ios::binary);
  for (const auto* v : {&r.losses, &r.first_grads, &r.init_params, &r.final_params, &r.buckets}) {
    const uint64_t n = v->size();
    f.write(reinterpret_cast<const char*>(&n), sizeof(n));
    f.write(reinterpret_cast<const char*>(v->data()), static_cast<std::streamsize>(n * sizeof(double)));
  }
  if (!f) throw std::runtime_error("cannot write " + path);
}

ToyResult read_result(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  ToyResult r;
  for (auto* v : {&r.losses, &r.first_grads, &r.init_params, &r.final_params, &r.buckets}) {
    uint64_t n = 0;
    f.read(reinterpret_cast<char*>(&n), sizeof(n));
    if (!f || n > (1u << 24)) throw std::runtime_error("truncated result file " + path);
    v->resize(n);
    f.read(reinterpret_cast<char*>(v->data()), static_cast<std::streamsize>(n * sizeof(double)));
  }
  if (!f) throw std::runtime_error("truncated result file " + path);
  return r;
}

}  // namespace bt::dist::testing
