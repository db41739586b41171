// feed::GpuMediaPipeline. Everywhere: the stub / no-device error is the one-line message the CLI shows. With a
// CUDA build and a GPU: decode-only batches through the pipeline equal the CPU reference of the kernel (which
// decoded_loader_test.cpp ties to the CPU loader) bit for bit, fp32 and bf16, with take() on another stream; and
// with nvJPEG (--media_decode gpu) the pixels match the CPU loader without DCT scaling within the stated
// tolerance, and a second epoch allocates no device or pinned buffer.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <cstring>

#include "common/error.h"
#include "cuda/decoded_spec.h"
#include "cuda/resize_ref.h"
#include "loader/loader.h"
#include "feed/torch/gpu_media.h"
#include "train/trainer.h"

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
  if (feed::GpuMediaPipeline::available(&why)) GTEST_SKIP() << "a GPU is present: the parity test covers it";
  EXPECT_FALSE(why.empty());
  try {
    feed::GpuMediaPipeline p(feed::GpuMediaOptions{});
    FAIL() << "constructed without CUDA";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--use_media_pipeline needs"), std::string::npos) << e.what();
  }
}

// --media_decode: the one decision (GpuMediaPipeline::decode_jpegs_on_device) and the trainer's checks.
TEST(GpuMedia, MediaDecodeModes) {
  auto error_of = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  std::string why;
  if (!feed::GpuMediaPipeline::available(&why)) {  // auto quietly means the CPU; gpu names what is missing
    EXPECT_FALSE(feed::GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode::kAuto));
    EXPECT_NE(error_of([] { feed::GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode::kGpu); })
                  .find("--use_media_pipeline needs"),
              std::string::npos);
  }
  EXPECT_FALSE(feed::GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode::kCpu));
  train::TrainOptions o;
  o.demo = true;  // any data: the flag pair is refused before data is read
  o.media_decode = loader::MediaDecode::kGpu;  // without --use_media_pipeline the CPU loader decodes everything
  EXPECT_NE(error_of([&] { train::run_train(o); }).find("--media_decode gpu needs --use_media_pipeline"),
            std::string::npos);
}

TEST(GpuMedia, MatchesCpuReferenceBitForBit) {
  std::string why;
  if (!feed::GpuMediaPipeline::available(&why)) GTEST_SKIP() << "no CUDA pipeline: " << why;
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
      feed::GpuMediaPipeline p({64, bf16, torch::Device(torch::kCUDA, 0)});
      std::vector<std::vector<uint8_t>> want;
      while (auto b = l.next()) {
        std::vector<cuda::SampleSpec> specs;
        std::vector<uint64_t> offs;
        cuda::specs_of(b->decoded.samples, specs, offs);
        auto plan = cuda::make_plan(specs, offs, b->decoded.bytes, 64,
                                    bf16 ? cuda::OutputType::kBFloat16 : cuda::OutputType::kFloat32);
        want.emplace_back(plan.output_bytes());
        cuda::reference_run(plan, b->decoded.packed.data(), want.back().data());
        p.submit(std::move(b));  // the pipeline hands the batch back once the device has read it
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

// nvJPEG decodes exactly as libjpeg-turbo (its fancy chroma upsampling done by our kernel, cuda/ycc_convert.h),
// so after the antialiased resize only float rounding separates the two paths: mean |difference| <= 0.5 levels
// of 255, every pixel <= 4 (before that kernel, nvJPEG's own upsampling gave a mean 2.29 and a worst 49).
TEST(GpuMedia, NvjpegDecodeMatchesTheCpuLoaderWithinTolerance) {
  std::string why;
  if (!feed::GpuMediaPipeline::available(&why)) GTEST_SKIP() << "no CUDA pipeline: " << why;
  try {
    feed::GpuMediaPipeline::decode_jpegs_on_device(loader::MediaDecode::kGpu);
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  auto ds = std::make_shared<Set>();
  for (auto mode : {media::TransformMode::kEval, media::TransformMode::kTrain}) {
    loader::LoaderOptions o;
    o.num_workers = 2;
    o.batch_size = 4;
    o.transform.image_size = 64;
    o.transform.mode = mode;
    o.transform.dct_scaling = false;  // the CPU side's geometry for device-decoded JPEGs
    o.sampler.shuffle = false;        // the same batches each epoch: epoch 2 must reuse epoch 1's buffers
    loader::Loader cpu(ds, o);
    o.output_decoded = o.ship_device_jpegs = true;
    o.transform.dct_scaling = true;   // ignored for shipped JPEGs
    loader::Loader enc(ds, o);
    feed::GpuMediaOptions po{64, false, torch::Device(torch::kCUDA, 0)};
    po.decode_jpegs = true;
    feed::GpuMediaPipeline p(po);
    size_t allocations_after_warmup = 0;  // every slot of the pipeline has been used once after two epochs
    for (uint64_t epoch : {0u, 1u, 2u}) {
      cpu.start_epoch(epoch);
      enc.start_epoch(epoch);
      double sum = 0, worst = 0;
      size_t n = 0, shipped = 0;
      while (auto b = enc.next()) {
        auto want = cpu.next();
        ASSERT_TRUE(want);
        for (const auto& s : b->decoded.samples) shipped += s.encoded;
        p.submit(std::move(b));
        torch::Tensor got = p.take().cpu().contiguous();
        const float* g = got.data_ptr<float>();
        for (size_t k = 0; k < want->pixels.size(); ++k) {
          const size_t c = (k / (64 * 64)) % 3;
          const double levels = std::abs(g[k] - want->pixels[k]) * o.transform.std[c] * 255.0;
          sum += levels;
          worst = std::max(worst, levels);
          ++n;
        }
      }
      EXPECT_GT(shipped, 0u);
      std::printf("nvjpeg pipeline vs CPU loader (%s, epoch %d): mean |diff| %.4f levels, worst %.2f\n",
                  mode == media::TransformMode::kEval ? "eval" : "train", int(epoch), sum / static_cast<double>(n), worst);
      EXPECT_LE(sum / static_cast<double>(n), 0.5) << "epoch " << epoch;
      EXPECT_LE(worst, 4.0) << "epoch " << epoch;
      if (epoch == 1) allocations_after_warmup = p.device_allocations();
    }
    EXPECT_GT(allocations_after_warmup, 0u);
    EXPECT_EQ(p.device_allocations(), allocations_after_warmup) << "a steady-state batch allocated";
  }
}

}  // namespace
}  // namespace bt
