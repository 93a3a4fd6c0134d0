// cli.cc: `opspec run|list|show`. See harness/cli/cli.h and docs/spec-format.md.
#include "harness/cli/cli.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "harness/cli/internal/bench_command.h"
#include "harness/cli/internal/diff_command.h"
#include "harness/cli/internal/report_command.h"
#include "harness/cli/plugin.h"
#include "harness/regex.h"
#include "harness/program/fixture.h"
#include "harness/spec/html_report.h"
#include "harness/spec/isolate.h"
#include "harness/spec/report.h"
#include "harness/spec/runner.h"
#include "harness/spec/spec_accept.h"
#include "harness/spec/spec_loader.h"

namespace opspec::cli {

using namespace ::opspec::spec;  // NOLINT: the runner's types, read as in harness/spec
namespace {

constexpr const char* kUsage = R"(usage: opspec run  [PATH...] [options]   run spec cases (PATH: files or directories; default: specs)
       opspec list [PATH...] [--filter REGEX] [--shard I/N] [--fixtures]
       opspec show FILE::CASE | SUITE::CASE [PATH...]
                                              run one case and print its logs, graphs and breaks
                                              (a SUITE is looked for under PATH, default specs)
       opspec diff A B [--rtol R] [--atol A]  the first divergence between two DebugMode logs
                                              (opspec JSON or debug_string text, PyTorch's too)
       opspec report DIR | [--out DIR] LOG... rebuild a report's index (gtest pages added to it),
                                              or a report of saved DebugMode logs
       opspec bench [PATH...] [options]       time cases with a `bench:` section, eager against each
                                              backend (see opspec bench --help)

options of run:
  --filter REGEX   only cases whose id matches REGEX (RE2 syntax, a search): suite::case, and
                   suite::case@device for a case on several devices (`case$` misses those)
  --jobs N, -j N   run N cases at once in N worker processes (default 1)
  --shard I/N      run the I-th of N shards (1-based, like lit); GTEST_TOTAL_SHARDS and
                   GTEST_SHARD_INDEX (0-based) are honoured too
  --timeout S      fail a case that runs longer than S seconds (its worker is killed)
  --isolate        a fresh worker process for every case (no state carried between cases)
  --in-process     run cases in this process, no workers (for a debugger; a crash ends the run);
                   not with --jobs N > 1, --isolate or --timeout, which need workers
Cases run in worker processes: a crash or hang fails that case only and the run goes on.
SIGINT/SIGTERM stop the workers, write the reports (interrupted cases marked) and exit 130/143.
  --accept         rewrite differing `debug_string:` goldens in the YAML files (a .orig backup is kept)
  --junit FILE     write JUnit XML results
  --report DIR     write an HTML report: DIR/index.html, one page per case (logs, graphs, breaks)
  --json FILE      write JSON results
  -v, --verbose    one line per case
  -q, --quiet      print only failures and the summary
exit status of run: 0 every case passed (or skipped, xfailed), 1 a case failed or a file did not
load, 2 a usage error, 5 no case was found, or --filter matched none (as pytest collecting
nothing; a shard left empty is 0), 130/143 interrupted; list exits as run does: 1 when a file
did not load, 2 on a usage error, 5 when no case was found or --filter matched none, else 0

options of run, list, show and bench:
  --load LIB.so    load a plugin first: its ops, kernels, fixtures and backends (repeatable;
                   build it with opspec_add_plugin, See Note [Plugins] in harness/cli/plugin.h);
                   diff and report read saved logs and take no plugins
)";

struct Args {
  std::string command;
  std::vector<std::string> paths;
  std::string filter;
  int jobs = 1;
  int shard_index = -1, shard_count = 0;  // 0-based index
  double timeout = 0;
  bool isolate = false, in_process = false, accept = false, verbose = false, quiet = false, fixtures = false;
  std::string junit, json, report;
  std::vector<std::string> plugins;  // --load, in order
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "opspec: " << message << "\n\n" << kUsage;
  std::exit(2);
}

// kOptions: the options of run, list and show, spelled in full.
constexpr std::string_view kOptions[] = {"--filter", "--jobs",  "--shard", "--timeout", "--isolate", "--in-process",
                                         "--accept", "--junit", "--report", "--json",   "--verbose", "--quiet",
                                         "--fixtures", "--load"};

// full_option: arg as kOptions spells it ("-j2" -> "--jobs"), or "" when it is none of them.
std::string_view full_option(std::string_view arg) {
  if (arg.starts_with("-j")) return "--jobs";  // -j N and -jN
  if (arg == "-v") return "--verbose";
  if (arg == "-q") return "--quiet";
  for (std::string_view o : kOptions) {
    if (arg == o) return o;
  }
  return {};
}

// takes_option: whether `opspec COMMAND` uses the option (in full). Another
// command refuses it: `opspec list --jobs 4 --accept` ignored both, silently.
bool takes_option(std::string_view command, std::string_view option) {
  if (option == "--load") return true;
  if (command == "run") return option != "--fixtures";
  if (command == "list") return option == "--filter" || option == "--shard" || option == "--fixtures";
  return false;  // show: its target, PATHs and --load
}

Args parse_args(int argc, char** argv) {
  Args a;
  if (argc < 2) usage_error("no command given");
  a.command = argv[1];
  if (a.command == "-h" || a.command == "--help" || a.command == "help") {
    std::cout << kUsage;
    std::exit(0);
  }
  if (a.command != "run" && a.command != "list" && a.command != "show")
    usage_error(str_cat("unknown command '", a.command, "'"));
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (std::string_view option = full_option(arg); !option.empty() && !takes_option(a.command, option)) {
      std::vector<std::string> users;
      for (const char* c : {"run", "list", "show"}) {
        if (takes_option(c, option)) users.push_back(str_cat("`opspec ", c, "`"));
      }
      usage_error(str_cat(arg, " is not an option of `opspec ", a.command, "` (it is one of ",
                          absl::StrJoin(users, ", "), ")"));
    }
    auto value = [&](std::string_view flag) -> std::string {
      if (i + 1 >= argc) usage_error(str_cat(flag, " needs a value"));
      return argv[++i];
    };
    // An empty name was read as "none given": --json "" wrote nothing, silently.
    auto path = [&](std::string_view flag, std::string_view what = "a file name") {
      std::string v = value(flag);
      if (v.empty()) usage_error(str_cat(flag, " needs ", what, ", got ''"));
      return v;
    };
    if (arg == "--filter") {
      a.filter = value(arg);
    } else if (arg == "--jobs" || arg == "-j" || (arg.starts_with("-j") && arg.size() > 2)) {
      std::string v = arg.size() > 2 && arg[1] == 'j' ? arg.substr(2) : value(arg);  // -j2, as make and ctest spell it
      if (!absl::SimpleAtoi(v, &a.jobs) || a.jobs < 1 || a.jobs > 1024) {
        usage_error(str_cat("--jobs: not a whole number from 1 to 1024: ", shorten(v)));
      }
    } else if (arg == "--shard") {
      std::string v = value(arg);
      std::vector<std::string> parts = absl::StrSplit(v, '/');
      int i1 = 0, n = 0;
      if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &i1) || !absl::SimpleAtoi(parts[1], &n) || n < 1 ||
          i1 < 1 || i1 > n)
        usage_error(str_cat("--shard: expected I/N with 1 <= I <= N, got '", v, "'"));
      a.shard_index = i1 - 1;
      a.shard_count = n;
    } else if (arg == "--timeout") {
      std::string v = value(arg);
      // !(x > 0) also refuses nan, which compares false with everything and so never timed out.
      if (!absl::SimpleAtod(v, &a.timeout) || !(a.timeout > 0) || !std::isfinite(a.timeout) || a.timeout > 1e6)
        usage_error(str_cat("--timeout: not a positive number of seconds (at most 1e6): ", shorten(v)));
    } else if (arg == "--isolate") {
      a.isolate = true;
    } else if (arg == "--in-process") {
      a.in_process = true;
    } else if (arg == "--accept") {
      a.accept = true;
    } else if (arg == "--junit") {
      a.junit = path(arg);
    } else if (arg == "--report") {
      a.report = path(arg, "a directory");
    } else if (arg == "--json") {
      a.json = path(arg);
    } else if (arg == "-v" || arg == "--verbose") {
      a.verbose = true;
    } else if (arg == "-q" || arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--fixtures") {
      a.fixtures = true;
    } else if (arg == "--load") {
      a.plugins.push_back(path(arg));
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      usage_error(str_cat("unknown option '", arg, "'"));
    } else {
      a.paths.push_back(arg);
    }
  }
  // gtest's sharding protocol, so a CI matrix can shard opspec the same way.
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  if (a.shard_count == 0 && total != nullptr && index != nullptr) {
    int n = 0, i = 0;
    if (!absl::SimpleAtoi(total, &n) || !absl::SimpleAtoi(index, &i) || n < 1 || i < 0 || i >= n)
      usage_error(str_cat("invalid GTEST_TOTAL_SHARDS=", total, " / GTEST_SHARD_INDEX=", index));
    a.shard_count = n;
    a.shard_index = i;
    // gtest touches this file to tell the caller it understood sharding.
    if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE")) {
      if (std::FILE* f = std::fopen(status, "w")) std::fclose(f);
    }
  }
  // --in-process runs the cases in this process: no worker to kill when a
  // case overruns, to start fresh per case, or to run beside another.
  if (a.in_process) {
    if (a.timeout > 0) {
      usage_error("--timeout and --in-process conflict: a timeout kills the case's worker process, and --in-process "
                  "runs cases in this one (drop one of them)");
    }
    if (a.isolate) {
      usage_error("--isolate and --in-process conflict: --isolate runs each case in a fresh worker process, "
                  "--in-process in this one");
    }
    if (a.jobs > 1) {
      usage_error(str_cat("--jobs ", a.jobs, " and --in-process conflict: jobs are worker processes, and --in-process "
                          "runs cases one at a time in this one"));
    }
  }
  if (a.paths.empty() && a.command != "show") a.paths.push_back("specs");
  return a;
}

