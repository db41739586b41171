// Sequential byte sources for shards that are read as streams, not files: a local file, an http(s):// URL (libcurl)
// or webdataset's `pipe:COMMAND` (the command's stdout, e.g. `pipe:aws s3 cp s3://b/shard-000.tar -`). The tar
// reader (shard_stream.h, ShardReader::open_stream) pulls blocks from one; nothing is held beyond a bounded buffer.
//
// Contract:
//  - read(buf, n) returns 1..n bytes, or 0 at the end of the stream; it throws bt::Error naming the location
//    ("http://h/s.tar: HTTP 404", "pipe:cmd: the command exited with status 1") when the source fails for good.
//  - HTTP: connect and low-speed timeouts; a transfer that breaks (dropped connection, timeout, 5xx) is reopened up
//    to `retries` times with a growing pause, asking `Range: bytes=OFFSET-` for the bytes not yet delivered and
//    refusing any answer but 206 from that offset, so the bytes read are those of one uninterrupted transfer. A 4xx
//    fails at once (no retry). Memory: at most kHttpBufferBytes plus one libcurl chunk (1 MiB) buffered.
//  - pipe: only a command the user typed runs (data/user_command.h: open_byte_stream refuses any other pipe:
//    location, naming it, before anything starts). /bin/sh -c COMMAND in its own process group, with an empty
//    signal mask and SIGPIPE, SIGTERM, SIGINT, SIGUSR1 (and the other terminating signals) at their defaults,
//    whatever the training blocks or ignores; stdout is read, stderr passes through. A nonzero exit (or a signal) is
//    a failure naming the command; a broken command is rerun up to `retries` times, its first OFFSET bytes
//    discarded (a command can only be restarted from the beginning). Stopping (closing early, no output for
//    low_speed_time_s, the deadline) sends SIGTERM to the group and SIGKILL kill_grace_ms later; a child that
//    survives even that is left to the kernel, never waited on without bound.
//  - Deadline: a stream may keep its reader waiting deadline_s in all (every retry included; time the consumer
//    spends elsewhere does not count), so a server or command that drips bytes just above the low-speed limit
//    fails in bounded time, naming the location and the bytes read. Never retried.
//  - Streams are not thread-safe; one per reader.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "data/user_command.h"

namespace bt::data {

struct StreamOptions {
  int retries = 3;                 // reopenings of a broken transfer, per stream
  int retry_pause_ms = 200;        // before the first retry; doubled for each next one (capped at 5 s)
  int connect_timeout_s = 30;      // HTTP: TCP + TLS connect
  int low_speed_time_s = 60;       // HTTP: a transfer under 1 byte/s for this long is broken (and retried);
                                   // pipe: no output for this long
  int deadline_s = 3600;           // waiting for this stream's bytes, in all (see above)
  int kill_grace_ms = 2000;        // pipe: SIGTERM to the command's group, SIGKILL this much later
};

inline constexpr size_t kHttpBufferBytes = size_t(4) << 20;

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  virtual size_t read(void* buf, size_t n) = 0;
  virtual const std::string& location() const = 0;
  // Transfers reopened after a break so far (HTTP / pipe), for tests and counters.
  virtual int reopened() const { return 0; }
};

// http://, https:// and pipe: locations (read with open_byte_stream, never stat()ed or globbed).
bool is_streamed_location(const std::string& s);
// Opens `location`: a URL, pipe:COMMAND (one the user typed, else refused naming it) or a local regular file
// (through the file gate). Errors name it.
std::unique_ptr<ByteStream> open_byte_stream(const std::string& location, const StreamOptions& opts = {});

// False in a build without libcurl: http(s):// locations then fail naming the URL (pipe:curl still works).
bool have_http_streams();
std::unique_ptr<ByteStream> open_http_stream(const std::string& url, const StreamOptions& opts);
std::unique_ptr<ByteStream> open_pipe_stream(const UserCommand& command, const StreamOptions& opts);

}  // namespace bt::data
