// The tiny BridgeTower contrastive model across ranks: one step's loss and gradients (dropout off, so the
// job and the single-process reference see the same function).
#include <torch/torch.h>

#include "dist/gather.h"
#include "dist/grad_sync.h"
#include "model/bridgetower.h"
#include "model/contrastive_loss.h"
#include "toy.h"

namespace bt::dist::testing {

ToyResult bt_reference(const std::string& fixture, int world, bool gather);

namespace {

constexpr int kPerRank = 2, kSeq = 8;

struct Batch {
  torch::Tensor pixels, ids, mask;
};

Batch global_batch(const model::BridgeTowerConfig& c, int rows) {
  torch::manual_seed(77);
  Batch b;
  b.pixels = torch::randn({rows, 3, c.vision.image_size, c.vision.image_size});
  b.ids = torch::randint(3, c.text.vocab_size, {rows, kSeq}, torch::kLong);
  b.mask = torch::ones({rows, kSeq}, torch::kLong);
  b.mask.index_put_({torch::indexing::Slice(0, rows, 2), torch::indexing::Slice(kSeq - 3, kSeq)}, 0);
  return b;
}

std::vector<double> flat_grads(torch::nn::Module& m) {
  std::vector<double> out;
  for (const auto& p : m.parameters()) {
    torch::Tensor g = p.grad().defined() ? p.grad() : torch::zeros_like(p);
    g = g.detach().to(torch::kDouble).reshape({-1}).contiguous();
    out.insert(out.end(), g.data_ptr<double>(), g.data_ptr<double>() + g.numel());
  }
  return out;
}

}  // namespace

int run_bt_worker(Group& g, const std::string& fixture, const std::string& out, bool gather) {
  auto m = model::load_contrastive(fixture);
  m->eval();
  const int W = g.world_size(), r = g.rank();
  Batch b = global_batch(m->config(), W * kPerRank);
  auto sl = [&](const torch::Tensor& t) { return t.narrow(0, r * kPerRank, kPerRank); };
  GradientSync sync(g, m->parameters());
  sync.broadcast_parameters();
  sync.arm();
  auto o = m->forward(sl(b.pixels), sl(b.ids), sl(b.mask), false);
  auto all = [&](const torch::Tensor& t) { return gather ? gather_with_grad(g, t) : t; };
  torch::Tensor loss = model::contrastive_loss(all(o.text_embeds), all(o.image_embeds), all(o.cross_embeds), m->logit_scale);
  loss.backward();
  sync.finish();
  ToyResult res;
  res.losses.push_back(g.all_reduce_mean(loss.item<double>()));
  res.first_grads = flat_grads(*m);
  write_result(out, res);
  return 0;
}

ToyResult bt_reference(const std::string& fixture, int world, bool gather) {
  auto m = model::load_contrastive(fixture);
  m->eval();
  Batch b = global_batch(m->config(), world * kPerRank);
  torch::Tensor loss;
  if (gather) {
    loss = m->forward(b.pixels, b.ids, b.mask, true).loss;  // the model's own loss over the whole batch
  } else {
    loss = torch::zeros({});
    for (int r = 0; r < world; ++r) {
      auto sl = [&](const torch::Tensor& t) { return t.narrow(0, r * kPerRank, kPerRank); };
      loss = loss + m->forward(sl(b.pixels), sl(b.ids), sl(b.mask), true).loss / world;
    }
  }
  loss.backward();
  ToyResult res;
  res.losses.push_back(loss.item<double>());
  res.first_grads = flat_grads(*m);
  return res;
}

}  // namespace bt::dist::testing