// Loaded: the suites that loaded, and one failed result per file that did not.
struct Loaded {
  std::vector<SuiteSpec> suites;
  std::vector<CaseResult> load_failures;
};

// load_failure: the failed result standing for a file that did not load.
CaseResult load_failure(const std::string& file, std::string message) {
  CaseResult r;
  r.id = str_cat(file, "::<load>");
  r.suite = file;
  r.name = "<load>";
  r.file = file;
  r.outcome = Outcome::kFailed;
  // The first error's line ("FILE:LINE:COL: error: ..."), so the header and JUnit point at it.
  if (message.starts_with(str_cat(file, ":"))) {
    int line = 0;
    for (size_t i = file.size() + 1; i < message.size() && message[i] >= '0' && message[i] <= '9' && line < 1e8; ++i) {
      line = line * 10 + (message[i] - '0');
    }
    r.line = line;
  }
  r.message = std::move(message);
  return r;
}

// keep_until_exit: v, moved to the heap and never freed. Freeing the loaded
// specs and their results took 10-13 ms of a 0.2 s `opspec run specs` (more
// than the report); the process is about to end, which frees them at once.
// Held by a static, so LeakSanitizer sees it reachable.
template <class T>
void keep_until_exit(T&& v) {
  static auto* kept = new std::vector<std::shared_ptr<void>>;
  kept->push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(v)));
}

