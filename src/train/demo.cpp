#include "train/demo.h"

#include <cstdio>

#include "common/terminal.h"

namespace bt::train::demo {

namespace fs = std::filesystem;

std::string train_dir(const fs::path& output_dir) { return (output_dir / "demo_data" / "train").string(); }
std::string validation_dir(const fs::path& output_dir) { return (output_dir / "demo_data" / "validation").string(); }

void write_data(const fs::path& output_dir, bool quiet) {
  data::SynthOptions train;
  train.n = kTrainRows;
  train.images = kTrainImages;
  train.seed = 1;
  train.min_width = 160, train.max_width = 320;
  train.accents = true;
  data::SynthOptions val = train;
  val.n = kValidationRows, val.images = kValidationImages, val.seed = 2;
  if (!quiet)
    std::printf("generating demo data (%zu + %zu cartoon rows) in %s\n", train.n, val.n,
                printable((output_dir / "demo_data").string()).c_str());
  data::write_synth(train_dir(output_dir), train);
  data::write_synth(validation_dir(output_dir), val);
}

}  // namespace bt::train::demo
