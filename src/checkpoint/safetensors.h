// Torch-free reader/writer of the Hugging Face safetensors format:
//   [u64 little-endian N][N bytes JSON header][data]
// header = {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}}
// with offsets relative to the data section. The header is untrusted: parse() validates the length, the JSON,
// the dtypes, that shape x dtype size == byte span, that spans lie inside the data and do not overlap, and
// throws bt::Error naming the source otherwise. Files are mmap'd read-only; TensorView::data points into the
// mapping and stays valid while the SafeTensors object lives. write_safetensors() writes the HF layout
// (header padded with spaces to 8 bytes, "__metadata__": {"format": "pt"}) atomically (temp, fsync, rename).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bt::checkpoint {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

std::string_view dtype_name(DType d);
size_t dtype_size(DType d);
// Returns false for names this reader does not support.
bool parse_dtype(std::string_view name, DType* out);

struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the mapping (or the caller's buffer for parse())
  size_t nbytes = 0;
  int64_t numel() const;
};

class SafeTensors {
 public:
  // mmap `path` and parse it.
  static SafeTensors open(const std::string& path);
  // Parse an in-memory image (not copied: `bytes` must outlive the result). `what` names it in errors.
  static SafeTensors parse(const uint8_t* bytes, size_t size, std::string_view what);

  SafeTensors(SafeTensors&&) noexcept;
  SafeTensors& operator=(SafeTensors&&) noexcept;
  ~SafeTensors();

  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(std::string_view name) const;  // nullptr when absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::string& source() const { return source_; }

 private:
  SafeTensors() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  std::string source_;
  std::vector<TensorView> tensors_;  // in header order
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write: `data` must hold exactly numel(shape) * dtype_size(dtype) bytes.
struct TensorOut {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

// Write `tensors` (in the given order, data packed contiguously) to `path` atomically. `metadata` is stored
// as "__metadata__"; {"format": "pt"} is added unless present. Throws bt::Error on I/O failure or bad input.
void write_safetensors(const std::string& path, const std::vector<TensorOut>& tensors,
                       std::map<std::string, std::string> metadata = {});

// model.safetensors.index.json: {"weight_map": {"<tensor>": "<shard file>"}}. Returns tensor -> shard file
// name (a plain file name in the same directory; paths with '/' or '..' are rejected).
std::map<std::string, std::string> read_safetensors_index(const std::string& path);

}  // namespace bt::checkpoint
