// Crash-safe checkpoint directories: output_dir/checkpoint-N/ appears complete or not at all.
// A StagedDir is written under output_dir/.tmp-checkpoint-N.<pid>/; commit() fsyncs every file and the folder,
// then renames it into place (replacing an older checkpoint-N only after the new one is durable) and fsyncs the
// parent. A kill at any moment leaves every earlier checkpoint-N intact; leftover .tmp-* folders are removed by
// remove_stale_staging(). Rotation renames a folder to .del-checkpoint-K.<pid> before deleting it, so a kill
// mid-delete never leaves a half-deleted checkpoint-K listed. "latest" takes the newest complete checkpoint
// (see checkpoint_problem()), after remove_stale_staging(). Torch-free on purpose: the trainer's tensors are
// serialized by the caller.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bt::train {

namespace fs = std::filesystem;

class StagedDir {
 public:
  StagedDir(const fs::path& parent, const std::string& final_name);
  ~StagedDir();  // an uncommitted staging folder is removed
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;

  const fs::path& path() const { return tmp_; }
  void commit();
  const fs::path& final_path() const { return final_; }

 private:
  fs::path parent_, tmp_, final_;
  bool committed_ = false;
};

struct CheckpointRef {
  int64_t step;
  fs::path path;
};

// checkpoint-N folders of output_dir, sorted by N (folders whose name does not parse are ignored). An entry named
// checkpoint-N that cannot be followed (a symbolic link loop, a link to nothing) is not listed: when `broken` is
// given it gets "checkpoint-N: why" for each.
std::vector<CheckpointRef> list_checkpoints(const fs::path& output_dir, std::vector<std::string>* broken = nullptr);
// The file of a checkpoint holding bridgetune's exact-resume state (data position, loss sums, settings):
// bridgetune_state.json. Checkpoints written before the Hugging Face trainer_state.json joined them kept that state
// in trainer_state.json (format "bridgetune-trainer-state-1"): such a folder's trainer_state.json is returned.
inline constexpr const char* kResumeStateFile = "bridgetune_state.json";
fs::path resume_state_file(const fs::path& checkpoint_dir);
// Why `dir` cannot be resumed from, or "" when it can (train/checkpoint_manifest.h: sizes and checksums where it
// has a manifest): its resume_state_file() must parse as an object with an
// integer global_step, and every *.safetensors file must have a well-formed header (8-byte length + JSON object
// within the file). Cheap: reads the small JSON files and the safetensors headers only.
std::string checkpoint_problem(const fs::path& dir);
// "latest" → remove_stale_staging(output_dir), then the newest checkpoint-N without a checkpoint_problem()
// (incomplete ones, and broken links named checkpoint-N, are skipped with a warning on stderr; error if none is
// usable); "latest_or_none" the same, but an output_dir with no checkpoint at all (or none yet) gives an empty path:
// start from scratch. Any other value must be a checkpoint folder with a resume state file.
fs::path resolve_resume_dir(const std::string& value, const fs::path& output_dir);
// Keep the newest `limit` checkpoints (limit <= 0: keep all) and checkpoint-<keep_step> (the best model's, kept
// as HF keeps it: see checkpoints_to_delete in train/model_selection.h). Returns the folders removed.
std::vector<fs::path> rotate_checkpoints(const fs::path& output_dir, int64_t limit, int64_t keep_step = -1);
// Removes .tmp-* staging folders and files, .del-* folders of an interrupted rotation and *.tmp.<pid> files
// of an interrupted atomic write; puts back a .old-checkpoint-N whose replacement never arrived.
void remove_stale_staging(const fs::path& output_dir);
// Moves every file of `staging` into `dest` (one rename each, after fsyncing them), then removes `staging`:
// used for the final model, which lives in output_dir itself.
void move_files_into(const fs::path& staging, const fs::path& dest);
// The files that say a run finished and what it measured (train_results.json and the other *_results.json,
// trainer_state.json, training_args.json, training_plot.png): written after the final model, in that order.
extern const char* const kFinishedRunFiles[7];
// The final model's publication: the finished-run files of an earlier run are removed (and the removal made
// durable) before the first new model file arrives, then move_files_into(). A kill anywhere in between leaves a
// folder without results (an unfinished run), never new weights beside an earlier run's results.
void publish_final_model(const fs::path& staging, const fs::path& output_dir);

}  // namespace bt::train