// load: parses the spec files under paths, on `threads` threads (the run's
// --jobs: the cores it may use), and keeps them in file order.
Loaded load(const std::vector<std::string>& paths, int threads = 1) {
  Loaded out;
  std::vector<std::string> unreadable;  // directories: each fails as a file that cannot be read does
  absl::StatusOr<std::vector<std::string>> files = find_spec_files(paths, &unreadable);
  if (!files.ok()) throw Error(std::string(files.status().message()));
  for (std::string& message : unreadable) {
    const std::string dir = message.substr(0, message.find(": error: "));  // before message is moved from
    out.load_failures.push_back(load_failure(dir, std::move(message)));
  }
  std::vector<absl::StatusOr<SuiteSpec>> parsed(files->size(), absl::UnknownError("not loaded"));
  std::atomic<size_t> next{0};
  auto parse = [&] {
    for (size_t i; (i = next.fetch_add(1)) < files->size();) {
      try {
        parsed[i] = load_suite_file((*files)[i]);
      } catch (const std::exception& e) {  // the loader reports errors as statuses; a thread must not throw
        parsed[i] = absl::InternalError(str_cat((*files)[i], ": internal error while loading: ", e.what()));
      }
    }
  };
  std::vector<std::thread> helpers;
  // Only helper threads parse, even for one: yaml-cpp's garbage then fills
  // their malloc arenas, not the main thread's, whose free lists every forked
  // worker would otherwise walk and copy page by page (See Note [Isolation]).
  for (int t = 0; t < std::clamp<int>(threads, 1, static_cast<int>(files->size())); ++t) helpers.emplace_back(parse);
  for (std::thread& t : helpers) t.join();  // joined before any worker is forked
  for (size_t i = 0; i < files->size(); ++i) {
    if (parsed[i].ok()) {
      out.suites.push_back(*std::move(parsed[i]));
      continue;
    }
    out.load_failures.push_back(load_failure((*files)[i], std::string(parsed[i].status().message())));
  }
  // Two files with one `suite:` would report two results with one id: the
  // later file fails to load, as load_suites has it.
  std::vector<DuplicateSuite> dups = duplicate_suites(out.suites);
  for (auto it = dups.rbegin(); it != dups.rend(); ++it) {
    const SuiteSpec& s = out.suites[it->index];
    out.load_failures.push_back(load_failure(s.file, it->message));
    out.suites.erase(out.suites.begin() + static_cast<std::ptrdiff_t>(it->index));
  }
  return out;
}

