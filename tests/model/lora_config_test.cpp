// adapter_config.json's rank (model/lora_config.h read_adapter_config), torch-free: issue 53, item 3. `r` is a
// whole number in [1, kMaxLoraRank] read without a conversion that could wrap (4294967300 became 4) or cut (4.7
// became 4); what it costs is checked beside it (model/lora.h check_adapter_fits, tests/model/lora_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../common/error_of.h"
#include "model/lora_config.h"

using namespace bt::model;
using bt::test::error_of;
namespace fs = std::filesystem;

namespace {

class AdapterRank : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_);
    LoraSpec s = lora_spec(8, 16.0, 0.0, kDefaultLoraTargets, kDefaultLoraModulesToSave);
    write_adapter_config(path_, s);
    good_ = nlohmann::json::parse(std::ifstream(path_));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The error read_adapter_config gives for the written config with r replaced by `r` (raw JSON text), or "".
  std::string with_rank(const std::string& r) {
    std::string text = good_.dump();
    const std::string key = "\"r\":8";
    text.replace(text.find(key), key.size(), "\"r\":" + r);
    std::ofstream(path_, std::ios::trunc) << text;
    return error_of([&] { rank_ = read_adapter_config(path_).rank; });
  }

  const fs::path dir_ = fs::temp_directory_path() / ("bt_adapter_rank_" + std::to_string(getpid()));
  const std::string path_ = (dir_ / "adapter_config.json").string();
  nlohmann::json good_;
  int rank_ = 0;
};

TEST_F(AdapterRank, WholeNumbersInRangeAreRead) {
  for (const auto& [text, rank] : std::vector<std::pair<std::string, int>>{
           {"8", 8}, {"1", 1}, {"8.0", 8}, {"65536", kMaxLoraRank}, {"6.5536e4", 65536}}) {
    EXPECT_EQ(with_rank(text), "") << text;
    EXPECT_EQ(rank_, rank) << text;
  }
}

TEST_F(AdapterRank, NothingWrapsOrIsCut) {
  // 4294967300 = 2^32 + 4 and 4.7 were read as 4.
  for (const char* r : {"4294967300", "65537", "0", "-4", "-4294967292"}) {
    const std::string e = with_rank(r);
    EXPECT_EQ(e, path_ + ": r = " + r + " is outside [1, 65536]") << r;
  }
  for (const char* r : {"4.7", "0.5", "1e-300"}) {
    const std::string e = with_rank(r);
    EXPECT_EQ(e.rfind(path_ + ": r = ", 0), 0u) << e;
    EXPECT_NE(e.find(" is not a whole number (the adapters' rank)"), std::string::npos) << e;
  }
  for (const char* r : {"\"8\"", "true", "null", "[8]", "{}"})
    EXPECT_NE(with_rank(r).find(" is not a whole number"), std::string::npos) << r;
  // Past uint64 (a double to the JSON reader) and huge floats are whole numbers outside the range.
  for (const char* r : {"18446744073709551620", "1e300"})
    EXPECT_NE(with_rank(r).find("is outside [1, 65536]"), std::string::npos) << r;
  EXPECT_EQ(rank_, 0);  // never assigned by a refused config
}

TEST_F(AdapterRank, AMissingRankIsNamed) {
  nlohmann::json j = good_;
  j.erase("r");
  std::ofstream(path_, std::ios::trunc) << j.dump();
  EXPECT_EQ(error_of([&] { read_adapter_config(path_); }), path_ + ": no r (the adapters' rank)");
}

// Found by fuzz_adapter_config: "peft_type": 0 escaped as nlohmann's type_error (j.value on a number), not a line
// naming the file. Every field of the wrong type is one bt::Error naming adapter_config.json.
TEST_F(AdapterRank, FieldsOfTheWrongTypeAreOneLineNamingTheFile) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"peft_type", 0}, {"peft_type", nullptr}, {"peft_type", nlohmann::json::array()},
           {"lora_alpha", "16"}, {"lora_dropout", nlohmann::json::object()}, {"target_modules", 4},
           {"target_modules", nlohmann::json::array({1})}, {"modules_to_save", true}, {"use_dora", "yes"}}) {
    nlohmann::json j = good_;
    j[key] = value;
    std::ofstream(path_, std::ios::trunc) << j.dump();
    const std::string e = error_of([&] { read_adapter_config(path_); });
    EXPECT_EQ(e.rfind(path_ + ": ", 0), 0u) << key << " = " << value.dump() << ": " << e;
  }
}

}  // namespace
