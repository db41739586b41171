// The HF example's recipe around run_train (contract in train/recipe.h): phases, splits, final evaluations, the
// HF Trainer's files.
#include "train/recipe.h"

#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <optional>

#include "common/atomic_file.h"
#include "common/device_name.h"
#include "common/error.h"
#include "common/file_gate.h"
#include "common/paths.h"
#include "common/terminal.h"
#include "data/captions_dataset.h"
#include "eval/metrics.h"
#include "eval/torch/embed_eval.h"
#include "eval/torch/matching_source.h"
#include "hub/hub.h"
#include "loader/loader.h"
#include "model/api.h"
#include "model/bridgetower.h"
#include "model/device.h"
#include "report/hf_outputs.h"
#include "report/mlflow.h"
#include "report/run_log.h"
#include "source/source.h"
#include "text/tokenizer.h"
#include "index/embed_index.h"
#include "train/run_settings.h"
#include "feed/torch/gpu_media.h"
#include "train/torch/train_setup.h"

namespace bt::train {

namespace fs = std::filesystem;

std::string default_logging_dir(const std::string& output_dir) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char when[32], host[256] = {};
  std::strftime(when, sizeof when, "%b%d_%H-%M-%S", &tm);  // HF: datetime.now().strftime("%b%d_%H-%M-%S")
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "localhost");
  return (fs::path(output_dir) / "runs" / (std::string(when) + "_" + host)).string();
}