// select: the cases the filter and shard keep; *matched (if given) counts
// those the filter alone kept, so an empty shard is not taken for a typo.
std::vector<CaseRef> select(const std::vector<SuiteSpec>& suites, const Args& a, size_t* matched = nullptr) {
  std::vector<CaseRef> all = expand_cases(suites);
  std::vector<CaseRef> out;
  std::optional<Regex> filter;  // See Note [Regexes]
  if (!a.filter.empty()) {
    absl::StatusOr<Regex> re = Regex::compile(a.filter);
    if (!re.ok()) usage_error(str_cat("--filter: invalid regex '", shorten(a.filter), "': ", re.status().message()));
    filter = *std::move(re);
  }
  size_t k = 0;
  for (const CaseRef& r : all) {
    if (filter && !filter->search(r.id())) continue;
    if (matched != nullptr) ++*matched;
    // Sharding counts only the cases the filter kept, as gtest does.
    if (a.shard_count > 0 && static_cast<int>(k++ % static_cast<size_t>(a.shard_count)) != a.shard_index) continue;
    out.push_back(r);
  }
  return out;
}

std::string indent(std::string_view text, std::string_view prefix = "    ") {
  return str_cat(prefix, absl::StrReplaceAll(std::string(text), {{"\n", str_cat("\n", prefix)}}));
}

// Progress: a one-line bar on a terminal, else nothing until the summary.
class Progress {
 public:
  Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K"), drawn_ = false;
  }
  // update: "[####......] 120/987  2 failed  12.3 s, ~1:29 left, slowest:
  // suite::case 4.1 s" (the estimate from the mean time per case so far; the
  // slowest case still running, once it has run a second), redrawn in place.
  void update(size_t done, int failed) {
    if (!enabled_) return;
    done_ = done;
    failed_ = failed;
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * done / total_) : kWidth;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string timing = absl::StrFormat("  %.1f s", elapsed);
    if (done > 0 && done < total_) {
      const int left = static_cast<int>(elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) + 0.5);
      str_append(&timing, absl::StrFormat(", ~%d:%02d left", left / 60, left % 60));
    }
    if (slowest_seconds_ >= 1.0) str_append(&timing, absl::StrFormat(", slowest: %s %.1f s", slowest_, slowest_seconds_));
    std::fprintf(stderr, "\r\033[K[%s%s] %zu/%zu%s%s", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, '.').c_str(), done, total_,
                 failed ? str_cat("  ", failed, " failed").c_str() : "", timing.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  // running: the longest-running case now (from the worker pool's tick).
  void running(const std::string& id, double seconds) {
    slowest_ = id;
    slowest_seconds_ = seconds;
    update(done_, failed_);
  }
  bool enabled() const { return enabled_; }

 private:
  size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  bool drawn_ = false;
  size_t done_ = 0;
  int failed_ = 0;
  std::string slowest_;
  double slowest_seconds_ = 0;
};

