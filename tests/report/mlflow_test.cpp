// MLflow's file store, read back as mlflow's FileStore reads it: meta.yaml by this file's own flat-YAML reader,
// params/tags as whole files, metrics as "<timestamp> <value> <step>" lines parsed the way float()/int() would.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/error.h"
#include "report/mlflow.h"
#include "report/report_to.h"
#include "report/run_log.h"

namespace fs = std::filesystem;
using bt::report::MlflowRun;
using bt::report::MlflowStatus;
using bt::report::MlflowTarget;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f.good()) << p;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// key -> scalar, quotes removed ('' -> '); a flat mapping is all meta.yaml holds.
std::map<std::string, std::string> yaml(const fs::path& p) {
  std::map<std::string, std::string> out;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line)) {
    const size_t c = line.find(": ");
    EXPECT_NE(c, std::string::npos) << p << ": " << line;
    if (c == std::string::npos) continue;
    std::string v = line.substr(c + 2);
    if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
      std::string u;
      for (size_t i = 1; i + 1 < v.size(); ++i) u += v[i], i += (v[i] == '\'' && v[i + 1] == '\'');
      v = u;
    }
    out[line.substr(0, c)] = v;
  }
  return out;
}

struct Point {
  int64_t ts = 0;
  double value = 0;
  int64_t step = 0;
};
std::vector<Point> metric(const fs::path& p) {
  std::vector<Point> out;
  std::istringstream in(slurp(p));
  std::string ts, value, step;
  while (in >> ts >> value >> step) out.push_back({std::stoll(ts), std::strtod(value.c_str(), nullptr), std::stoll(step)});
  return out;
}