namespace {

struct Split {
  std::string name, path, prefix, flag;  // "validation", its data, "eval", the flag that asked for it
  int64_t max_rows = 0;
};

// The data of every phase, resolved before anything runs; what run_train is given beyond the user's flags.
struct Plan {
  bool train = false, legacy = false;
  std::vector<Split> evals;  // validation (eval), then test (test)
  TrainInputs inputs;
};

// --dataset_name's splits (an unknown config or split fails here, listing what exists). Without it, the flags'.
void resolve_splits(const RecipeOptions& r, Plan& p, std::string& validation, std::string& test) {
  const TrainOptions& t = r.train;
  if (r.dataset.name.empty()) return;
  if (!t.train_file.empty() || !t.train_shards.empty() || !t.validation_file.empty() || !r.test_file.empty())
    fail("--dataset_name ", r.dataset.name, ": give it or --train_file/--validation_file/--test_file, not both");
  if (p.train) {
    p.inputs.train_path = hub::resolve_dataset_split(r.dataset, "train", p.legacy ? "--split" : "--do_train");
    p.inputs.train_named = "--dataset_name " + r.dataset.name + " (split train)";
  }
  if (r.do_eval) validation = hub::resolve_dataset_split(r.dataset, "validation", "--do_eval");
  if (p.legacy) {  // bridgetune's default: evaluate on the validation split when the dataset has one
    try {
      validation = hub::resolve_dataset_split(r.dataset, "validation");
    } catch (const Error&) {
    }
  }
  if (r.do_predict) test = hub::resolve_dataset_split(r.dataset, "test", "--do_predict");
}

Plan plan_of(const RecipeOptions& r) {
  const TrainOptions& t = r.train;
  Plan p;
  p.legacy = !r.do_train && !r.do_eval && !r.do_predict;
  p.train = r.do_train || p.legacy;
  p.inputs.train = p.train;
  std::string validation = t.validation_file, test = r.test_file;
  resolve_splits(r, p, validation, test);
  if (r.do_eval && validation.empty())
    fail("--do_eval needs a validation split: give --dataset_name (with a validation split) or --validation_file");
  if (r.do_predict && test.empty())
    fail("--do_predict needs a test split: give --dataset_name (with a test split) or --test_file");
  if (!p.train && t.model_name_or_path.empty())
    fail("--do_eval/--do_predict without --do_train evaluate a trained model: give --model_name_or_path");
  if (r.do_eval) p.evals.push_back({"validation", validation, "eval", "--do_eval", t.max_eval_samples});
  if (r.do_predict) p.evals.push_back({"test", test, "test", "--do_predict", r.max_predict_samples});
  p.inputs.validation_path = !p.legacy && !r.do_eval ? std::string() : validation;  // HF: no eval set without --do_eval
  p.inputs.eval_at_end = p.legacy || !r.do_eval;  // with --do_eval the recipe's final evaluation replaces run_train's
  if (r.media_pipeline_where_possible && !t.use_media_pipeline) {
    std::string why = "it needs --device cuda";
    if (names_cuda(t.device) && feed::GpuMediaPipeline::available(&why)) p.inputs.media_pipeline = true;
    else if (t.rank == 0)
      std::printf("note: --mediapipe_dataloader: the GPU media pipeline does not run here (%s); the CPU loader decodes\n",
                  why.c_str());
  }
  if (r.report_to.tensorboard)
    p.inputs.tensorboard_dir = r.logging_dir.empty() ? default_logging_dir(t.output_dir) : r.logging_dir;
  return p;
}

// One final evaluation (HF's trainer.evaluate(dataset, metric_key_prefix)): the trainer's evaluation of a split
// (eval/torch/embed_eval.h) through a loader with the validation loader's options (the model's mean/std
// included), and the contest's task when the split has its shape (caption_choices + label); timed, HF's key names.
nlohmann::json evaluate_split(model::BridgeTowerForContrastiveLearning& m, const text::Tokenizer& tok, const Split& s,
                              const TrainOptions& t, const RunSettings& rs, const torch::Device& device) {
  auto ds = source::open_source(s.path, train_source_options(t, rs, s.flag, s.max_rows, /*locality_order=*/false)).dataset;
  loader::Loader loader(ds, loader_options(t, rs, m->config(), t.per_device_eval_batch_size, /*train=*/false));
  const eval::MatchingSourceOptions mo = eval::matching_source_options(rs.read, s.max_rows, s.flag);
  std::optional<eval::OpenedMatching> matching;
  if (const std::string data = eval::matching_data_of(s.path, mo); !data.empty()) matching = eval::open_matching(data, mo);
  const eval::SplitEval e = eval::evaluate_split(m, tok, ds, loader, matching ? &matching->set : nullptr,
                                                 embed_options(t, rs, m->config(), device));
  if (e.retrieval.loss_samples == 0)
    fail(s.flag, " ", s.path, ": no batch of 2 or more rows to evaluate (", ds->size(), " rows)");
  nlohmann::json metrics = eval::to_json(e, s.prefix);
  const std::string p = s.prefix + "_";
  metrics[p + "runtime"] = e.seconds;
  metrics[p + "samples_per_second"] = double(e.retrieval.pairs) / e.seconds;
  metrics[p + "steps_per_second"] = double(e.retrieval.batches) / e.seconds;
  return metrics;
}

// HF's train metrics (train_results.json keeps bridgetune's keys beside them).
nlohmann::json train_metrics(const TrainSummary& sum, const TrainOptions& t, const RunSettings& rs) {
  const double epoch = sum.steps_per_epoch > 0 ? double(sum.global_step) / double(sum.steps_per_epoch) : 0.0;
  const double per_step = double(rs.train_batch) * t.gradient_accumulation_steps * t.world_size;
  return {{"epoch", epoch},
          {"total_flos", sum.results.value("total_flos", 0.0)},  // HF's meaning (model/flops.h: hf_total_flos)
          {"train_loss", sum.train_loss},
          {"train_runtime", sum.train_runtime},
          {"train_samples", sum.train_samples},
          {"train_samples_per_second", sum.train_samples_per_second},
          {"train_steps_per_second", sum.train_samples_per_second / per_step}};
}

report::ModelCard card_of(const RecipeOptions& r, const RunSettings& rs, const nlohmann::json& eval,
                          const nlohmann::json& history) {
  const TrainOptions& t = r.train;
  report::ModelCard c;
  c.model_name = fs::path(t.output_dir).lexically_normal().filename().string();
  if (c.model_name.empty()) c.model_name = fs::path(t.output_dir).lexically_normal().parent_path().filename().string();
  c.base_model = t.model_name_or_path;
  c.dataset = !r.dataset.name.empty() ? r.dataset.name : t.train_file;  // the demo's: none
  c.dataset_config = r.dataset.config;
  auto& h = c.hyperparameters;
  h["learning_rate"] = rs.learning_rate;
  h["train_batch_size"] = rs.train_batch;
  h["eval_batch_size"] = t.per_device_eval_batch_size;
  h["seed"] = t.seed;
  if (t.world_size > 1) h["distributed_type"] = "multi-process (gloo/nccl)", h["num_devices"] = t.world_size;
  if (t.gradient_accumulation_steps > 1) h["gradient_accumulation_steps"] = t.gradient_accumulation_steps;
  h["total_train_batch_size"] = rs.train_batch * t.gradient_accumulation_steps * t.world_size;
  h["optimizer"] = str("AdamW with betas=(", t.adam_beta1, ",", t.adam_beta2, ") and epsilon=", t.adam_epsilon,
                       ", weight_decay=", t.weight_decay);
  h["lr_scheduler_type"] = t.lr_scheduler_type;
  if (t.warmup_steps > 0) h["lr_scheduler_warmup_steps"] = t.warmup_steps;
  else if (rs.warmup_ratio > 0) h["lr_scheduler_warmup_ratio"] = rs.warmup_ratio;
  if (t.max_steps > 0) h["training_steps"] = t.max_steps;
  else h["num_epochs"] = t.num_train_epochs;
  if (rs.bf16) h["mixed_precision_training"] = "bf16 autocast";
  c.eval_metrics = eval;
  c.log_history = history;
  return c;
}


// The final evaluations (eval, then test) of the model in model_dir, each a run-log record and a <prefix>_results.json.
// Returns the eval split's metrics (empty without --do_eval).
nlohmann::json final_evaluations(const Plan& plan, const TrainOptions& t, const RunSettings& rs, const std::string& model_dir,
                                 report::MetricsLog& log, const TrainSummary& sum) {
  nlohmann::json eval_metrics = nlohmann::json::object();
  if (plan.evals.empty()) return eval_metrics;
  const torch::Device device = model::parse_device(t.device);
  auto m = model::load_contrastive(model_dir, model::ModelBudget{false, t.per_device_eval_batch_size, t.max_model_bytes});
  model::configure_inference_threads(t.torch_threads, t.dataloader_num_workers, device, *m);
  m->to(device);
  // The trained folder holds its tokenizer; a given model may need --tokenizer_name (eval/torch/embed_eval.h).
  const std::string tokenizer_dir = plan.train || t.tokenizer_name.empty()
      ? std::string()
      : hub::resolve(t.tokenizer_name, hub::RepoType::Model, t.model_revision, t.cache_dir, "--tokenizer_name");
  const text::Tokenizer tok = eval::model_tokenizer(model_dir, tokenizer_dir, m->config().text);
  std::printf("\n");
  for (const Split& s : plan.evals) {
    nlohmann::json metrics = evaluate_split(m, tok, s, t, rs, device);
    if (plan.train) metrics["epoch"] = double(sum.global_step) / double(std::max<int64_t>(1, sum.steps_per_epoch));
    nlohmann::json rec = metrics;  // HF logs them: log_history and TensorBoard
    rec["step"] = sum.global_step;
    log.write(rec);
    report::save_hf_metrics(t.output_dir, s.prefix, metrics);
    if (s.prefix == "eval") eval_metrics = metrics;
    std::printf("***** %s metrics *****\n", s.prefix.c_str());
    for (const auto& [k, v] : metrics.items())
      std::printf("  %-28s = %s\n", printable(k).c_str(),
                  printable(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).c_str());
  }
  return eval_metrics;
}

// trainer_state.json (HF schema, log_history from the run log) and the model card of a finished training run.
void write_state_and_card(const RecipeOptions& r, const RunSettings& rs, const TrainSummary& sum,
                          const nlohmann::json& eval_metrics) {
  const TrainOptions& t = r.train;
  const fs::path out(t.output_dir);
  report::HfStateInfo info;
  info.global_step = sum.global_step, info.max_steps = sum.max_steps, info.steps_per_epoch = sum.steps_per_epoch;
  info.logging_steps = rs.logging_steps, info.train_batch_size = rs.train_batch;
  info.eval_steps = sum.eval_steps, info.save_steps = sum.save_steps;
  const double steps_per_epoch = double(std::max<int64_t>(1, sum.steps_per_epoch));
  info.num_train_epochs = t.max_steps <= 0 ? t.num_train_epochs : std::ceil(double(sum.max_steps) / steps_per_epoch);
  info.best_metric = sum.best_metric;
  info.best_model_checkpoint = sum.best_model_checkpoint;
  info.stopped_early = !sum.early_stop_reason.empty();
  info.total_flos = sum.results.value("total_flos", 0.0);
  report::write_hf_trainer_state(out / "trainer_state.json", out / "metrics.jsonl", info);
  const auto history = report::read_json_file(out / "trainer_state.json")["log_history"];
  write_file_atomic(out / "README.md", report::model_card_markdown(card_of(r, rs, eval_metrics, history)));
}

// The demo ends by using its model: the held-out pictures become a search index, and one held-out description
// (the caption without its joke) finds its pictures, as `bridgetune encode` / `bridgetune search` would.
void use_the_demo_model(const TrainOptions& t, const RunSettings& rs) {
  const fs::path out(t.output_dir), index_dir = out / "demo_index";
  index::EncodeOptions eo;
  eo.model_name_or_path = out.string();
  eo.data = rs.validation_path;
  eo.output_dir = index_dir.string();
  eo.dataloader_num_workers = t.dataloader_num_workers;
  eo.device = t.device;
  eo.bf16 = rs.bf16;
  eo.quiet = true;
  std::printf("\n***** using the model: bridgetune encode + search on the held-out pictures *****\n");
  index::run_encode(eo);
  const std::string texts = read_small_file((index_dir / "texts.jsonl").string(), 1ull << 30);
  const nlohmann::json first = nlohmann::json::parse(texts.substr(0, texts.find('\n')), nullptr, false);
  std::string query = first.is_object() ? first.value("text", "") : "";
  query = query.substr(0, query.find('"'));
  while (!query.empty() && query.back() == ' ') query.pop_back();
  index::SearchOptions so;
  so.index = index_dir.string();
  so.query = query;
  so.top_k = 3;
  so.contact_sheet = (out / "demo_search.png").string();
  so.device = t.device;
  std::printf("query: %s\n", printable(query).c_str());
  index::run_search(so);
  std::printf("try it: %s search --index %s --query \"a teal balloon at the top centre\"\n", "bridgetune",
              printable(index_dir.string()).c_str());
  std::fflush(stdout);
}

// --report_to mlflow (rank 0): the run, started before anything trains, with the run's arguments as parameters
// (training_args.json's: the flags as given under the values the run used). nullptr: no MLflow.
std::shared_ptr<report::MlflowRun> start_mlflow(const RecipeOptions& r, const RunSettings& rs) {
  const TrainOptions& t = r.train;
  if (!r.report_to.mlflow || t.rank != 0) return nullptr;
  const fs::path dir = fs::absolute(t.output_dir).lexically_normal();  // "runs/x/", ".": the folder's own name
  const std::string name = (dir.has_filename() ? dir : dir.parent_path()).filename().string();  // --run_name: ignored
  auto run = std::make_shared<report::MlflowRun>(report::mlflow_target_from_env(), name);
  nlohmann::json params = r.arguments;
  params.update(effective_arguments(t, rs));
  std::string dropped;
  for (const std::string& k : run->log_params(params)) dropped += (dropped.empty() ? "" : ", ") + k;
  if (!dropped.empty()) std::printf("note: MLflow: parameters over 6000 characters not logged (as HF): %s\n", dropped.c_str());
  return run;
}

// The phases and the HF Trainer's files; false when training stopped early (--stop_after_step): no final outputs.
bool run_phases(const RecipeOptions& r, const Plan& plan, const RunSettings& rs, const report::MlflowRun* mlflow) {
  const TrainOptions& t = r.train;
  const fs::path out(t.output_dir);
  TrainSummary sum;
  if (plan.train && !(sum = run_train(t, rs, r.hooks)).completed) return false;  // stopped early: as if killed
  if (t.rank != 0) return true;                                                  // rank 0 writes
  // The trained model (saved by run_train), or the given one.
  std::string model_dir = out.string();
  if (!plan.train) {
    model_dir = hub::resolve(t.model_name_or_path, hub::RepoType::Model, t.model_revision, t.cache_dir,
                             "--model_name_or_path");
    make_output_folder(out, "--output_dir");
  }
  report::MetricsLog log(out / "metrics.jsonl", fs::exists(out / "metrics.jsonl"), INT64_MAX);
  log.add_integrations(rs.tensorboard_dir);
  if (plan.train) {
    const nlohmann::json m = train_metrics(sum, t, rs);
    report::save_hf_metrics(out, "train", m, sum.results);  // train_results.json: bridgetune's keys plus HF's
    nlohmann::json rec = m;
    rec.erase("train_samples");
    rec["step"] = sum.global_step;
    log.write(rec);  // HF logs the run's totals at its end: log_history and TensorBoard
  }
  const nlohmann::json eval_metrics = final_evaluations(plan, t, rs, model_dir, log, sum);
  if (plan.train) {  // as HF, which saves training_args.bin with the trained model (an eval leaves a run's alone)
    nlohmann::json args = r.arguments;  // the flags as given, under the values the run used
    args.update(effective_arguments(t, rs));
    report::write_json_atomic(out / "training_args.json", args);
    write_state_and_card(r, rs, sum, eval_metrics);
  }
  if (r.hooks.quiet) return true;
  std::string files = "all_results.json";
  if (plan.train) files += ", trainer_state.json, training_args.json, README.md (model card)";
  for (const Split& s : plan.evals) files += ", " + s.prefix + "_results.json";
  if (!rs.tensorboard_dir.empty()) files += "; TensorBoard events in " + rs.tensorboard_dir;
  if (mlflow)
    files += str("; MLflow run ", mlflow->run_id(), " (experiment ", mlflow->experiment_id(), ") in ",
                 mlflow->root().string(), ": mlflow ui --backend-store-uri ", mlflow->root().string());
  std::printf("HF Trainer files in %s: %s\n", printable(out.string()).c_str(), printable(files).c_str());
  std::fflush(stdout);
  if (plan.train && rs.demo) use_the_demo_model(t, rs);
  return true;
}

// While the recipe runs, its MLflow run is the process's active one (the trainer's run log mirrors into it).
struct ActiveMlflowRun {
  explicit ActiveMlflowRun(std::shared_ptr<report::MlflowRun> run) { report::set_active_mlflow_run(std::move(run)); }
  ~ActiveMlflowRun() { report::set_active_mlflow_run(nullptr); }
};

}  // namespace

