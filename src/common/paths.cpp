#include "common/paths.h"

#include "common/error.h"

namespace bt {
namespace fs = std::filesystem;

std::string path_error_reason(const std::error_code& ec) {
  if (ec == std::errc::too_many_symbolic_link_levels) return "a symbolic link loop (fix or remove the link)";
  if (ec == std::errc::permission_denied) return "permission denied";
  if (ec == std::errc::not_a_directory) return "a file stands where its path needs a folder";
  return ec.message();
}

std::string broken_link_problem(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec)) || ec) return "";
  (void)fs::status(path, ec);
  if (ec == std::errc::no_such_file_or_directory) {
    std::error_code ec2;
    const fs::path target = fs::read_symlink(path, ec2);
    return "a symbolic link to " + (ec2 ? std::string("a path") : target.string()) +
           ", which does not exist (create it or remove the link)";
  }
  return ec ? path_error_reason(ec) : "";
}

std::string output_folder_problem(const fs::path& path) {
  if (std::string why = broken_link_problem(path); !why.empty()) return why;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec == std::errc::no_such_file_or_directory) return "";  // made by make_output_folder()
  if (ec) return path_error_reason(ec);
  if (!fs::is_directory(st)) return "not a folder (a file is in its place)";
  return "";
}

void make_output_folder(const fs::path& path, const std::string& flag) {
  if (std::string why = output_folder_problem(path); !why.empty()) fail(flag, " ", path.string(), ": ", why);
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!ec) return;
  // Name the component that stopped it: a parent that is a broken link says more than "File exists".
  for (fs::path p = path.parent_path(); !p.empty() && p != p.parent_path(); p = p.parent_path())
    if (std::string why = output_folder_problem(p); !why.empty())
      fail(flag, " ", path.string(), ": ", p.string(), ": ", why);
  fail(flag, " ", path.string(), ": cannot create the folder (", ec.message(), ")");
}

std::string filesystem_error_line(const fs::filesystem_error& e) {
  const std::string where = !e.path1().empty() ? e.path1().string() : e.path2().string();
  return (where.empty() ? std::string("a path") : where) + ": " + path_error_reason(e.code());
}

}  // namespace bt