void print_result(const CaseResult& r, const Args& a) {
  const std::string where = r.line > 0 ? str_cat(r.file, ":", r.line) : r.file;  // no line: no ":0"
  if (r.outcome == Outcome::kFailed) {
    std::cout << "FAIL: " << r.id << " (" << where << ")\n" << indent(r.message) << "\n";
  } else if (a.verbose) {
    std::string tag = r.outcome == Outcome::kPassed    ? "PASS"
                      : r.outcome == Outcome::kSkipped ? "SKIP"
                                                       : "XFAIL";
    std::cout << tag << ": " << r.id << absl::StrFormat(" (%.3f s)", r.seconds);
    if (r.outcome != Outcome::kPassed) std::cout << " - " << r.message.substr(0, r.message.find('\n'));
    std::cout << "\n";
  }
  std::cout.flush();
}

// accept_results: writes the accepted goldens, file by file. A case whose
// golden cannot be written (a flow-style expect, devices that disagree) fails
// alone: it passed only on the promise that it would be; the file's other
// cases still take theirs. A file that cannot be read or parsed fails them all.
int accept_results(std::vector<CaseResult>& results, Summary& summary, const Args& a,
                   const std::vector<SuiteSpec>& suites) {
  std::map<std::string, std::vector<size_t>> by_file;  // indices into results
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].accepted_debug_string) by_file[results[i].file].push_back(i);
  // One golden holds for all of a case's devices, so each must have run and
  // agreed: a run that passed without a new golden matched the old one (its
  // device disagrees with those that differ), and a device that did not run
  // (skipped where it is unavailable, filtered, another shard) was not seen.
  std::map<std::pair<std::string, std::string>, std::string> matched_golden;  // (file, case) -> run id
  std::map<std::pair<std::string, std::string>, size_t> runs;                 // (file, case) -> runs that ran
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::kPassed && !r.accepted_debug_string) matched_golden.emplace(std::pair{r.file, r.name}, r.id);
    if (r.outcome != Outcome::kSkipped) ++runs[{r.file, r.name}];
  }
  std::map<std::pair<std::string, std::string>, const CaseSpec*> specs;
  for (const SuiteSpec& s : suites) {
    for (const CaseSpec& c : s.cases) specs[{s.file, c.name}] = &c;
  }
  int status = 0;
  for (const auto& [file, indices] : by_file) {
    std::vector<absl::Status> outcome(indices.size());
    std::vector<GoldenUpdate> updates;
    std::vector<size_t> updated;  // positions in indices of the updates sent
    for (size_t k = 0; k < indices.size(); ++k) {
      const CaseResult& r = results[indices[k]];
      const auto spec = specs.find({file, r.name});
      if (auto it = matched_golden.find({file, r.name}); it != matched_golden.end()) {
        outcome[k] = absl::FailedPreconditionError(str_cat(r.file, ":", r.line, ": error: case '", r.name,
                                                           "' has one debug_string for all its devices: ", it->second,
                                                           " matches it and ", r.id,
                                                           " does not; give each device its own case"));
        continue;
      }
      if (spec != specs.end() && runs[{file, r.name}] < spec->second->devices.size()) {
        outcome[k] = absl::FailedPreconditionError(str_cat(
            r.file, ":", r.line, ": error: case '", r.name, "' has one debug_string for its devices (",
            absl::StrJoin(spec->second->devices, ", "), "), and not all of them ran here (skipped, or left out by "
            "--filter or --shard): accept it where every device runs, or give each device its own case"));
        continue;
      }
      updates.push_back({r.name, r.id, *r.accepted_debug_string});
      updated.push_back(k);
    }
    if (!updates.empty()) {
      absl::StatusOr<std::vector<absl::Status>> written = accept_goldens(file, updates);
      if (!written.ok()) std::cerr << "opspec: --accept: " << written.status().message() << "\n";
      for (size_t u = 0; u < updated.size(); ++u) outcome[updated[u]] = written.ok() ? (*written)[u] : written.status();
    }
    std::set<std::string> accepted;  // cases, not runs: a case on two devices is one golden
    for (size_t k = 0; k < indices.size(); ++k) {
      CaseResult& r = results[indices[k]];
      if (outcome[k].ok()) {
        accepted.insert(r.name);
        continue;
      }
      status = 1;
      r.accepted_debug_string.reset();
      if (r.outcome != Outcome::kPassed) continue;
      r.outcome = Outcome::kFailed;
      r.message = str_cat("expect.debug_string differs, and --accept could not write the new golden: ",
                          outcome[k].message());
      --summary.passed;
      ++summary.failed;
      print_result(r, a);
    }
    if (!accepted.empty()) {
      std::cout << "Accepted " << accepted.size() << " new debug_string golden" << (accepted.size() == 1 ? "" : "s")
                << " in " << file << " (backup: " << file << ".orig)\n";
    }
  }
  return status;
}

