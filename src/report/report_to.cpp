#include "report/report_to.h"

#include "common/error.h"

namespace bt::report {

ReportTo parse_report_to(const std::vector<std::string>& values) {
  ReportTo r;
  std::vector<std::string> words;
  for (const std::string& v : values) {
    size_t start = 0;
    for (size_t comma; (comma = v.find(',', start)) != std::string::npos; start = comma + 1)
      words.push_back(v.substr(start, comma - start));
    words.push_back(v.substr(start));
  }
  for (const std::string& w : words) {
    if (w == "none" && words.size() == 1) continue;
    if (w == "none") fail("--report_to none cannot be combined with an integration");
    if (w == "tensorboard") r.tensorboard = true;
    else if (w == "mlflow") r.mlflow = true;
    else if (w == "wandb") r.wandb = r.tensorboard = true;
    else if (w == "all") r.tensorboard = r.mlflow = true;
    else fail("--report_to must be none, all, tensorboard, mlflow or wandb, or several of them (got '", w, "')");
  }
  return r;
}

std::string report_to_words(const ReportTo& r) {
  std::string s;
  auto add = [&](bool on, const char* w) {
    if (on) s += (s.empty() ? "" : ",") + std::string(w);
  };
  add(r.tensorboard && !r.wandb, "tensorboard");
  add(r.mlflow, "mlflow");
  add(r.wandb, "wandb");
  return s.empty() ? "none" : s;
}

}  // namespace bt::report
