// Filesystem problems as one-line messages that name the path and what to fix, instead of libstdc++'s
// "filesystem error: status: Too many levels of symbolic links [PATH]": a symbolic link loop, a link to nothing,
// a file where a folder belongs. make_output_folder() is the one way a command creates the folder it writes
// (--output_dir, an index folder); main() turns any filesystem_error that escapes into filesystem_error_line().
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

namespace bt {

// Why a path failed with `ec`, to follow "PATH: ", with the fix where there is one: "a symbolic link loop (fix or
// remove the link)" for ELOOP, else the system's message.
std::string path_error_reason(const std::error_code& ec);

// Why `path` is a link that leads nowhere or in circles ("a symbolic link to T, which does not exist (create it
// or remove the link)"), or "" when it is not such a link.
std::string broken_link_problem(const std::filesystem::path& path);

// Why `path` cannot be the folder a command writes into, or "" when it can (it may not exist yet).
std::string output_folder_problem(const std::filesystem::path& path);

// Creates `path` and its parents when missing; throws bt::Error "FLAG PATH: why" (a broken link on the way, a
// file in its place, no permission).
void make_output_folder(const std::filesystem::path& path, const std::string& flag);

// "PATH: why (fix)" for a filesystem_error nobody caught (main.cpp).
std::string filesystem_error_line(const std::filesystem::filesystem_error& e);

}  // namespace bt
