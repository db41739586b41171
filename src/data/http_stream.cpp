// HTTP(S) byte stream over libcurl's multi interface (see byte_stream.h). The transfer runs on the reader's thread:
// read() drives curl until bytes are buffered; the write callback pauses the transfer once kHttpBufferBytes wait
// unread, so memory stays bounded however slow the consumer. A broken transfer is reopened from the byte offset
// reached with a Range request.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.h"
#include "data/byte_stream.h"

namespace bt::data {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

class HttpStream : public ByteStream {
 public:
  HttpStream(std::string url, const StreamOptions& o) : url_(std::move(url)), opts_(o) {
    global_init();
    multi_ = curl_multi_init();
    if (!multi_) throw std::bad_alloc();
    start();
  }
  ~HttpStream() override {
    stop();
    curl_multi_cleanup(multi_);
  }

  size_t read(void* out, size_t n) override {
    for (;;) {
      if (size_t avail = buf_.size() - head_; avail > 0) {
        size_t k = std::min(avail, n);
        std::memcpy(out, buf_.data() + head_, k);
        head_ += k;
        if (head_ == buf_.size()) buf_.clear(), head_ = 0;
        return k;
      }
      if (done_) return 0;
      const auto t0 = std::chrono::steady_clock::now();
      pump();
      // The deadline counts the time this reader waits for the server (byte_stream.h), over every retry.
      waited_ += std::chrono::steady_clock::now() - t0;
      if (waited_ > std::chrono::seconds(opts_.deadline_s)) {
        stop();
        fail(url_, ": still downloading after the deadline of ", opts_.deadline_s, " s, at byte ", received_,
             " (a server that sends too slowly)");
      }
    }
  }
  const std::string& location() const override { return url_; }
  int reopened() const override { return retries_used_; }

 private:
  static size_t on_data(char* p, size_t size, size_t nmemb, void* self) {
    return static_cast<HttpStream*>(self)->take(p, size * nmemb);
  }
  static size_t on_header(char* p, size_t size, size_t nmemb, void* self) {
    auto* s = static_cast<HttpStream*>(self);
    std::string line(p, size * nmemb);
    for (size_t i = 0; i < line.size() && i < 14; ++i) line[i] = char(std::tolower(static_cast<unsigned char>(line[i])));
    if (line.rfind("content-range:", 0) == 0) {
      size_t b = line.find("bytes ");
      if (b != std::string::npos) s->range_start_ = std::strtoll(line.c_str() + b + 6, nullptr, 10);
    }
    return size * nmemb;
  }

  size_t take(const char* p, size_t n) {
    if (!checked_) {
      long code = 0;
      curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
      // A resumed transfer must continue exactly where the last one broke.
      if (received_ > 0 && (code != 206 || range_start_ != int64_t(received_))) {
        own_error_ = str("the server did not resume at byte ", received_, " (HTTP ", code,
                         code == 200 ? ": Range requests unsupported" : "", ")");
        return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
      }
      checked_ = true;
    }
    if (buf_.size() - head_ >= kHttpBufferBytes) {
      paused_ = true;
      return CURL_WRITEFUNC_PAUSE;  // curl keeps this chunk and hands it again after the pause
    }
    if (head_ > 0 && head_ >= buf_.size() / 2) {  // compact so the buffer does not creep
      buf_.erase(buf_.begin(), buf_.begin() + std::ptrdiff_t(head_));
      head_ = 0;
    }
    buf_.insert(buf_.end(), p, p + n);
    received_ += n;
    last_byte_ = std::chrono::steady_clock::now();
    return n;
  }

  void start() {
    easy_ = curl_easy_init();
    if (!easy_) throw std::bad_alloc();
    checked_ = false;
    range_start_ = -1;
    own_error_.clear();
    curl_easy_setopt(easy_, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy_, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(easy_, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(easy_, CURLOPT_USERAGENT, "bridgetune");
    curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT, long(opts_.connect_timeout_s));
    curl_easy_setopt(easy_, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy_, CURLOPT_LOW_SPEED_TIME, long(opts_.low_speed_time_s));
    curl_easy_setopt(easy_, CURLOPT_BUFFERSIZE, 1L << 20);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpStream::on_data);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &HttpStream::on_header);
    curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
    range_ = received_ > 0 ? str(received_, "-") : std::string();
    curl_easy_setopt(easy_, CURLOPT_RANGE, range_.empty() ? nullptr : range_.c_str());
    curl_multi_add_handle(multi_, easy_);
    paused_ = false;
    last_byte_ = std::chrono::steady_clock::now();
  }
  void stop() {
    if (!easy_) return;
    curl_multi_remove_handle(multi_, easy_);
    curl_easy_cleanup(easy_);
    easy_ = nullptr;
  }

  // Runs the transfer until it buffered something, finished or failed.
  void pump() {
    if (paused_) {
      paused_ = false;
      last_byte_ = std::chrono::steady_clock::now();  // the pause was ours, not the server's
      curl_easy_pause(easy_, CURLPAUSE_CONT);  // may deliver the held chunk right here
      if (buf_.size() > head_) return;
    }
    int running = 0;
    curl_multi_perform(multi_, &running);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi_, &left))
      if (m->msg == CURLMSG_DONE) return finished(m->data.result);
    if (buf_.size() == head_ && !paused_) curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
    // A server that goes quiet: curl's low-speed check averages over seconds of earlier bytes, so it can take
    // much longer than low_speed_time to notice; a transfer without a byte for that long is broken here.
    if (std::chrono::steady_clock::now() - last_byte_ > std::chrono::seconds(opts_.low_speed_time_s))
      finished(CURLE_OPERATION_TIMEDOUT);
  }

  void finished(CURLcode rc) {
    long code = 0;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_OK) {
      stop();
      done_ = true;
      return;
    }
    std::string why = !own_error_.empty() ? own_error_
                      : rc == CURLE_HTTP_RETURNED_ERROR ? str("HTTP ", code)
                                                         : std::string(curl_easy_strerror(rc));
    // Client errors (404, 403, ...) and a server that cannot resume will not heal by asking again.
    bool permanent = !own_error_.empty() || rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL ||
                     (rc == CURLE_HTTP_RETURNED_ERROR && code >= 400 && code < 500 && code != 408 && code != 429);
    stop();
    if (permanent || retries_used_ >= opts_.retries)
      fail(url_, ": ", why, retries_used_ ? str(" (after ", retries_used_, " retries, at byte ", received_, ")") : "");
    int ms = std::min(5000, opts_.retry_pause_ms << std::min(retries_used_, 10));
    ++retries_used_;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    start();
  }

  std::string url_;
  StreamOptions opts_;
  CURLM* multi_ = nullptr;
  CURL* easy_ = nullptr;
  std::vector<char> buf_;
  size_t head_ = 0;
  uint64_t received_ = 0;  // body bytes taken so far, over all attempts: where a retry resumes
  int64_t range_start_ = -1;
  std::string range_, own_error_;
  bool checked_ = false, paused_ = false, done_ = false;
  std::chrono::steady_clock::time_point last_byte_;
  std::chrono::steady_clock::duration waited_{0};  // in read(), for the deadline
  int retries_used_ = 0;
};

}  // namespace

bool have_http_streams() { return true; }

std::unique_ptr<ByteStream> open_http_stream(const std::string& url, const StreamOptions& opts) {
  return std::make_unique<HttpStream>(url, opts);
}

}  // namespace bt::data
