// --report_to: the integrations a run reports to, in the Hugging Face Trainer's words. Torch-free.
//
// Contract:
//  - Each value of the flag may itself be a comma-separated list (`--report_to tensorboard mlflow`,
//    `--report_to tensorboard,mlflow`); "none" means nothing and goes alone; "all" is every local integration
//    (tensorboard + mlflow); "wandb" has no client here: it means TensorBoard events, which `wandb sync
//    --sync-tensorboard DIR` uploads (the recipe says so in one line).
//  - Any other word fails with one line naming the flag, the words it takes and the word given.
#pragma once
#include <string>
#include <vector>

namespace bt::report {

struct ReportTo {
  bool tensorboard = false;  // event files under --logging_dir (report/tensorboard.h)
  bool mlflow = false;       // MLflow's local file store (report/mlflow.h)
  bool wandb = false;        // implies tensorboard
  bool any() const { return tensorboard || mlflow || wandb; }
};

ReportTo parse_report_to(const std::vector<std::string>& values);
// The words of `r` ("none" when empty), comma-separated: what --help shows as the default.
std::string report_to_words(const ReportTo& r);

}  // namespace bt::report
