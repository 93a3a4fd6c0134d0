// bench_command.cc: `opspec bench`: every spec case with a `bench:` section
// timed eagerly and compiled by each backend (See Note [opspec bench]), as a
// Compare-style table, Google Benchmark JSON, and a check against a baseline.
#include "harness/cli/internal/bench_command.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/cli/plugin.h"
#include "harness/program/fixture.h"
#include "harness/regex.h"
#include "harness/spec/bench.h"
#include "harness/spec/report.h"
#include "harness/spec/spec_loader.h"
#include "runtime/compile/backend.h"
#include "runtime/core/did_you_mean.h"

namespace opspec::cli::internal {
namespace {

constexpr const char* kBenchUsage =
    "usage: opspec bench [PATH...] [options]   time spec cases with a `bench:` section, eager against\n"
    "                                           each backend (PATH: files or directories; default specs)\n"
    "  --filter REGEX        only cases whose id (suite::case, suite::case@device on several devices) matches\n"
    "  --fixture NAME        also time a registered fixture on its default inputs (repeatable)\n"
    "  --fixtures            also time every registered fixture\n"
    "  --backends A,B        backends to time (default eager,aot_eager,fused; a case's own list wins)\n"
    "  --min-time S          seconds per target, up to 3600 (default 0.5; a case's min_time wins)\n"
    "  --repetitions N       rounds, in shuffled order each, 1 to 10000 (default 5)\n"
    "  --json FILE           write Google Benchmark JSON (compare.py reads it)\n"
    "  --baseline FILE       fail (exit 1) when a timing is slower than FILE's by more than\n"
    "  --max-regression P    P percent: 10 and 10% both mean 10% (default 10)\n"
    "  --load LIB.so         load a plugin first: its ops, kernels, fixtures and backends (repeatable)\n"
    "A file that does not load is reported (its row says why) and the other files are timed.\n"
    "A case that `opspec run` would skip here (skip_if, a device this machine lacks) is listed, not timed.\n"
    "exit status: 0 ok, 1 a case failed, was refused (compiled differs from eager) or regressed, or a\n"
    "             file did not load, 2 usage (also: a baseline no timing's name matches, an unwritable\n"
    "             --json), 5 no case with a `bench:` section was found (or matched --filter)\n";

// parse_percent: "10" or "10%" as 10; nullopt for anything else (negative, not finite, "10%%").
std::optional<double> parse_percent(std::string text) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  double p = 0;
  if (!absl::SimpleAtod(text, &p) || !std::isfinite(p) || p < 0) return std::nullopt;
  return p;
}

// load_bench_suites: the suites under paths. A file that does not load (or
// repeats an earlier file's suite name) goes to err and becomes a failed row
// in *failed, and the other files are still timed, as `opspec run` goes on
// past a bad file. Only a PATH that is not there is an error.
absl::StatusOr<std::vector<spec::SuiteSpec>> load_bench_suites(const std::vector<std::string>& paths, std::ostream& err,
                                                               std::vector<spec::BenchResult>* failed) {
  std::vector<spec::SuiteSpec> suites;
  if (paths.empty()) return suites;
  std::vector<std::string> unreadable;  // directories
  absl::StatusOr<std::vector<std::string>> files = spec::find_spec_files(paths, &unreadable);
  if (!files.ok()) return files.status();
  const auto fail = [&](const std::string& file, const std::string& message) {
    err << "opspec bench: " << message << "\n";
    failed->push_back({.id = str_cat(file, "::<load>"), .file = file, .error = message});
  };
  for (const std::string& message : unreadable) fail(message.substr(0, message.find(": error: ")), message);
  for (const std::string& file : *files) {
    absl::StatusOr<spec::SuiteSpec> suite = spec::load_suite_file(file);
    if (suite.ok()) {
      suites.push_back(*std::move(suite));
    } else {
      fail(file, std::string(suite.status().message()));
    }
  }
  const std::vector<spec::DuplicateSuite> dups = spec::duplicate_suites(suites);
  for (auto it = dups.rbegin(); it != dups.rend(); ++it) {
    fail(suites[it->index].file, it->message);
    suites.erase(suites.begin() + static_cast<std::ptrdiff_t>(it->index));
  }
  return suites;
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool tty) {
  std::vector<std::string> paths, plugins;
  spec::BenchOptions options;
  std::string filter, json, baseline;
  std::vector<std::string> fixtures;
  bool all_fixtures = false, max_regression_given = false;
  double max_regression_percent = 10;
  const auto usage_error = [&](const std::string& message) {
    err << "opspec bench: " << message << "\n\n" << kBenchUsage;
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) {
        err << "opspec bench: " << a << " needs a value\n\n" << kBenchUsage;
        return std::nullopt;
      }
      return args[++i];
    };
    if (a == "-h" || a == "--help") {
      out << kBenchUsage;
      return 0;
    } else if (a == "--fixture") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      if (std::find(fixtures.begin(), fixtures.end(), *v) == fixtures.end()) fixtures.push_back(*v);
    } else if (a == "--fixtures") {
      all_fixtures = true;
    } else if (a == "--filter" || a == "--json" || a == "--baseline" || a == "--load") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      // An empty file name was read as "none given": --json "" wrote nothing, silently.
      if (v->empty() && a != "--filter") return usage_error(str_cat(a, " needs a file name, got ''"));
      if (a == "--load") {
        plugins.push_back(*v);
      } else {
        (a == "--filter" ? filter : a == "--json" ? json : baseline) = *v;
      }
    } else if (a == "--backends") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      options.backends = absl::StrSplit(*v, ',', absl::SkipEmpty());
      if (options.backends.empty()) {
        err << "opspec bench: --backends needs at least one backend\n";
        return 2;
      }
    } else if (a == "--min-time") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      // !(s > 0) refuses nan too; inf (or a day) never ends a round.
      if (!absl::SimpleAtod(*v, &options.min_time) || !(options.min_time > 0) ||
          options.min_time > spec::kMaxBenchMinTime) {
        return usage_error(str_cat("--min-time: not a number of seconds above 0 and at most ", spec::kMaxBenchMinTime,
                                   ": '", shorten(*v), "'"));
      }
    } else if (a == "--repetitions") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      // A whole number: 0.5 was cast to 0 rounds and every timing read 0 ns.
      if (!absl::SimpleAtoi(*v, &options.repetitions) || options.repetitions < 1 ||
          options.repetitions > spec::kMaxBenchRepetitions) {
        return usage_error(str_cat("--repetitions: not a whole number from 1 to ", spec::kMaxBenchRepetitions, ": '",
                                   shorten(*v), "'"));
      }
    } else if (a == "--max-regression") {
      std::optional<std::string> v = value();
      if (!v) return 2;
      // Always percent: values up to 1 were once read as fractions (0.5 -> 50%, 1.5 -> 1.5%).
      std::optional<double> p = parse_percent(*v);
      if (!p) return usage_error(str_cat("--max-regression: not a percentage >= 0 (10 or 10%): '", shorten(*v), "'"));
      max_regression_percent = *p;
      max_regression_given = true;
    } else if (!a.empty() && a[0] == '-') {
      err << "opspec bench: unknown option " << a << "\n\n" << kBenchUsage;
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  if (max_regression_given && baseline.empty()) {
    return usage_error("--max-regression needs --baseline FILE to compare with");
  }
  if (paths.empty() && fixtures.empty() && !all_fixtures) paths.push_back("specs");
  // Before any spec is read, as `opspec run` does: the loader resolves op,
  // fixture and backend names (See Note [Plugins]).
  for (const std::string& path : plugins) {
    if (absl::Status s = load_plugin(path); !s.ok()) {
      err << "opspec bench: " << s.message() << "\n";
      return 2;
    }
  }
  // Backends, the output file and the baseline are checked before anything is
  // timed: a typo once cost the whole run, then failed it as "a case failed".
  {
    const std::vector<std::string> known = list_backends({.exclude_tags = {}});
    for (const std::string& b : options.backends) {
      if (std::find(known.begin(), known.end(), b) == known.end()) {
        return usage_error(str_cat("--backends: unknown backend '", shorten(b), "'", did_you_mean(b, known),
                                   " (registered: ", absl::StrJoin(known, ", "), ")"));
      }
    }
  }
  if (!json.empty()) {
    if (absl::Status s = spec::check_writable(json); !s.ok()) return usage_error(str_cat("--json: ", s.message()));
  }
  std::string baseline_text;
  if (!baseline.empty()) {
    std::ifstream in(baseline);
    std::error_code ec;
    if (!in || std::filesystem::is_directory(baseline, ec)) {
      return usage_error(str_cat("--baseline: cannot read '", baseline, "': ",
                                 std::filesystem::is_directory(baseline, ec) ? "it is a directory" : std::strerror(errno)));
    }
    std::stringstream text;
    text << in.rdbuf();
    baseline_text = text.str();
    if (absl::StatusOr<spec::BaselineComparison> c = spec::find_regressions({}, baseline_text, 0); !c.ok()) {
      err << "opspec bench: " << baseline << ": " << c.status().message() << "\n";
      return 2;
    }
  }
  std::optional<Regex> re;
  if (!filter.empty()) {
    absl::StatusOr<Regex> r = Regex::compile(filter);
    if (!r.ok()) {
      err << "opspec bench: --filter: " << r.status().message() << "\n";
      return 2;
    }
    re = *std::move(r);
  }
  std::vector<spec::BenchResult> results;  // the files that did not load first, then the cases timed
  absl::StatusOr<std::vector<spec::SuiteSpec>> suites = load_bench_suites(paths, err, &results);
  if (!suites.ok()) {
    err << "opspec bench: " << suites.status().message() << "\n";
    return 2;
  }
  int status = results.empty() ? 0 : 1;
  // Fixtures asked for: a suite "fixtures" of one case each, on its default inputs.
  if (all_fixtures) {
    for (const Fixture* f : list_fixtures()) fixtures.push_back(f->name);
  }
  if (!fixtures.empty()) {
    std::string yaml = "suite: fixtures\ncases:\n";
    for (const std::string& name : fixtures) {
      if (find_fixture(name) == nullptr) {
        err << "opspec bench: --fixture: no fixture named '" << name << "' (opspec list --fixtures lists them)\n";
        return 2;
      }
      str_append(&yaml, "  - {name: ", name, ", fixture: ", name, ", bench: true}\n");
    }
    absl::StatusOr<spec::SuiteSpec> suite = spec::load_suite_string(yaml, "<fixtures>");
    if (!suite.ok()) {
      err << "opspec bench: " << suite.status().message() << "\n";
      return 2;
    }
    suites->push_back(*std::move(suite));
  }
  size_t timed = 0;
  for (const spec::SuiteSpec& suite : *suites) {
    for (const spec::CaseRef& ref : spec::expand_cases(suite)) {
      if (!ref.spec->bench || (re && !re->search(ref.id()))) continue;
      ++timed;
      spec::BenchResult r = spec::run_bench(ref, options);
      if (!r.error.empty()) status = 1;
      for (const spec::BenchVariant& v : r.variants) {
        for (const spec::BenchTiming& t : v.timings) status = t.refused ? 1 : status;
      }
      results.push_back(std::move(r));
    }
  }
  // Nothing to time is most likely a typo (a wrong PATH or --filter): exit
  // 5, as `opspec run` (and pytest, collecting nothing) does, not "nothing slower".
  if (timed == 0) {
    if (re) {
      out << "no case with a `bench:` section matches --filter '" << shorten(filter) << "'\n";
    } else {
      out << "no case with a `bench:` section found\n";
    }
    if (status == 0) status = 5;
  }
  if (results.empty()) return status;
  out << spec::bench_table(results, tty);
  std::vector<std::string> warned;  // each warning once (the load one comes with every case)
  for (const spec::BenchResult& r : results) {
    for (const std::string& w : r.warnings) {
      if (std::find(warned.begin(), warned.end(), w) != warned.end()) continue;
      warned.push_back(w);
      out << "warning: " << w << "\n";
    }
  }
  if (!json.empty()) {
    std::ofstream file(json, std::ios::binary);
    file << spec::bench_json(results);
    file.close();
    if (!file) {
      err << "opspec bench: cannot write '" << json << "': " << std::strerror(errno) << "\n";
      return 2;
    }
  }
  if (!baseline.empty()) {
    absl::StatusOr<spec::BaselineComparison> c =
        spec::find_regressions(results, baseline_text, max_regression_percent / 100);
    if (!c.ok()) {
      err << "opspec bench: " << baseline << ": " << c.status().message() << "\n";
      return 2;
    }
    for (const spec::Regression& g : c->regressions) {
      out << absl::StrFormat("REGRESSION: %s: %.0f ns per call, baseline %.0f ns (+%.0f%%, allowed %g%%)\n", g.name,
                             g.current_ns, g.baseline_ns, 100 * (g.current_ns / g.baseline_ns - 1), max_regression_percent);
    }
    out << "baseline: " << c->compared << " timing" << (c->compared == 1 ? "" : "s") << " compared, "
        << c->new_timings << " new (not in the baseline), " << c->baseline_only << " only in the baseline\n";
    // Nothing compared passed silently: a baseline of another suite, or names changed since.
    if (c->compared == 0 && c->new_timings > 0) {
      err << "opspec bench: " << baseline << ": no timing has the name of a baseline entry: nothing was compared\n";
      return 2;
    }
    if (!c->regressions.empty()) status = 1;
  }
  return status;
}

}  // namespace opspec::cli::internal
