// isolate.cc: the worker pool. See Note [Isolation].
#include "harness/spec/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/spec/report.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/parallel.h"

namespace opspec::spec {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kOutputTail = 4000;  // bytes of a case's output kept for its report

// The signal pipe: SIGINT/SIGTERM handlers write the signal's number to it.
int g_signal_pipe[2] = {-1, -1};
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
  const unsigned char b = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = ::write(g_signal_pipe[1], &b, 1);
}

// SignalScope: SIGINT and SIGTERM go to the signal pipe while a pool runs.
class SignalScope {
 public:
  SignalScope() {
    g_signal = 0;
    if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw Error("opspec: pipe() failed");
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
    // A worker that died before reading its case must be an EPIPE, not the parent's death.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~SignalScope() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    ::close(g_signal_pipe[0]);
    ::close(g_signal_pipe[1]);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
  }

 private:
  struct sigaction old_int_ {}, old_term_ {}, old_pipe_ {};
};

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// read_all: n bytes, or false at end of file or on an error.
bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// drain: appends what fd has now (non-blocking); false at end of file.
bool drain(int fd, std::string& into, size_t cap) {
  char buf[16384];
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

// Worker: one worker process as the parent sees it.
struct Worker {
  pid_t pid = -1;
  int task_fd = -1;    // parent -> worker: case indices
  int result_fd = -1;  // worker -> parent: framed results
  int output_fd = -1;  // the worker's stdout and stderr
  std::deque<size_t> queue;  // its cases: the front one runs, the next waits in the pipe
  Clock::time_point start;   // when the front case started
  std::string results;  // bytes of results not yet parsed
  std::string output;   // the running case's output (tail)
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// worker_main: the worker's loop: a case index in, its result out, until the
// task pipe closes. Never returns.
[[noreturn]] void worker_main(const std::vector<CaseRef>& cases, const RunOptions& options, int task_fd,
                              int result_fd) {
  while (true) {
    uint32_t index = 0;
    if (!read_all(task_fd, reinterpret_cast<char*>(&index), sizeof index) || index >= cases.size()) ::_exit(0);
    CaseResult r;
    try {
      r = run_case(cases[index], options);
    } catch (const std::exception& e) {  // run_case should not throw; report it if it does
      r = case_result(cases[index]);
      r.outcome = Outcome::kFailed;
      r.message = str_cat("internal error: ", e.what());
      make_reportable(r);
    }
    // The case's output is in the pipe before its result, so the parent has it when the result arrives.
    std::cout.flush();
    std::fflush(nullptr);
    const std::string json = result_to_json(r);
    const uint64_t size = json.size();
    if (!write_all(result_fd, reinterpret_cast<const char*>(&size), sizeof size) ||
        !write_all(result_fd, json.data(), json.size())) {
      ::_exit(1);
    }
  }
}

class Pool {
 public:
  Pool(const std::vector<CaseRef>& cases, const RunOptions& options, const PoolOptions& pool,
       const std::function<void(const CaseResult&)>& on_done)
      : cases_(cases), options_(options), pool_(pool), on_done_(on_done), workers_(std::max(1, pool.jobs)) {
    run_.results.resize(cases.size());
    for (size_t i = 0; i < cases.size(); ++i) pending_.push_back(i);
  }

  // ~Pool: no worker outlives the pool, even when run() throws (fork or pipe failed).
  ~Pool() {
    for (Worker& w : workers_) {
      if (w.pid < 0) continue;
      ::kill(-w.pid, SIGKILL);
      ::kill(w.pid, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      close_all(w);
    }
    reap(/*wait=*/true);
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  PoolRun run() {
    const SignalScope signals;
    std::fflush(nullptr);  // so workers do not inherit buffered output
    std::cout.flush();
    probe_cuda();
    while (!pending_.empty() || busy() > 0) {
      if (g_signal != 0) return interrupt(g_signal);
      for (Worker& w : workers_) {
        if (pending_.empty()) break;
        if (w.pid < 0 && w.queue.empty()) spawn(w);
        if (w.pid >= 0) hand_out(w);
      }
      wait_for_events();
      for (Worker& w : workers_) {
        if (w.pid >= 0) service(w);
      }
      reap(/*wait=*/false);
      if (pool_.on_tick) tick();
    }
    for (Worker& w : workers_) retire(w);
    reap(/*wait=*/true);
    return std::move(run_);
  }

 private:
  size_t busy() const {
    return static_cast<size_t>(
        std::count_if(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.queue.empty(); }));
  }

  void spawn(Worker& w) {
    int task[2], result[2], output[2];
    if (::pipe2(task, O_CLOEXEC) != 0 || ::pipe2(result, O_CLOEXEC) != 0 || ::pipe2(output, O_CLOEXEC) != 0) {
      throw Error(str_cat("opspec: pipe() failed: ", std::strerror(errno)));
    }
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(str_cat("opspec: fork() failed: ", std::strerror(errno)));
    if (pid == 0) {
      // The worker: its own process group (^C at a terminal reaches the parent
      // only), killed with the parent, default signal dispositions, and none
      // of the other workers' pipes (a copy would keep them from seeing EOF).
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGPIPE, SIG_DFL);
      ::close(g_signal_pipe[0]);
      ::close(g_signal_pipe[1]);
      for (Worker& other : workers_) {
        close_fd(other.task_fd);
        close_fd(other.result_fd);
        close_fd(other.output_fd);
      }
      ::close(task[1]);
      ::close(result[0]);
      ::close(output[0]);
      ::dup2(output[1], STDOUT_FILENO);
      ::dup2(output[1], STDERR_FILENO);
      ::close(output[1]);
      // N workers share the cores: each op may use cores/N threads (See Note [Intra-op threads]).
      if (pool_.jobs > 1) set_num_threads(std::max(1, threads_ / pool_.jobs));
      worker_main(cases_, options_, task[0], result[1]);
    }
    ::setpgid(pid, pid);  // also here, so it holds before the parent ever signals the group
    ::close(task[0]);
    ::close(result[1]);
    ::close(output[1]);
    w = Worker{};
    w.pid = pid;
    w.task_fd = task[1];
    w.result_fd = result[0];
    w.output_fd = output[0];
    ::fcntl(w.result_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(w.output_fd, F_SETFL, O_NONBLOCK);
  }

  // probe_cuda: counts CUDA devices in a child, for every worker to inherit
  // (See set_cuda_device_count); if the child fails, workers ask for themselves.
  static void probe_cuda() {
    if (!get_device_hooks(DeviceType::kCUDA).is_built()) return set_cuda_device_count(0);
    // No NVIDIA driver node (Linux's /dev/nvidiactl, WSL's /dev/dxg): no
    // device, and no child to fork (6 ms) to be told so.
    if (::access("/dev/nvidiactl", F_OK) != 0 && ::access("/dev/dxg", F_OK) != 0) return set_cuda_device_count(0);
    const pid_t pid = ::fork();
    if (pid < 0) return;
    if (pid == 0) {
      int count = 0;
      try {
        count = get_device_hooks(DeviceType::kCUDA).device_count();
      } catch (...) {
      }
      ::_exit(std::clamp(count, 0, 100));
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) set_cuda_device_count(WEXITSTATUS(status));
  }

  // hand_out: fills w's queue: two cases, so it starts the next while the
  // parent reads the last result (See Note [Isolation]); one under --isolate.
  void hand_out(Worker& w) {
    const size_t depth = pool_.fresh_process ? 1 : 2;
    while (w.queue.size() < depth && !pending_.empty() && w.pid >= 0) {
      const size_t index = pending_.front();
      pending_.pop_front();
      if (w.queue.empty()) {
        w.start = Clock::now();
        w.output.clear();
      }
      w.queue.push_back(index);
      const uint32_t i = static_cast<uint32_t>(index);
      if (!write_all(w.task_fd, reinterpret_cast<const char*>(&i), sizeof i)) {
        // The worker died before it took the case: the case fails as a crash would.
        service(w);
      }
    }
  }

  // fail_running: w's worker is gone: its running (front) case fails with
  // message; the cases queued behind it never started and go back to pending.
  void fail_running(Worker& w, std::string message) {
    while (w.queue.size() > 1) {
      pending_.push_front(w.queue.back());
      w.queue.pop_back();
    }
    if (w.queue.empty()) return;
    const size_t index = w.queue.front();
    CaseResult r = failed(index, std::move(message));
    r.seconds = elapsed(w);
    w.queue.clear();
    finish(index, std::move(r));
  }

  // tick: PoolOptions::on_tick with the longest-running case.
  void tick() {
    const Worker* slowest = nullptr;
    for (const Worker& w : workers_) {
      if (w.pid >= 0 && !w.queue.empty() && (slowest == nullptr || w.start < slowest->start)) slowest = &w;
    }
    if (slowest == nullptr) return;
    pool_.on_tick(cases_[slowest->queue.front()].id(),
                  std::chrono::duration<double>(Clock::now() - slowest->start).count());
  }

  // wait_for_events: sleeps until a worker writes or exits, a signal, or the nearest deadline.
  void wait_for_events() {
    std::vector<pollfd> fds;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    int timeout_ms = pool_.on_tick ? 500 : -1;
    for (const Worker& w : workers_) {
      if (w.pid < 0) continue;
      fds.push_back({w.result_fd, POLLIN, 0});
      if (w.output_fd >= 0) fds.push_back({w.output_fd, POLLIN, 0});
      if (!w.queue.empty() && pool_.timeout_seconds > 0) {
        const double left = pool_.timeout_seconds - std::chrono::duration<double>(Clock::now() - w.start).count();
        const int ms = std::max(0, static_cast<int>(std::ceil(left * 1000)));
        timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
      }
    }
    ::poll(fds.data(), fds.size(), timeout_ms);
  }

  // service: reads a worker's output and results; finishes its case on a
  // result, a death or a timeout.
  void service(Worker& w) {
    if (w.output_fd >= 0 && !drain(w.output_fd, w.output, kOutputTail)) close_fd(w.output_fd);
    const bool open = drain(w.result_fd, w.results, 0);
    while (w.results.size() >= sizeof(uint64_t)) {
      uint64_t size = 0;
      std::memcpy(&size, w.results.data(), sizeof size);
      if (w.results.size() - sizeof size < size) break;
      const std::string json = w.results.substr(sizeof size, size);
      w.results.erase(0, sizeof size + size);
      if (w.queue.empty()) continue;
      const size_t index = w.queue.front();
      absl::StatusOr<CaseResult> parsed = result_from_json(json);
      CaseResult r;
      if (parsed.ok()) {
        r = *std::move(parsed);
      } else {
        r = failed(index, str_cat("the worker sent a malformed result: ", parsed.status().message()));
      }
      r.seconds = elapsed(w);
      w.queue.pop_front();
      w.start = Clock::now();  // the next queued case starts now
      w.output.clear();
      finish(index, std::move(r));
      if (pool_.fresh_process) retire(w);  // --isolate: one case per process
    }
    if (w.pid < 0) return;
    if (!open) {  // the worker is gone (or going): its result pipe closed
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      w.pid = -1;
      if (w.output_fd >= 0) drain(w.output_fd, w.output, kOutputTail);
      if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        fail_running(w, str_cat("crashed: signal ", sig, " (", strsignal(sig), ")", tail(w.output)));
      } else {
        fail_running(w, str_cat("the case's process exited with status ", WEXITSTATUS(status),
                                " without reporting a result", tail(w.output)));
      }
      close_all(w);
      return;
    }
    if (!w.queue.empty() && pool_.timeout_seconds > 0 && elapsed(w) > pool_.timeout_seconds) {
      ::kill(w.pid, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      w.pid = -1;
      if (w.output_fd >= 0) drain(w.output_fd, w.output, kOutputTail);
      fail_running(w, absl::StrFormat("timed out after %g s (killed)%s", pool_.timeout_seconds, tail(w.output)));
      close_all(w);
    }
  }

  // retire: closes a worker's pipes (it exits at EOF) and leaves it to reap():
  // a process takes milliseconds to tear down, and the next worker need not
  // wait for that.
  void retire(Worker& w) {
    if (w.pid < 0) return;
    close_all(w);
    exiting_.push_back(w.pid);
    w.pid = -1;
  }

  // reap: collects retired workers that have exited (all of them, waiting, when wait).
  void reap(bool wait) {
    std::erase_if(exiting_, [&](pid_t pid) { return ::waitpid(pid, nullptr, wait ? 0 : WNOHANG) != 0; });
  }

  void close_all(Worker& w) {
    close_fd(w.task_fd);
    close_fd(w.result_fd);
    close_fd(w.output_fd);
    w.results.clear();
  }

  PoolRun interrupt(int sig) {
    const std::string name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : str_cat("signal ", sig);
    for (Worker& w : workers_) {
      if (w.pid < 0) continue;
      ::kill(-w.pid, SIGKILL);  // its group: anything the case started goes too
      ::kill(w.pid, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      w.pid = -1;
      fail_running(w, str_cat("interrupted by ", name, " while running", tail(w.output)));
      close_all(w);
    }
    for (size_t index : pending_) {
      CaseResult r = case_result(cases_[index]);
      r.outcome = Outcome::kSkipped;
      r.message = str_cat("not run: the run was interrupted by ", name);
      finish(index, std::move(r));
    }
    pending_.clear();
    run_.interrupted_by = sig;
    return std::move(run_);
  }

  CaseResult failed(size_t index, std::string message) const {
    CaseResult r = case_result(cases_[index]);
    r.outcome = Outcome::kFailed;
    r.message = std::move(message);
    make_reportable(r);  // the output tail is any bytes the case printed
    return r;
  }

  static double elapsed(const Worker& w) { return std::chrono::duration<double>(Clock::now() - w.start).count(); }

  void finish(size_t index, CaseResult r) {
    run_.results[index] = std::move(r);
    if (on_done_) on_done_(run_.results[index]);
  }

  const std::vector<CaseRef>& cases_;
  const RunOptions& options_;
  const PoolOptions pool_;
  const std::function<void(const CaseResult&)>& on_done_;
  std::vector<Worker> workers_;
  const int threads_ = get_num_threads();  // this process's intra-op threads, shared out among workers
  std::vector<pid_t> exiting_;  // retired workers not yet reaped
  std::deque<size_t> pending_;
  PoolRun run_;
};

}  // namespace

PoolRun run_isolated(const std::vector<CaseRef>& cases, const RunOptions& run_options, const PoolOptions& pool,
                     const std::function<void(const CaseResult&)>& on_done) {
  return Pool(cases, run_options, pool, on_done).run();
}

}  // namespace opspec::spec
