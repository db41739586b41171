// A tiny HTTP/1.1 file server on 127.0.0.1 (an ephemeral port) for the streamed-shard tests and benchmark: serves
// the files of one folder, honours `Range: bytes=N-`, and has knobs to break transfers (close after N body bytes),
// to stall once (a server that goes quiet), to drip bytes slowly and to ignore Range. One thread per connection,
// `Connection: close`.
// No network, no Python. Test code: it trusts its requests.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bt::data::testing {

class LoopbackHttp {
 public:
  // Knobs, read at each request.
  std::atomic<int64_t> drop_after{-1};  // close a response after this many body bytes ...
  std::atomic<int> drops_left{0};       // ... for this many responses
  std::atomic<int64_t> stall_after{-1};  // once: go quiet for stall_ms after this many body bytes
  std::atomic<int> stall_ms{0};
  std::atomic<bool> ignore_range{false};
  std::atomic<int> drip_ms{0};  // > 0: send the body one byte per drip_ms (a server just above the low-speed limit)
  // Counters.
  std::atomic<int> requests{0}, range_requests{0};

  explicit LoopbackHttp(std::string root) : root_(std::move(root)) {
    ::signal(SIGPIPE, SIG_IGN);  // sendfile() to a client that hung up (the point of several tests) must not kill us
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] { accept_loop(); });
  }
  ~LoopbackHttp() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    accept_.join();
    ::close(fd_);
    std::lock_guard lock(mu_);
    for (auto& t : conns_) t.join();
  }
  std::string url(const std::string& name) const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + name; }

 private:
  void accept_loop() {
    for (;;) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (stop_) return;
        continue;
      }
      std::lock_guard lock(mu_);
      conns_.emplace_back([this, c] {
        serve(c);
        ::close(c);
      });
    }
  }
  static bool send_all(int c, const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::send(c, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w, n -= size_t(w);
    }
    return true;
  }
  void serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
      ssize_t r = ::recv(c, buf, sizeof buf, 0);
      if (r <= 0) return;
      req.append(buf, size_t(r));
    }
    ++requests;
    size_t sp = req.find(' '), sp2 = req.find(' ', sp + 1);
    std::string path = root_ + req.substr(sp + 1, sp2 - sp - 1);
    int64_t from = 0;
    size_t rg = req.find("Range: bytes=");
    if (rg != std::string::npos && !ignore_range) {
      from = std::atoll(req.c_str() + rg + 13);
      ++range_requests;
    }
    struct stat st {};
    int f = path.find("..") == std::string::npos ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
    if (f < 0 || ::fstat(f, &st) != 0) {
      std::string r = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      send_all(c, r.data(), r.size());
      if (f >= 0) ::close(f);
      return;
    }
    const int64_t size = st.st_size;
    std::string head = rg != std::string::npos && !ignore_range
                           ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(from) + "-" +
                                 std::to_string(size - 1) + "/" + std::to_string(size) + "\r\n"
                           : "HTTP/1.1 200 OK\r\n";
    head += "Content-Length: " + std::to_string(size - from) + "\r\nConnection: close\r\n\r\n";
    send_body(c, f, head, from, size);
    ::close(f);
  }
  void send_body(int c, int f, const std::string& head, int64_t from, int64_t size) {
    if (!send_all(c, head.data(), head.size())) return;
    int64_t limit = size - from;
    if (drop_after >= 0 && drops_left.fetch_sub(1) > 0) limit = std::min(limit, int64_t(drop_after));
    for (int64_t sent = 0; drip_ms > 0 && sent < limit && !stop_; ++sent) {  // until the client hangs up
      char b;
      if (::pread(f, &b, 1, off_t(from + sent)) != 1 || !send_all(c, &b, 1)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(drip_ms.load()));
    }
    if (drip_ms > 0) return;
    int64_t stall = stall_after.exchange(-1);
    const int64_t chunk = 1 << 20;
    for (int64_t sent = 0; sent < limit;) {
      size_t want = size_t(std::min<int64_t>(chunk, limit - sent));
      if (stall >= 0 && sent < stall) want = size_t(std::min<int64_t>(int64_t(want), stall - sent));
      off_t off = off_t(from + sent);
      ssize_t r = ::sendfile(c, f, &off, want);
      if (r <= 0) return;
      sent += r;
      if (stall >= 0 && sent == stall) {
        std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms.load()));
        stall = -1;
      }
    }
  }

  std::string root_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread accept_;
  std::mutex mu_;
  std::vector<std::thread> conns_;
};

}  // namespace bt::data::testing