// check_outputs_apart: --junit and --json name two files, neither a spec
// file the run reads: either was overwritten silently (the spec lost).
void check_outputs_apart(const Args& a) {
  namespace fs = std::filesystem;
  const auto same = [](const std::string& x, const std::string& y) {
    std::error_code ex, ey;
    const fs::path px = fs::weakly_canonical(x, ex), py = fs::weakly_canonical(y, ey);
    return ex || ey ? fs::path(x).lexically_normal() == fs::path(y).lexically_normal() : px == py;
  };
  if (!a.junit.empty() && !a.json.empty() && same(a.junit, a.json)) {
    usage_error(str_cat("--junit and --json name one file, '", a.json, "': each needs its own"));
  }
  std::vector<std::string> unreadable;  // these errors and a missing path: load() reports them
  absl::StatusOr<std::vector<std::string>> inputs = find_spec_files(a.paths, &unreadable);
  if (!inputs.ok()) return;
  for (const auto& [flag, file] : {std::pair{"--junit", &a.junit}, std::pair{"--json", &a.json}}) {
    if (file->empty()) continue;
    for (const std::string& input : *inputs) {
      if (same(*file, input)) usage_error(str_cat(flag, " names '", *file, "', a spec file this run reads"));
    }
  }
}

int command_run(const Args& a) {
  check_outputs_apart(a);
  // The output files before the run, not after it: an unwritable one failed
  // a passing run at its end, with exit 1, as if a case had failed.
  for (const auto& [flag, file] : {std::pair{"--junit", &a.junit}, std::pair{"--json", &a.json}}) {
    if (file->empty()) continue;
    if (absl::Status s = check_writable(*file); !s.ok()) usage_error(str_cat(flag, ": ", s.message()));
  }
  if (!a.report.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(a.report) / "cases", ec);
    if (ec) usage_error(str_cat("--report: cannot create '", a.report, "': ", ec.message()));
  }
  auto start = std::chrono::steady_clock::now();
  Loaded loaded = load(a.paths, a.in_process ? 1 : a.jobs);
  size_t matched = 0;
  std::vector<CaseRef> cases = select(loaded.suites, a, &matched);
  RunOptions options{.accept = a.accept, .report_logs = !a.report.empty()};
  Summary summary;
  std::vector<CaseResult> results = loaded.load_failures;
  for (const CaseResult& r : loaded.load_failures) print_result(r, a), summary.add(r);

  Progress progress(cases.size(), !a.verbose && !a.quiet && ::isatty(STDERR_FILENO));
  size_t done = 0;
  auto on_done = [&](const CaseResult& r) {
    progress.clear();
    print_result(r, a);
    summary.add(r);
    progress.update(++done, summary.failed);
  };
  int interrupted_by = 0;
  if (!a.in_process) {  // See Note [Isolation]
    PoolOptions pool{.jobs = a.jobs, .timeout_seconds = a.timeout, .fresh_process = a.isolate};
    if (progress.enabled()) {
      pool.on_tick = [&progress](const std::string& id, double seconds) { progress.running(id, seconds); };
    }
    PoolRun run = run_isolated(cases, options, pool, on_done);
    results.insert(results.end(), run.results.begin(), run.results.end());
    interrupted_by = run.interrupted_by;
  } else {
    for (const CaseRef& ref : cases) {
      CaseResult r = run_case(ref, options);
      on_done(r);
      results.push_back(std::move(r));
    }
  }
  progress.clear();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int status = a.accept && accept_results(results, summary, a, loaded.suites) != 0 ? 1 : 0;
  if (summary.failed > 0) status = 1;
  if (!a.junit.empty()) {
    absl::Status s = write_junit(a.junit, results, summary);
    if (!s.ok()) std::cerr << "opspec: " << s.message() << "\n", status = 1;
  }
  if (!a.json.empty()) {
    absl::Status s = write_json(a.json, results, summary);
    if (!s.ok()) std::cerr << "opspec: " << s.message() << "\n", status = 1;
  }
  if (!a.report.empty()) {
    std::map<std::string, const CaseSpec*> specs;
    for (const CaseRef& ref : cases) specs.emplace(ref.id(), ref.spec);
    std::vector<ReportCase> report;
    for (const CaseResult& r : results) {
      const auto it = specs.find(r.id);
      report.push_back({r, it == specs.end() ? nullptr : it->second});
    }
    absl::Status s = write_html_report(a.report, report, summary);
    if (!s.ok()) std::cerr << "opspec: " << s.message() << "\n", status = 1;
  }
  // A --filter that matches nothing is most likely a typo: exit 5, as pytest
  // does when it collects nothing, rather than pass a CI job that ran nothing.
  const bool filter_matched_nothing = !a.filter.empty() && matched == 0;
  if (filter_matched_nothing) {
    std::cout << "no case matches --filter '" << shorten(a.filter) << "'\n";
    if (status == 0) status = 5;
  } else if (matched == 0 && loaded.load_failures.empty()) {  // a wrong PATH, or files without cases
    std::cout << "no spec cases found in " << (a.paths.empty() ? "specs" : absl::StrJoin(a.paths, ", ")) << "\n";
    if (status == 0) status = 5;
  } else if (cases.empty() && loaded.load_failures.empty()) {
    std::cout << "no cases selected\n";
  }
  std::cout << summary.str() << "\n";
  keep_until_exit(std::move(loaded));
  keep_until_exit(std::move(results));
  if (interrupted_by != 0) {
    std::cout << "interrupted by " << (interrupted_by == SIGINT ? "SIGINT" : "SIGTERM") << "\n";
    return 128 + interrupted_by;  // as a shell reports a process the signal ended: 130, 143
  }
  return status;
}

