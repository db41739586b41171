// train::GpuMediaPipeline. Everywhere: the stub / no-device error is the one-line message the CLI shows. With a
// CUDA build and a GPU: decode-only batches through the pipeline equal the CPU reference of the kernel (which
// decoded_loader_test.cpp ties to the CPU loader) bit for bit, fp32 and bf16, with take() on another stream.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstring>

#include "common/error.h"
#include "cuda/decoded_spec.h"
#include "cuda/resize_ref.h"
#include "loader/loader.h"
#include "train/torch/gpu_media.h"

namespace bt {
namespace {

std::vector<uint8_t> jpeg(int w, int h, int seed) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<uint8_t>((i * 7 + seed * 31 + (i / (w * 3)) * 5) & 255);
  tjhandle tj = tjInitCompress();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, rgb.data(), w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, 85, 0), 0);
  std::vector<uint8_t> v(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  return v;
}

class Set : public data::Dataset {
 public:
  Set() {
    const int sz[][2] = {{300, 200}, {90, 120}, {640, 480}, {50, 40}};
    for (int i = 0; i < 4; ++i) j_.push_back(jpeg(sz[i][0], sz[i][1], i));
    for (int i = 0; i < 12; ++i) k_.push_back("k" + std::to_string(i)), c_.push_back("c");
  }
  size_t size() const override { return k_.size(); }
  const std::string& caption(size_t i) const override { return c_[i]; }
  const std::string& image_key(size_t i) const override { return k_[i]; }
  void read_image(size_t i, std::vector<uint8_t>& b) const override { b = j_[i % 4]; }
  std::string describe(size_t i) const override { return k_[i]; }

 private:
  std::vector<std::vector<uint8_t>> j_;
  std::vector<std::string> k_, c_;
};

TEST(GpuMedia, ErrorWithoutCudaNamesTheFlag) {
  std::string why;
  if (train::GpuMediaPipeline::available(&why)) GTEST_SKIP() << "a GPU is present: the parity test covers it";
  EXPECT_FALSE(why.empty());
  try {
    train::GpuMediaPipeline p(train::GpuMediaOptions{});
    FAIL() << "constructed without CUDA";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--use_media_pipeline needs"), std::string::npos) << e.what();
  }
}

TEST(GpuMedia, MatchesCpuReferenceBitForBit) {
  std::string why;
  if (!train::GpuMediaPipeline::available(&why)) GTEST_SKIP() << "no CUDA pipeline: " << why;
  auto ds = std::make_shared<Set>();
  for (bool bf16 : {false, true})
    for (auto mode : {media::TransformMode::kEval, media::TransformMode::kTrain}) {
      loader::LoaderOptions o;
      o.num_workers = 2;
      o.batch_size = 4;
      o.transform.image_size = 64;
      o.transform.mode = mode;
      o.output_decoded = true;
      loader::Loader l(ds, o);
      train::GpuMediaPipeline p({64, bf16, torch::Device(torch::kCUDA, 0)});
      std::vector<std::vector<uint8_t>> want;
      while (auto b = l.next()) {
        std::vector<cuda::SampleSpec> specs;
        std::vector<uint64_t> offs;
        cuda::specs_of(b->decoded.samples, specs, offs);
        auto plan = cuda::make_plan(specs, offs, b->decoded.bytes, 64,
                                    bf16 ? cuda::OutputType::kBFloat16 : cuda::OutputType::kFloat32);
        want.emplace_back(plan.output_bytes());
        cuda::reference_run(plan, b->decoded.packed.data(), want.back().data());
        p.submit(*b);  // the host batch goes back to the loader right after
      }
      ASSERT_EQ(p.in_flight(), want.size());
      for (auto& w : want) {
        torch::Tensor t = p.take();
        EXPECT_EQ(t.scalar_type(), bf16 ? torch::kBFloat16 : torch::kFloat32);
        auto host = t.cpu().contiguous();
        ASSERT_EQ(static_cast<size_t>(host.nbytes()), w.size());
        EXPECT_EQ(std::memcmp(host.data_ptr(), w.data(), w.size()), 0) << "bf16=" << bf16;
      }
      EXPECT_THROW(p.take(), Error);
    }
}

}  // namespace
}  // namespace bt