void run_recipe(const RecipeOptions& r) {
  const TrainOptions& t = r.train;
  const Plan plan = plan_of(r);
  const RunSettings rs = resolve_settings(t, plan.inputs);
  if (t.rank == 0) {
    for (const std::string& note : rs.notes) std::printf("%s\n", printable(note).c_str());
    if (r.report_to.wandb)  // no W&B client here: the TensorBoard events carry the run to it
      std::printf("note: --report_to wandb: bridgetune has no W&B client; upload this run's TensorBoard events with "
                  "`wandb sync --sync-tensorboard %s`\n", printable(rs.tensorboard_dir).c_str());
  }
  const std::shared_ptr<report::MlflowRun> mlflow = start_mlflow(r, rs);
  const ActiveMlflowRun active(mlflow);
  try {
    const bool completed = run_phases(r, plan, rs, mlflow.get());
    if (mlflow) mlflow->end(completed ? report::MlflowStatus::kFinished : report::MlflowStatus::kKilled);
  } catch (const StopRequested&) {  // a signal: MLflow's KILLED, as its own client marks a run it was stopped in
    if (mlflow) mlflow->end(report::MlflowStatus::kKilled);
    throw;
  } catch (...) {
    if (mlflow) mlflow->end(report::MlflowStatus::kFailed);
    throw;
  }
}

}  // namespace bt::train