int command_list(const Args& a) {
  if (a.fixtures) {
    for (const Fixture* f : list_fixtures()) {
      std::vector<std::string> ins;
      for (const FixtureInput& in : f->inputs)
        ins.push_back(str_cat(in.name, ": ", dtype_short_name(in.dtype), format_sizes(in.shape)));
      std::cout << f->name << "(" << absl::StrJoin(ins, ", ") << ")  " << f->description << "\n";
    }
    return 0;
  }
  Loaded loaded = load(a.paths);
  for (const CaseResult& r : loaded.load_failures) std::cerr << r.message << "\n";
  size_t matched = 0;
  for (const CaseRef& r : select(loaded.suites, a, &matched)) {
    std::cout << r.id() << "  (" << r.suite->file << ":" << r.spec->where.line << ")";
    if (!r.spec->description.empty()) std::cout << "  " << shorten(r.spec->description);  // as docs/spec-format.md says
    std::cout << "\n";
  }
  // The exit status of run (a file that did not load 1, nothing found or
  // matched 5): a script that lists before it runs reads both alike.
  const int status = loaded.load_failures.empty() ? 0 : 1;
  if (!a.filter.empty() && matched == 0) {  // a typo in a filter lists nothing, and says so
    std::cerr << "no case matches --filter '" << shorten(a.filter) << "'\n";
    return status == 0 ? 5 : status;
  }
  if (matched == 0 && status == 0) {  // a wrong PATH, or files without cases
    std::cerr << "no spec cases found in " << absl::StrJoin(a.paths, ", ") << "\n";
    return 5;
  }
  return status;
}

void print_section(std::string_view title, const std::string& body) {
  if (body.empty()) return;
  std::cout << "\n== " << title << " ==\n" << body;
  if (body.back() != '\n') std::cout << "\n";
}

