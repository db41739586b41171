#include "media/augment.h"

#include <charconv>
#include <cmath>

#include "common/error.h"

namespace bt::media {
namespace {

// "a,b,..." into exactly n finite numbers.
template <size_t N>
std::array<double, N> parse_numbers(std::string_view text, std::string_view name, const char* shape) {
  std::array<double, N> out{};
  size_t at = 0;
  for (size_t i = 0; i < N; ++i) {
    const size_t end = i + 1 < N ? text.find(',', at) : text.size();
    const std::string_view field = end == std::string_view::npos ? std::string_view{} : text.substr(at, end - at);
    double v = 0;
    const auto r = std::from_chars(field.data(), field.data() + field.size(), v);
    if (field.empty() || r.ec != std::errc{} || r.ptr != field.data() + field.size() || !std::isfinite(v))
      fail(name, ": expected ", shape, " (numbers separated by commas), got '", text, "'");
    out[i] = v;
    at = end + 1;
  }
  return out;
}

}  // namespace

void check_rrc_scale(const std::array<double, 2>& s, std::string_view name) {
  if (!(s[0] > 0 && s[0] <= s[1] && s[1] <= 1))
    fail(name, ": RandomResizedCrop's area fraction must be 0 < a <= b <= 1, got ", s[0], ",", s[1]);
}

void check_rrc_ratio(const std::array<double, 2>& r, std::string_view name) {
  if (!(r[0] > 0 && r[0] <= r[1] && std::isfinite(r[1])))
    fail(name, ": RandomResizedCrop's aspect ratio range must be 0 < a <= b, got ", r[0], ",", r[1]);
}

void check_hflip_p(double p, std::string_view name) {
  if (!(p >= 0 && p <= 1)) fail(name, ": a probability in [0, 1], got ", p);
}

void check_color_jitter(const std::array<double, 3>& j, std::string_view name) {
  for (double x : j)
    if (!(x >= 0 && x <= 100))
      fail(name, ": brightness, contrast and saturation strengths must each be in [0, 100], got ", j[0], ",", j[1],
           ",", j[2]);
}

const TransformPreset* find_transform_preset(std::string_view name) {
  for (const TransformPreset& p : kTransformPresets)
    if (p.name == name) return &p;
  return nullptr;
}

std::string transform_preset_list() {
  std::string s;
  const size_t n = std::size(kTransformPresets);
  for (size_t i = 0; i < n; ++i)
    s += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + std::string(kTransformPresets[i].name);
  return s;
}

void apply_augment(const AugmentOptions& a, TransformSpec& spec, std::string_view preset_name,
                   std::string_view prefix) {
  const TransformPreset* p = find_transform_preset(a.preset);
  if (!p) fail(preset_name, " must be ", transform_preset_list(), " (got '", a.preset, "')");
  const std::string pre(prefix);
  spec.mode = p->mode;
  if (p->mode == TransformMode::kEval) {  // its spec fields stay as they are: nothing reads them
    const char* given = a.rrc_scale      ? "rrc_scale"
                        : a.rrc_ratio    ? "rrc_ratio"
                        : a.hflip_p      ? "hflip_p"
                        : a.color_jitter ? "color_jitter"
                                         : nullptr;
    if (given)
      fail(pre, given, ": the ", a.preset, " transform draws nothing (resize + center crop); set ", preset_name,
           " to train, finetune or strong");
    return;
  }
  const auto scale = a.rrc_scale.value_or(p->scale), ratio = a.rrc_ratio.value_or(p->ratio);
  const double flip = a.hflip_p.value_or(p->hflip_p);
  const auto jitter = a.color_jitter.value_or(p->color_jitter);
  check_rrc_scale(scale, pre + "rrc_scale");
  check_rrc_ratio(ratio, pre + "rrc_ratio");
  check_hflip_p(flip, pre + "hflip_p");
  check_color_jitter(jitter, pre + "color_jitter");
  spec.scale_min = scale[0], spec.scale_max = scale[1];
  spec.ratio_min = ratio[0], spec.ratio_max = ratio[1];
  spec.hflip_p = flip;
  spec.color_jitter = jitter;
}

std::array<double, 2> parse_pair(std::string_view text, std::string_view name) {
  return parse_numbers<2>(text, name, "a,b");
}

std::array<double, 3> parse_triple(std::string_view text, std::string_view name) {
  return parse_numbers<3>(text, name, "a,b,c");
}

}  // namespace bt::media