struct TempRoot {
  fs::path dir = fs::temp_directory_path() / ("bt_mlflow_" + std::to_string(getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempRoot() { fs::remove_all(dir); }
  ~TempRoot() { fs::remove_all(dir); }
};

bt::report::WindowRecord window(int64_t step, double epoch, double loss, double lr, double samples_per_s,
                                double grad_norm) {
  bt::report::WindowRecord r;
  r.step = step, r.epoch = epoch, r.loss = loss, r.lr = lr, r.samples_per_s = samples_per_s, r.grad_norm = grad_norm;
  return r;
}

MlflowTarget target(const fs::path& root, const std::string& experiment = "") {
  MlflowTarget t;
  t.root = root;
  t.experiment_name = experiment;
  return t;
}

}  // namespace

TEST(Mlflow, PythonFloatReprs) {
  using bt::report::python_float;
  EXPECT_EQ(python_float(0.25), "0.25");
  EXPECT_EQ(python_float(5e-05), "5e-05");
  EXPECT_EQ(python_float(1.0), "1.0");
  EXPECT_EQ(python_float(0.0), "0.0");
  EXPECT_EQ(python_float(123.0), "123.0");
  EXPECT_EQ(python_float(0.0001), "0.0001");
  EXPECT_EQ(python_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(python_float(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_float(-2.5), "-2.5");
  EXPECT_EQ(python_float(NAN), "nan");
  EXPECT_EQ(python_float(INFINITY), "inf");
  EXPECT_EQ(python_float(-INFINITY), "-inf");
}

TEST(Mlflow, KeysStayInTheirFolder) {
  using bt::report::mlflow_key;
  EXPECT_EQ(mlflow_key("eval/loss"), "eval/loss");
  EXPECT_EQ(mlflow_key("learning rate-2.x"), "learning rate-2.x");
  EXPECT_EQ(mlflow_key("../../etc/passwd"), "_/_/etc/passwd");
  EXPECT_EQ(mlflow_key("/abs"), "_/abs");
  EXPECT_EQ(mlflow_key("a//b/"), "a/_/b/_");
  EXPECT_EQ(mlflow_key("w:x?y\n"), "w_x_y_");
  EXPECT_EQ(mlflow_key(""), "_");
}

TEST(Mlflow, ReportToWords) {
  using bt::report::parse_report_to;
  auto r = parse_report_to({"all"});
  EXPECT_TRUE(r.tensorboard && r.mlflow && !r.wandb);
  r = parse_report_to({"tensorboard", "mlflow"});
  EXPECT_TRUE(r.tensorboard && r.mlflow && !r.wandb);
  r = parse_report_to({"mlflow,wandb"});
  EXPECT_TRUE(r.tensorboard && r.mlflow && r.wandb);  // wandb: the TensorBoard events are what W&B syncs
  EXPECT_FALSE(parse_report_to({"none"}).any());
  EXPECT_EQ(bt::report::report_to_words(parse_report_to({"mlflow"})), "mlflow");
  EXPECT_EQ(bt::report::report_to_words({}), "none");
  EXPECT_THROW(parse_report_to({"comet_ml"}), bt::Error);
  EXPECT_THROW(parse_report_to({"none", "mlflow"}), bt::Error);
}

TEST(Mlflow, NewStoreHasTheDefaultExperimentAndAFinishedRun) {
  TempRoot tmp;
  const fs::path root = tmp.dir / "mlruns";
  std::string run_id;
  int64_t before = bt::report::mlflow_now_ms();
  {
    MlflowRun run(target(root), "my-run");
    run_id = run.run_id();
    EXPECT_EQ(yaml(run.run_dir() / "meta.yaml")["status"], "1");  // RUNNING while training
    run.end(MlflowStatus::kFinished);
    run.end(MlflowStatus::kFailed);  // once ended, stays so
  }
  EXPECT_TRUE(fs::is_directory(root / ".trash"));
  auto exp = yaml(root / "0" / "meta.yaml");
  EXPECT_EQ(exp["name"], "Default");
  EXPECT_EQ(exp["experiment_id"], "0");
  EXPECT_EQ(exp["lifecycle_stage"], "active");
  EXPECT_EQ(exp["artifact_location"], "file://" + root.string() + "/0");
  EXPECT_GE(std::stoll(exp["creation_time"]), before);
  EXPECT_EQ(exp["last_update_time"], exp["creation_time"]);

  ASSERT_EQ(run_id.size(), 32u);
  EXPECT_EQ(run_id.find_first_not_of("0123456789abcdef"), std::string::npos);
  auto meta = yaml(root / "0" / run_id / "meta.yaml");
  EXPECT_EQ(meta["run_id"], run_id);
  EXPECT_EQ(meta["run_uuid"], run_id);
  EXPECT_EQ(meta["experiment_id"], "0");
  EXPECT_EQ(meta["run_name"], "my-run");
  EXPECT_EQ(meta["status"], "3");  // FINISHED
  EXPECT_EQ(meta["lifecycle_stage"], "active");
  EXPECT_EQ(meta["source_type"], "4");
  EXPECT_EQ(meta["tags"], "[]");
  EXPECT_EQ(meta["artifact_uri"], "file://" + (root / "0" / run_id / "artifacts").string());
  EXPECT_GE(std::stoll(meta["end_time"]), std::stoll(meta["start_time"]));
  EXPECT_GE(std::stoll(meta["start_time"]), before);
  EXPECT_TRUE(fs::is_directory(root / "0" / run_id / "artifacts"));
  EXPECT_EQ(slurp(root / "0" / run_id / "tags" / "mlflow.runName"), "my-run");
  EXPECT_EQ(slurp(root / "0" / run_id / "tags" / "mlflow.source.type"), "LOCAL");
  EXPECT_FALSE(slurp(root / "0" / run_id / "tags" / "mlflow.user").empty());
}

TEST(Mlflow, ParamsAsHfLogsThem) {
  TempRoot tmp;
  MlflowRun run(target(tmp.dir), "p");
  const auto dropped = run.log_params({{"learning_rate", 5e-05}, {"do_train", true}, {"resume_from_checkpoint", nullptr},
                                       {"output_dir", "runs/x y"}, {"per_device_train_batch_size", 16},
                                       {"dropout", NAN}, {"given", {{"seed", 1}}}, {"huge", std::string(6001, 'x')}});
  const fs::path params = run.run_dir() / "params";
  EXPECT_EQ(slurp(params / "learning_rate"), "5e-05");
  EXPECT_EQ(slurp(params / "do_train"), "True");
  EXPECT_EQ(slurp(params / "resume_from_checkpoint"), "None");
  EXPECT_EQ(slurp(params / "output_dir"), "runs/x y");
  EXPECT_EQ(slurp(params / "per_device_train_batch_size"), "16");
  EXPECT_EQ(slurp(params / "dropout"), "nan");
  EXPECT_EQ(slurp(params / "given"), "{\"seed\":1}");
  EXPECT_EQ(dropped, std::vector<std::string>{"huge"});  // over MLflow's 6000 characters: dropped, as HF does
  EXPECT_FALSE(fs::exists(params / "huge"));
  run.log_params({{"learning_rate", 1.0}});  // MLflow's parameters never change
  EXPECT_EQ(slurp(params / "learning_rate"), "5e-05");
}

TEST(Mlflow, RunLogRecordsBecomeMetricsAtTheirStepNanIncluded) {
  TempRoot tmp;
  fs::create_directories(tmp.dir);
  auto run = std::make_shared<MlflowRun>(target(tmp.dir / "mlruns", "bridgetune tests"), "m");
  {
    bt::report::MetricsLog log(tmp.dir / "metrics.jsonl", false, 0);
    bt::report::set_active_mlflow_run(run);  // as the recipe does: every run log of the run picks it up
    log.add_integrations("");
    bt::report::set_active_mlflow_run(nullptr);
    log.write(window(10, 0.5, 2.0, 2e-5, 90.0, 0.5));
    log.write(window(20, 1.0, NAN, 1e-5, 80.0, INFINITY));
    log.write(nlohmann::json{{"step", 20}, {"eval_loss", 1.5}, {"note", "not a metric"}, {"eval_ok", true}});
  }
  run->end(MlflowStatus::kFinished);
  const fs::path m = run->run_dir() / "metrics";
  const auto loss = metric(m / "loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss[0].step, 10);
  EXPECT_DOUBLE_EQ(loss[0].value, 2.0);
  EXPECT_EQ(loss[1].step, 20);
  EXPECT_TRUE(std::isnan(loss[1].value));  // "nan": float() reads it, the line keeps its 3 fields
  EXPECT_GT(loss[0].ts, 1600000000000);    // milliseconds
  EXPECT_TRUE(std::isinf(metric(m / "grad_norm")[1].value));
  EXPECT_DOUBLE_EQ(metric(m / "learning_rate")[0].value, 2e-5);
  EXPECT_DOUBLE_EQ(metric(m / "samples_per_second")[1].value, 80.0);
  EXPECT_DOUBLE_EQ(metric(m / "epoch")[1].value, 1.0);
  EXPECT_EQ(metric(m / "eval_loss").size(), 1u);
  EXPECT_FALSE(fs::exists(m / "note") || fs::exists(m / "eval_ok") || fs::exists(m / "step") || fs::exists(m / "lr"));
  // A named experiment: its own folder, found again by name by the next run.
  const std::string exp = run->experiment_id();
  EXPECT_NE(exp, "0");
  auto meta = yaml(tmp.dir / "mlruns" / exp / "meta.yaml");
  EXPECT_EQ(meta["name"], "bridgetune tests");
  EXPECT_EQ(meta["experiment_id"], exp);
  EXPECT_EQ(MlflowRun(target(tmp.dir / "mlruns", "bridgetune tests"), "again").experiment_id(), exp);
}

TEST(Mlflow, ReattachedRunGoesOnAndAnUnendedOneFails) {
  TempRoot tmp;
  std::string id;
  {
    MlflowRun run(target(tmp.dir), "first");  // never ended: an exception unwound past it
    id = run.run_id();
    run.log_metric("loss", 3.0, 1, 1000);
  }
  EXPECT_EQ(yaml(tmp.dir / "0" / id / "meta.yaml")["status"], "4");  // FAILED
  MlflowTarget t = target(tmp.dir);
  t.run_id = id;
  t.tags = {{"release", "rc1"}};
  MlflowRun again(t, "ignored");
  EXPECT_EQ(again.run_dir(), tmp.dir / "0" / id);
  auto meta = yaml(again.run_dir() / "meta.yaml");
  EXPECT_EQ(meta["status"], "1");
  EXPECT_EQ(meta["end_time"], "null");
  EXPECT_EQ(meta["run_name"], "first");
  again.log_metric("loss", 2.0, 2, 2000);
  again.end(MlflowStatus::kKilled);
  EXPECT_EQ(yaml(again.run_dir() / "meta.yaml")["status"], "5");
  EXPECT_EQ(metric(again.run_dir() / "metrics" / "loss").size(), 2u);
  EXPECT_EQ(slurp(again.run_dir() / "tags" / "release"), "rc1");
  t.run_id = "0123456789abcdef0123456789abcdef";
  EXPECT_THROW(MlflowRun(t, "x"), bt::Error);
}

TEST(Mlflow, TargetFromTheEnvironment) {
  setenv("MLFLOW_TRACKING_URI", "file:///tmp/some%20where/mlruns", 1);
  setenv("MLFLOW_EXPERIMENT_NAME", "exp", 1);
  setenv("MLFLOW_TAGS", R"({"team": "vision", "n": 2})", 1);
  auto t = bt::report::mlflow_target_from_env();
  EXPECT_EQ(t.root, fs::path("/tmp/some where/mlruns"));
  EXPECT_EQ(t.experiment_name, "exp");
  EXPECT_EQ(t.tags["team"], "vision");
  EXPECT_EQ(t.tags["n"], "2");
  setenv("MLFLOW_TRACKING_URI", "rel/store", 1);
  EXPECT_EQ(bt::report::mlflow_target_from_env().root, fs::absolute("rel/store"));
  setenv("MLFLOW_TRACKING_URI", "file:rel/store", 1);
  EXPECT_EQ(bt::report::mlflow_target_from_env().root, fs::absolute("rel/store"));
  unsetenv("MLFLOW_TRACKING_URI");
  EXPECT_EQ(bt::report::mlflow_target_from_env().root, fs::absolute("mlruns"));
  setenv("MLFLOW_TRACKING_URI", "http://localhost:5000", 1);
  try {
    bt::report::mlflow_target_from_env();
    ADD_FAILURE() << "a tracking server is no file store";
  } catch (const bt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("MLFLOW_TRACKING_URI=http://localhost:5000"), std::string::npos) << e.what();
  }
  unsetenv("MLFLOW_TRACKING_URI");
  setenv("MLFLOW_TAGS", "[1]", 1);
  EXPECT_THROW(bt::report::mlflow_target_from_env(), bt::Error);
  unsetenv("MLFLOW_TAGS");
  unsetenv("MLFLOW_EXPERIMENT_NAME");
}
