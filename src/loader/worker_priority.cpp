#include "loader/worker_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace bt::loader {

namespace {

pid_t thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::string keep_off_first_cpu(int workers) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return std::string("sched_getaffinity: ") + std::strerror(errno);
  if (CPU_COUNT(&set) <= workers) return "";  // too few CPUs to leave one free: the workers keep them all
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) {
      CPU_CLR(c, &set);
      break;
    }
  if (sched_setaffinity(0, sizeof set, &set) != 0) return std::string("sched_setaffinity: ") + std::strerror(errno);
  return "";
}

}  // namespace

int current_thread_nice() {
  errno = 0;
  const int v = getpriority(PRIO_PROCESS, static_cast<id_t>(thread_id()));
  return errno == 0 ? v : 0;
}

std::string apply_worker_priority(const WorkerPriority& p, int workers) {
  std::string why;
  if (p.nice > 0) {
    const int target = std::min(19, current_thread_nice() + p.nice);
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(thread_id()), target) != 0)
      why = std::string("setpriority: ") + std::strerror(errno);
  }
  if (p.affinity) {
    const std::string a = keep_off_first_cpu(workers);
    if (!a.empty()) why += (why.empty() ? "" : "; ") + a;
  }
  return why;
}

}  // namespace bt::loader
