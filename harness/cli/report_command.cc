// report_command.cc: `opspec report`: rebuilding a report's index, or a report
// of saved DebugMode logs (each a page with its log). See Note [HTML report].
#include "harness/cli/internal/report_command.h"

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "harness/debug_text_io.h"
#include "harness/spec/html_report.h"

namespace opspec::cli::internal {
namespace {

constexpr const char* kReportUsage =
    "usage: opspec report DIR                 rebuild DIR/index.html over the case pages in DIR\n"
    "       opspec report [--out DIR] LOG...  a report with a page per DebugMode log (opspec JSON or\n"
    "                                         debug_string() text, PyTorch's too); DIR defaults to\n"
    "                                         opspec-report; options may come anywhere, and after\n"
    "                                         `--` every argument is a LOG\n";

// log_text: the log as debug_string() shows it.
std::string log_text(const std::vector<DebugCall>& log) {
  std::string text;
  for (const DebugCall& c : log) {
    const std::string indent(static_cast<size_t>(2 + 2 * c.depth), ' ');
    str_append(&text, indent, c.render({}), "\n");
    const auto hashes = [&](std::string_view what, const auto& named) {
      if (named.empty()) return;
      str_append(&text, indent, "# ", what, " hashes: {");
      for (size_t i = 0; i < named.size(); ++i) {
        str_append(&text, i ? ", " : "", named[i].first, ": ");
        for (size_t k = 0; k < named[i].second.size(); ++k) str_append(&text, k ? ", " : "", named[i].second[k].str());
      }
      text += "}\n";
    };
    hashes("pre-kernel", c.pre_kernel_hashes);
    hashes("post-kernel", c.post_kernel_hashes);
  }
  return text;
}

}  // namespace

int run_report(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const auto usage_error = [&](const std::string& message) {
    err << "opspec report: " << message << "\n\n" << kReportUsage;
    return 2;
  };
  if (args.empty()) {
    err << kReportUsage;
    return 2;
  }
  // Options anywhere: `report LOG --out DIR` once read "--out" as a log.
  std::vector<std::string> inputs;
  std::optional<std::string> out_dir;
  bool options_end = false;  // after `--`, every argument is a log (one named -x.txt too)
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_end) {
      inputs.push_back(a);
    } else if (a == "--") {
      options_end = true;
    } else if (a == "-h" || a == "--help") {
      out << kReportUsage;
      return 0;
    } else if (a == "--out") {
      if (out_dir) return usage_error("--out given twice");
      if (i + 1 >= args.size()) return usage_error("--out needs a directory");
      out_dir = args[++i];
      if (out_dir->empty()) return usage_error("--out needs a directory, got ''");
    } else if (!a.empty() && a[0] == '-') {
      return usage_error(str_cat("unknown option ", a));
    } else {
      inputs.push_back(a);
    }
  }
  std::error_code ec;
  if (!out_dir && !inputs.empty() && std::filesystem::is_directory(inputs[0], ec)) {
    if (inputs.size() != 1) return usage_error("give one report directory, or --out DIR LOG...");
    if (absl::Status s = spec::rebuild_html_index(inputs[0]); !s.ok()) {
      err << "opspec report: " << s.message() << "\n";
      return 2;
    }
    out << "wrote " << (std::filesystem::path(inputs[0]) / "index.html").string() << "\n";
    return 0;
  }
  if (inputs.empty()) return usage_error("give the logs to report on");
  const std::string dir = out_dir.value_or("opspec-report");
  // A log's page is named by its file name, or by its path where two logs
  // share a file name (a/log.txt and b/log.txt once wrote one page: the
  // second replaced the first). One log given twice is one page.
  std::map<std::string, int> name_count;
  std::set<std::string> seen;
  for (const std::string& input : inputs) {
    const std::filesystem::path normal = std::filesystem::path(input).lexically_normal();
    if (!seen.insert(normal.string()).second) return usage_error(str_cat("the log '", input, "' is given twice"));
    ++name_count[normal.filename().string()];
  }
  std::vector<spec::ReportCase> cases;
  spec::Summary summary;
  for (const std::string& input : inputs) {
    // load_debug_log reads a directory as an empty log: a report DIR given with --out made an empty page.
    if (std::filesystem::is_directory(input, ec)) {
      err << "opspec report: cannot read debug log '" << input << "': it is a directory (`opspec report DIR`, "
          << "without --out, rebuilds a report's index)\n";
      return 2;
    }
    absl::StatusOr<std::vector<DebugCall>> log = load_debug_log(input);
    if (!log.ok()) {
      err << "opspec report: " << log.status().message() << "\n";
      return 2;
    }
    spec::CaseResult r;
    const std::filesystem::path normal = std::filesystem::path(input).lexically_normal();
    r.id = r.name = name_count[normal.filename().string()] > 1 ? normal.string() : normal.filename().string();
    r.suite = "logs";
    r.file = input;
    r.message = str_cat(log->size(), " entries");
    r.outcome = spec::Outcome::kPassed;
    r.eager_debug_string = log_text(*log);
    spec::make_reportable(r);
    summary.add(r);
    cases.push_back({std::move(r), nullptr});
  }
  if (absl::Status s = spec::write_html_report(dir, cases, summary); !s.ok()) {
    err << "opspec report: " << s.message() << "\n";
    return 2;
  }
  out << "wrote " << (std::filesystem::path(dir) / "index.html").string() << "\n";
  return 0;
}

}  // namespace opspec::cli::internal
