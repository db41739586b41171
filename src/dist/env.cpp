#include "dist/env.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/error.h"

namespace bt::dist {
namespace {

const char* launch_hint() {
  return " (launch with `torchrun --nproc_per_node N --no_python bridgetune train ...`, or set RANK, WORLD_SIZE, "
         "MASTER_ADDR and MASTER_PORT yourself)";
}

// nullopt-like: returns false when unset or empty.
bool get_int(const EnvGetter& get, const char* name, long lo, long hi, int* out) {
  const char* v = get(name);
  if (!v || !*v) return false;
  errno = 0;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi)
    fail("environment variable ", name, "='", v, "' is not an integer in [", lo, ", ", hi, "]", launch_hint());
  *out = static_cast<int>(x);
  return true;
}

}  // namespace

std::string DistEnv::describe() const {
  if (!distributed()) return "single process (WORLD_SIZE unset or 1)";
  return str("rank ", rank, "/", world_size, " (local ", local_rank, "/", local_world_size, "), store ", master_addr,
             ":", master_port, agent_store ? " hosted by torchrun" : (rank == 0 ? " hosted here" : " on rank 0"));
}

DistEnv read_env(const EnvGetter& getter) {
  const EnvGetter get = getter ? getter : EnvGetter([](const char* n) { return std::getenv(n); });
  constexpr long kMaxRanks = 1 << 20;
  DistEnv e;
  const bool has_rank = get_int(get, "RANK", 0, kMaxRanks - 1, &e.rank);
  const bool has_ws = get_int(get, "WORLD_SIZE", 1, kMaxRanks, &e.world_size);
  if (!has_ws) {
    if (has_rank && e.rank != 0) fail("RANK=", e.rank, " is set but WORLD_SIZE is not", launch_hint());
    e.rank = 0;
    return e;
  }
  if (e.world_size == 1) {
    if (e.rank != 0) fail("RANK=", e.rank, " with WORLD_SIZE=1: RANK must be 0");
    return e;
  }
  if (!has_rank) fail("WORLD_SIZE=", e.world_size, " is set but RANK is not", launch_hint());
  if (e.rank >= e.world_size) fail("RANK=", e.rank, " must be below WORLD_SIZE=", e.world_size);
  e.local_rank = e.rank;
  e.local_world_size = e.world_size;
  const bool has_lws = get_int(get, "LOCAL_WORLD_SIZE", 1, e.world_size, &e.local_world_size);
  if (get_int(get, "LOCAL_RANK", 0, kMaxRanks - 1, &e.local_rank)) {
    if (!has_lws && e.local_rank >= e.world_size)
      fail("LOCAL_RANK=", e.local_rank, " must be below WORLD_SIZE=", e.world_size);
  }
  if (e.local_rank >= e.local_world_size)
    fail("LOCAL_RANK=", e.local_rank, " must be below LOCAL_WORLD_SIZE=", e.local_world_size);
  if (e.world_size % e.local_world_size != 0)
    fail("WORLD_SIZE=", e.world_size, " is not a multiple of LOCAL_WORLD_SIZE=", e.local_world_size,
         " (every node must run the same number of processes)");
  const char* addr = get("MASTER_ADDR");
  if (!addr || !*addr) fail("WORLD_SIZE=", e.world_size, " needs MASTER_ADDR (host of rank 0)", launch_hint());
  e.master_addr = addr;
  if (!get_int(get, "MASTER_PORT", 1, 65535, &e.master_port))
    fail("WORLD_SIZE=", e.world_size, " needs MASTER_PORT (TCP port of the rendezvous store)", launch_hint());
  if (const char* a = get("TORCHELASTIC_USE_AGENT_STORE"); a && *a) {
    const std::string s = a;
    if (s != "True" && s != "False")
      fail("environment variable TORCHELASTIC_USE_AGENT_STORE='", s, "' must be True or False");
    e.agent_store = s == "True";
  }
  get_int(get, "TORCHELASTIC_RESTART_COUNT", 0, kMaxRanks, &e.restart_count);
  return e;
}

namespace {
// One connect attempt (1 s at most): "" on success, else the reason.
std::string try_connect(const std::string& addr, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return gai_strerror(rc);
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval one_second{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &one_second, sizeof one_second);  // bounds connect() on Linux
    const bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    why = ok ? "" : std::strerror(errno);
    ::close(fd);
    if (ok) break;
  }
  freeaddrinfo(found);
  return why;
}
}  // namespace

std::string store_unreachable(const std::string& addr, int port, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::string why;
  do {
    why = try_connect(addr, port);
    if (why.empty()) return why;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return why;
}

}  // namespace bt::dist
