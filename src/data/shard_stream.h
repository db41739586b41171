// WebDataset tar shards, read as a stream (libarchive, one block at a time), so a dataset larger than memory
// works. The caller picks the shard order (e.g. shuffled per epoch) and hands shards to workers.
//
// Contract:
//  - expand_shard_pattern() turns "DIR/shard-{000000..000123}.tar" (zero-padded ranges, {a,b} lists, nesting),
//    globs (*, ?, [...]) and folders (their *.tar / *.tar.gz / *.tgz, sorted) into a list of paths, in
//    pattern order. Nothing matching, or a listed file that does not exist, throws bt::Error naming it.
//  - Members are grouped WebDataset-style: consecutive members sharing a key (the path up to the first '.'
//    of the basename) form one sample; the rest of the basename, lowercased, is the extension. The image is
//    the first jpg|jpeg|png|webp|gif|bmp|tif|tiff member, the caption the txt member (trailing whitespace trimmed) or else the json
//    member's caption_column string. Other members are skipped without reading them.
//  - A sample without image or caption, a caption that is not UTF-8, a member larger than max_member_bytes (a
//    caption larger than max_caption_bytes), a truncated member or a corrupt tar (a bad header checksum included;
//    more than max_members_without_sample members in a row that make no good sample) throws bt::Error naming the
//    shard and member, e.g.
//    "data/shard-000003.tar: member '000123.jpg': truncated tar archive". With on_bad = kSkip the sample is
//    counted in bad() instead (a corrupt tar ends that shard: its remaining samples are lost and counted once).
//  - Streamed locations (byte_stream.h: http(s):// URLs, pipe:COMMAND) expand braces only (no glob, no stat) and are
//    read with open_location()/open_stream(); a stream that fails for good (after its retries) is a corrupt shard
//    named by its URL/command: an error under kError, the rest of the shard skipped and counted under kSkip.
//  - Readers are not thread-safe; use one per worker.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/bad_rows.h"
#include "data/byte_stream.h"

struct archive;

namespace bt::data {

struct ShardOptions {
  std::string caption_column = "caption";  // field of key.json used as the caption
  OnBad on_bad = OnBad::kError;
  size_t max_member_bytes = size_t(256) << 20;
  // A caption member (txt, json) larger than this is a bad sample, as a longer captions-file line is an error
  // (--max_line_bytes; data/jsonl.h's default).
  size_t max_caption_bytes = size_t(1) << 20;
  // More members than this in a row that make no good sample (other extensions, folders, bad samples) end the
  // shard as corrupt: an endless stream of them under kSkip would otherwise never end.
  size_t max_members_without_sample = 10000;
  // Index mode (for TarDataset): images are not read; TarSample::image holds their first bytes and
  // image_offset/image_size locate them in the shard file. Needs uncompressed shards.
  bool index_only = false;
  StreamOptions stream;  // streamed locations: retries and timeouts
};

struct TarSample {
  std::string key;  // "SHARD:KEY", unique across a shard set
  std::vector<uint8_t> image;
  std::string image_ext;  // jpg, jpeg, png, webp, gif, bmp, tif or tiff
  std::string caption;
  uint64_t image_offset = 0, image_size = 0;  // set in index mode only
};

// Brace expansion only (no file system access); throws when a pattern expands to more than 1,000,000 names.
std::vector<std::string> expand_braces(const std::string& pattern);
std::vector<std::string> expand_shard_pattern(const std::string& pattern);

class ShardReader {
 public:
  static std::unique_ptr<ShardReader> open_file(const std::string& path, const ShardOptions& opts = {});
  // Reads a shard held in memory (`data` must outlive the reader); `name` is used in messages and keys.
  static std::unique_ptr<ShardReader> open_memory(const void* data, size_t size, const std::string& name,
                                                  const ShardOptions& opts = {});
  // Reads a shard from a byte stream (an HTTP body, a command's stdout); named by the stream's location.
  static std::unique_ptr<ShardReader> open_stream(std::unique_ptr<ByteStream> stream, const ShardOptions& opts = {});
  // open_stream(open_byte_stream(loc)) for a streamed location, else open_file(loc).
  static std::unique_ptr<ShardReader> open_location(const std::string& loc, const ShardOptions& opts = {});
  ~ShardReader();
  ShardReader(const ShardReader&) = delete;
  ShardReader& operator=(const ShardReader&) = delete;

  // The next good sample; false at the end of the shard.
  bool next(TarSample& out);
  // Like next() but reads only headers: counts samples that have an image and a caption member.
  size_t count_remaining();
  const BadRows& bad() const { return bad_; }
  const std::string& name() const { return name_; }
  // The shard file, open through the file gate (open_file only, -1 otherwise or when it could not be opened);
  // owned by the reader, for pread of member bytes at their offsets.
  int fd() const { return fd_; }

 private:
  ShardReader(std::string name, const ShardOptions& opts);
  struct Member {
    std::string name, key, ext;
    int kind = 0;
    bool regular = false;
    int64_t size = -1;  // from the header, -1 when not set
    std::vector<uint8_t> data;
    std::string error;  // set when the member is unusable but the archive is fine (e.g. too large)
  };
  bool read_header(Member& m);  // false at end of archive
  void read_data(Member& m, bool want_data);
  [[noreturn]] void fatal(const std::string& member, const std::string& why);
  bool finish_group(TarSample& out);
  void add_to_group(Member& m);

  static long stream_read(archive* a, void* self, const void** buf);
  void drain_stream();
  archive* a_ = nullptr;
  int fd_ = -1;
  std::unique_ptr<ByteStream> stream_;  // open_stream only
  std::vector<uint8_t> block_;          // the block libarchive reads from the stream into
  std::string stream_error_;            // the stream's own message, reported instead of libarchive's
  std::string open_error_;  // reported by the first next()/count_remaining(), honouring on_bad
  std::string name_;
  Member m_;
  bool pending_ = false;  // m_'s header is read, its data not yet
  ShardOptions opts_;
  BadRows bad_;
  bool done_ = false;
  // The group being assembled.
  std::string key_;
  static constexpr size_t kListedMembers = 8;
  std::vector<std::string> members_;  // the group's first kListedMembers names (clipped), for messages
  size_t group_members_ = 0;          // members in the group
  std::string last_member_;           // the group's last member (clipped), for messages
  TarSample cur_;
  bool has_image_ = false, has_txt_ = false;
  std::string json_;
  bool has_json_ = false;
  bool spoiled_ = false;  // a member of the group was unusable (already counted)
  bool locate_image_ = false;  // index mode: the member just read is the group's image; its offset is
                               // known once the next header's position is
  bool checked_filter_ = false;
  size_t since_sample_ = 0;  // members read since the last good sample
};

// Reads a list of shards in the given order, one after the other.
class ShardStream {
 public:
  ShardStream(std::vector<std::string> shards, const ShardOptions& opts = {});
  ~ShardStream();
  bool next(TarSample& out);
  // Bad samples of all shards read so far (including shards that failed to open, with kSkip).
  BadRows bad() const;
  size_t shard_index() const { return index_; }  // the shard being read

 private:
  std::vector<std::string> shards_;
  ShardOptions opts_;
  size_t index_ = 0;
  std::unique_ptr<ShardReader> reader_;
  BadRows bad_;  // of finished shards
};

// Samples per shard, from one header-only pass over each shard (cached in-process by path, size and mtime).
// With bad samples this is an upper bound of what next() yields.
std::vector<size_t> count_shard_samples(const std::vector<std::string>& shards, const ShardOptions& opts = {});

}  // namespace bt::data