int command_show(const Args& a) {
  if (a.paths.empty()) usage_error("show takes FILE::CASE or SUITE::CASE [PATH...]");
  const std::string& target = a.paths[0];
  const size_t sep = target.rfind("::");
  if (sep == std::string::npos) usage_error(str_cat("show: expected FILE::CASE, got '", target, "'"));
  std::string where = target.substr(0, sep), name = target.substr(sep + 2);
  std::string device;
  if (size_t at = name.find('@'); at != std::string::npos) device = name.substr(at + 1), name = name.substr(0, at);
  // FILE::CASE when `where` is a file; otherwise SUITE::CASE, the suite found
  // in the PATHs after the target (default: specs), so a folder named like
  // the suite in the current directory does not shadow it.
  std::error_code ec;
  std::vector<std::string> search(a.paths.begin() + 1, a.paths.end());
  if (search.empty()) search.push_back("specs");
  const bool is_file = std::filesystem::is_regular_file(where, ec);
  Loaded loaded = load(is_file ? std::vector<std::string>{where} : search);
  for (const CaseResult& r : loaded.load_failures) std::cerr << r.message << "\n";
  std::vector<CaseRef> named;  // the case, once per device it runs on
  for (const CaseRef& ref : expand_cases(loaded.suites)) {
    if (ref.spec->name == name && (is_file ? ref.suite->file == where : ref.suite->name == where)) named.push_back(ref);
  }
  const auto on_device = std::find_if(named.begin(), named.end(),
                                      [&](const CaseRef& ref) { return device.empty() || ref.device == device; });
  const std::string place =
      is_file ? where : str_cat("a suite named '", where, "' under ", absl::StrJoin(search, ", "));
  if (on_device == named.end()) {
    if (named.empty()) {
      std::cerr << "opspec: show: no case '" << name << "' in " << place << "\n";
      return 2;
    }
    // The case is there, on other devices: "no case 'twice'" sent users looking for a typo.
    std::vector<std::string> devices;
    for (const CaseRef& ref : named) devices.push_back(ref.device);
    std::cerr << "opspec: show: case '" << name << "' in " << place << " does not run on '" << device
              << "'; it runs on: " << absl::StrJoin(devices, ", ") << "\n";
    return 2;
  }
  const CaseRef& ref = *on_device;
  CaseResult r = run_case(ref, {});
  std::cout << r.id << "  (" << r.file << ":" << r.line << ")\n";
  if (!ref.spec->description.empty()) std::cout << ref.spec->description << "\n";
  std::cout << "outcome: " << outcome_name(r.outcome) << "\n";
  if (!r.message.empty()) std::cout << indent(r.message) << "\n";
  if (!r.error.empty()) print_section("error raised", r.error);
  print_section("eager debug string", r.eager_debug_string);
  print_section("compiled debug string", r.compiled_debug_string);
  for (size_t i = 0; i < r.graphs.size(); ++i) print_section(str_cat("graph ", i + 1), r.graphs[i]);  // as failures number them
  print_section("graph breaks", absl::StrJoin(r.graph_breaks, "\n"));
  print_section("fused kernels", absl::StrJoin(r.fused_kernels, "\n"));
  return r.outcome == Outcome::kFailed ? 1 : 0;
}

}  // namespace

int run_cli(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "diff") {
    return internal::run_diff(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr,
                              ::isatty(STDOUT_FILENO) != 0);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "bench") {
    return internal::run_bench_command(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr,
                                       ::isatty(STDOUT_FILENO) != 0);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "report") {
    return internal::run_report(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
  }
  Args a = parse_args(argc, argv);
  // Before any spec is read: the loader resolves op and fixture names.
  for (const std::string& path : a.plugins) {
    if (absl::Status st = load_plugin(path); !st.ok()) {
      std::cerr << "opspec: " << st.message() << "\n";
      return 2;
    }
  }
  try {
    if (a.command == "run") return command_run(a);
    if (a.command == "list") return command_list(a);
    return command_show(a);
  } catch (const std::exception& e) {
    std::cerr << "opspec: " << e.what() << "\n";
    return 2;
  }
}

void bind_symbols_before_isolating(int argc, char** argv) {
  constexpr const char* kMarker = "OPSPEC_BOUND_NOW";  // set with LD_BIND_NOW by the re-exec below
  if (std::getenv(kMarker) != nullptr) {  // the re-executed process: the loader has read both
    ::unsetenv("LD_BIND_NOW");
    ::unsetenv(kMarker);
    return;
  }
  if (argc < 2 || std::string_view(argv[1]) != "run" || std::getenv("LD_BIND_NOW") != nullptr) return;
  const bool isolate = std::any_of(argv + 2, argv + argc, [](const char* arg) { return std::string_view(arg) == "--isolate"; });
  if (!isolate) return;
  ::setenv("LD_BIND_NOW", "1", 1);
  ::setenv(kMarker, "1", 1);
  ::execv("/proc/self/exe", argv);
  ::unsetenv("LD_BIND_NOW");  // no /proc: run with lazy binding, a little slower
  ::unsetenv(kMarker);
}

}  // namespace opspec::cli
