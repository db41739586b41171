// Helpers for the data tests (and bench/data, which shares them): a scratch folder removed at the end of the test,
// file writing, and WebDataset tars built in memory.
#pragma once
#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bt::data::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "bt_data_test_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

using TarMembers = std::vector<std::pair<std::string, std::string>>;  // (member name, bytes), in archive order

// A pax tar of regular members, in memory; throws std::runtime_error when libarchive refuses a member.
inline std::string tar_of(const TarMembers& members) {
  size_t room = 10240;  // the end-of-archive blocks, padded to libarchive's 10 KiB block
  for (const auto& [name, data] : members)  // headers (a long name goes into a pax header, twice) + data, in blocks
    room += 2048 + 2 * name.size() + (data.size() + 511) / 512 * 512;
  std::string out(room, '\0');
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  bool ok = archive_write_open_memory(a, out.data(), out.size(), &used) == ARCHIVE_OK;
  for (const auto& [name, data] : members) {
    if (!ok) break;
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, name.c_str());
    archive_entry_set_size(e, la_int64_t(data.size()));
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    ok = archive_write_header(a, e) == ARCHIVE_OK &&
         archive_write_data(a, data.data(), data.size()) == la_ssize_t(data.size());
    archive_entry_free(e);
  }
  ok = archive_write_close(a) == ARCHIVE_OK && ok;
  archive_write_free(a);
  if (!ok) throw std::runtime_error("tar_of: libarchive refused a member");
  out.resize(used);
  return out;
}

}  // namespace bt::data::testing
