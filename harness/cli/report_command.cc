// report_command.cc: `opspec report`: rebuilding a report's index, or a report
// of saved DebugMode logs (each a page with its log). See Note [HTML report].
#include "harness/cli/internal/report_command.h"

#include <filesystem>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "harness/debug_text_io.h"
#include "harness/spec/html_report.h"

namespace opspec::cli::internal {
namespace {

constexpr const char* kReportUsage =
    "usage: opspec report DIR                 rebuild DIR/index.html over the case pages in DIR\n"
    "       opspec report [--out DIR] LOG...  a report with a page per DebugMode log (opspec JSON or\n"
    "                                         debug_string() text, PyTorch's too); DIR defaults to\n"
    "                                         opspec-report\n";

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
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    (args.empty() ? err : out) << kReportUsage;
    return args.empty() ? 2 : 0;
  }
  std::error_code ec;
  if (args[0] != "--out" && std::filesystem::is_directory(args[0], ec)) {
    if (args.size() != 1) {
      err << "opspec report: give one report directory, or --out DIR LOG...\n\n" << kReportUsage;
      return 2;
    }
    if (absl::Status s = spec::rebuild_html_index(args[0]); !s.ok()) {
      err << "opspec report: " << s.message() << "\n";
      return 2;
    }
    out << "wrote " << (std::filesystem::path(args[0]) / "index.html").string() << "\n";
    return 0;
  }
  const bool out_given = args[0] == "--out";
  const std::string dir = out_given ? (args.size() > 1 ? args[1] : "") : "opspec-report";
  const size_t first_log = out_given ? 2 : 0;
  if (args.size() <= first_log || dir.empty()) {
    err << "opspec report: give the logs to report on\n\n" << kReportUsage;
    return 2;
  }
  std::vector<spec::ReportCase> cases;
  spec::Summary summary;
  for (size_t i = first_log; i < args.size(); ++i) {
    absl::StatusOr<std::vector<DebugCall>> log = load_debug_log(args[i]);
    if (!log.ok()) {
      err << "opspec report: " << log.status().message() << "\n";
      return 2;
    }
    spec::CaseResult r;
    r.id = r.name = std::filesystem::path(args[i]).filename().string();
    r.suite = "logs";
    r.file = args[i];
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
