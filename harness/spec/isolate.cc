// isolate.cc: the fork-per-case process pool. See Note [Isolation].
#include "harness/spec/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/spec/report.h"

namespace opspec::spec {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kOutputTail = 4000;  // bytes of a child's output kept for its report

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int result_fd = -1;
  int output_fd = -1;
  std::string result;
  std::string output;
  Clock::time_point start;
  bool killed_for_timeout = false;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    off += static_cast<size_t>(n);
  }
}

// drain: reads what fd has without blocking; false at end of file.
bool drain(int fd, std::string& into, size_t cap) {
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      if (cap && into.size() > 2 * cap) into.erase(0, into.size() - cap);
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more now
  }
}

std::string tail(const std::string& s) {
  if (s.empty()) return "";
  std::string t = s.size() > kOutputTail ? str_cat("...", s.substr(s.size() - kOutputTail)) : s;
  return str_cat("\n--- output of the case (tail) ---\n", t);
}

[[noreturn]] void run_child(const CaseRef& ref, const RunOptions& options, int result_fd, int output_fd) {
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
  ::close(output_fd);
  CaseResult r;
  try {
    r = run_case(ref, options);
  } catch (const std::exception& e) {  // run_case should not throw; report it if it does
    r = case_result(ref);
    r.outcome = Outcome::kFailed;
    r.message = str_cat("internal error: ", e.what());
  }
  write_all(result_fd, result_to_json(r));
  ::close(result_fd);
  std::fflush(nullptr);
  ::_exit(0);  // no static destructors in the child: the parent owns them
}

}  // namespace

std::vector<CaseResult> run_isolated(const std::vector<CaseRef>& cases, const RunOptions& run_options,
                                     const PoolOptions& pool, const std::function<void(const CaseResult&)>& on_done) {
  std::vector<CaseResult> results(cases.size());
  std::deque<size_t> pending;
  for (size_t i = 0; i < cases.size(); ++i) pending.push_back(i);
  std::vector<Child> running;
  const int jobs = std::max(1, pool.jobs);
  std::fflush(nullptr);  // so children do not inherit buffered output

  auto finish = [&](Child& c, int status) {
    const CaseRef& ref = cases[c.index];
    CaseResult r;
    absl::StatusOr<CaseResult> parsed = result_from_json(c.result);
    double seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
    if (c.killed_for_timeout) {
      r = case_result(ref);
      r.outcome = Outcome::kFailed;
      r.message = absl::StrFormat("timed out after %.1f s (killed)%s", pool.timeout_seconds, tail(c.output));
    } else if (WIFSIGNALED(status)) {
      r = case_result(ref);
      r.outcome = Outcome::kFailed;
      const int sig = WTERMSIG(status);
      r.message = str_cat("crashed: signal ", sig, " (", strsignal(sig), ")", tail(c.output));
    } else if (!parsed.ok()) {
      r = case_result(ref);
      r.outcome = Outcome::kFailed;
      r.message = str_cat("the case's process exited with status ", WEXITSTATUS(status),
                               " without reporting a result", tail(c.output));
    } else {
      r = *std::move(parsed);
    }
    r.seconds = seconds;
    results[c.index] = r;
    if (on_done) on_done(results[c.index]);
  };

  while (!pending.empty() || !running.empty()) {
    while (!pending.empty() && static_cast<int>(running.size()) < jobs) {
      Child c;
      c.index = pending.front();
      pending.pop_front();
      int rp[2], op[2];
      if (::pipe2(rp, O_CLOEXEC) != 0 || ::pipe2(op, O_CLOEXEC) != 0) throw Error("opspec: pipe() failed");
      c.start = Clock::now();
      c.pid = ::fork();
      if (c.pid < 0) throw Error(str_cat("opspec: fork() failed: ", std::strerror(errno)));
      if (c.pid == 0) {
        ::close(rp[0]);
        ::close(op[0]);
        run_child(cases[c.index], run_options, rp[1], op[1]);
      }
      ::close(rp[1]);
      ::close(op[1]);
      c.result_fd = rp[0];
      c.output_fd = op[0];
      ::fcntl(c.result_fd, F_SETFL, O_NONBLOCK);
      ::fcntl(c.output_fd, F_SETFL, O_NONBLOCK);
      running.push_back(std::move(c));
    }

    std::vector<pollfd> fds;
    for (const Child& c : running) {
      if (c.result_fd >= 0) fds.push_back({c.result_fd, POLLIN, 0});
      if (c.output_fd >= 0) fds.push_back({c.output_fd, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 50);

    for (size_t i = 0; i < running.size();) {
      Child& c = running[i];
      if (c.result_fd >= 0 && !drain(c.result_fd, c.result, 0)) ::close(c.result_fd), c.result_fd = -1;
      if (c.output_fd >= 0 && !drain(c.output_fd, c.output, kOutputTail)) ::close(c.output_fd), c.output_fd = -1;
      const double elapsed = std::chrono::duration<double>(Clock::now() - c.start).count();
      if (pool.timeout_seconds > 0 && elapsed > pool.timeout_seconds && !c.killed_for_timeout) {
        ::kill(c.pid, SIGKILL);
        c.killed_for_timeout = true;
      }
      int status = 0;
      pid_t done = ::waitpid(c.pid, &status, WNOHANG);
      if (done == c.pid) {
        // The pipes may still hold data written just before exit.
        if (c.result_fd >= 0) drain(c.result_fd, c.result, 0), ::close(c.result_fd);
        if (c.output_fd >= 0) drain(c.output_fd, c.output, kOutputTail), ::close(c.output_fd);
        finish(c, status);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      ++i;
    }
  }
  return results;
}

}  // namespace opspec::spec
