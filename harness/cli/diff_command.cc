// diff_command.cc: `opspec diff A B`: the first place two DebugMode logs
// diverge, each log either opspec's JSON (debug_log_io.h) or a debug_string()
// text, opspec's or PyTorch's (debug_text_io.h), so a PyTorch run can be
// compared with opspec's run of the same program. Structure and hashes are
// compared as PyTorch's check_hash_mismatches does (Note [Log diff semantics]),
// with --rtol / --atol for float hashes; the entries around the divergence
// are shown side by side.
#include "harness/cli/internal/diff_command.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/debug_diff.h"
#include "harness/debug_text_io.h"
#include "harness/spec/html_report.h"

namespace opspec::cli::internal {
namespace {

constexpr const char* kDiffUsage =
    "usage: opspec diff A B [--rtol R] [--atol A] [--context N] [--no-color] [--html FILE]\n"
    "  A, B: DebugMode logs: opspec's JSON (save_log_file) or debug_string() text, opspec's or\n"
    "        PyTorch's (DebugMode(record_ids=True) with log_tensor_hashes; save dm.debug_string())\n"
    "  --rtol R     float hashes within relative difference R match (default 0)\n"
    "  --atol A     float hashes within absolute difference A match (default 0)\n"
    "  --context N  entries shown before and after the divergence (default 3)\n"
    "  --html FILE  also write both logs side by side, whole, as an HTML page (the divergence marked)\n"
    "exit status: 0 the logs agree, 1 they diverge, 2 a usage error or an unreadable log\n";

// kMaxContext: the most entries --context shows on each side.
constexpr int kMaxContext = 1000000;

// fit: s cut to width columns ("..." marks a cut), padded to width.
std::string fit(const std::string& s, size_t width) {
  if (s.size() > width) return s.substr(0, width - 3) + "...";
  return s + std::string(width - s.size(), ' ');
}

}  // namespace

int run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool tty) {
  std::vector<std::string> paths;
  DiffOptions options;
  size_t context = 3;
  bool color = tty;
  std::string html;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto number = [&](double* v) {
      // Finite: a nan tolerance compares false with every difference.
      if (i + 1 >= args.size() || !absl::SimpleAtod(args[i + 1], v) || !std::isfinite(*v) || *v < 0) {
        err << "opspec diff: " << a << " needs a finite number >= 0\n\n" << kDiffUsage;
        return false;
      }
      ++i;
      return true;
    };
    if (a == "--rtol") {
      if (!number(&options.rtol)) return 2;
    } else if (a == "--atol") {
      if (!number(&options.atol)) return 2;
    } else if (a == "--context") {
      // A whole number: 0.5 was cast to 0 entries, and 1e30 past size_t.
      int n = 0;
      const std::string v = i + 1 < args.size() ? args[++i] : "";
      if (!absl::SimpleAtoi(v, &n) || n < 0 || n > kMaxContext) {
        err << "opspec diff: --context: not a whole number from 0 to " << kMaxContext << ": '" << shorten(v) << "'\n\n"
            << kDiffUsage;
        return 2;
      }
      context = static_cast<size_t>(n);
    } else if (a == "--html") {
      if (i + 1 >= args.size()) {
        err << "opspec diff: --html needs a file\n\n" << kDiffUsage;
        return 2;
      }
      html = args[++i];
      if (html.empty()) {  // read as "no page" once, silently
        err << "opspec diff: --html needs a file name, got ''\n\n" << kDiffUsage;
        return 2;
      }
    } else if (a == "--no-color") {
      color = false;
    } else if (a == "-h" || a == "--help") {
      out << kDiffUsage;
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      err << "opspec diff: unknown option " << a << "\n\n" << kDiffUsage;
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() != 2) {
    err << "opspec diff: give two logs, got " << paths.size() << "\n\n" << kDiffUsage;
    return 2;
  }
  std::vector<std::vector<DebugCall>> logs;
  for (const std::string& p : paths) {
    // load_debug_log reads a directory as an empty log: `diff dir1 dir2` said the logs agree.
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      err << "opspec diff: cannot read debug log '" << p << "': it is a directory\n";
      return 2;
    }
    absl::StatusOr<std::vector<DebugCall>> log = load_debug_log(p);
    if (!log.ok()) {
      err << "opspec diff: " << log.status().message() << "\n";
      return 2;
    }
    logs.push_back(*std::move(log));
  }
  const std::vector<DebugCall>& a = logs[0];
  const std::vector<DebugCall>& b = logs[1];
  const LogDiff d = diff_logs(a, b, options);
  const size_t divergence = d.divergence_index().value_or(std::string::npos);
  const std::vector<std::string> lines1 = rendered_entries(a), lines2 = rendered_entries(b);
  const auto line_of = [](const std::vector<std::string>& lines, size_t i) { return i < lines.size() ? lines[i] : ""; };
  if (!html.empty()) {
    std::string page = str_cat(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>opspec diff</title>\n<style>"
        "body{font-family:system-ui,sans-serif;margin:1.5em}td{padding:.1em .5em;vertical-align:top}"
        "code{white-space:pre;font-size:.8em}tr.divergent{background:#ffebe9;font-weight:bold}"
        "pre{background:#f6f8fa;padding:.6em}</style></head><body>\n<h1>opspec diff</h1>\n<p>log 1: ",
        spec::html_escape(paths[0]), " (", a.size(), " entries)<br>log 2: ", spec::html_escape(paths[1]), " (",
        b.size(), " entries)</p>\n<pre>", spec::html_escape(d.report()), "</pre>\n<table><tr><th>#</th><th>log 1</th><th>log 2</th></tr>\n");
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      str_append(&page, "<tr", i == divergence ? " class=\"divergent\" id=\"divergence\"" : "", "><td>", i,
                 "</td><td><code>", spec::html_escape(line_of(lines1, i)), "</code></td><td><code>",
                 spec::html_escape(line_of(lines2, i)), "</code></td></tr>\n");
    }
    page += "</table>\n</body></html>\n";
    std::ofstream file(html, std::ios::binary);
    file << page;
    file.close();
    if (!file) {
      err << "opspec diff: cannot write '" << html << "'\n";
      return 2;
    }
  }
  out << "log 1: " << paths[0] << " (" << a.size() << " entries)\nlog 2: " << paths[1] << " (" << b.size()
      << " entries)\n";
  if (d.equivalent()) {
    out << d.report() << (options.rtol > 0 || options.atol > 0 ? " within the tolerances" : "") << "\n";
    return 0;
  }
  out << d.report() << "\n\n";
  // Side by side: the entries around the first divergence, that one marked.
  const size_t at = divergence;
  const size_t begin = at > context ? at - context : 0;
  const size_t end = std::min(std::max(a.size(), b.size()), at + context + 1);
  const char* env_columns = std::getenv("COLUMNS");
  const size_t columns = std::max<size_t>(60, env_columns != nullptr ? std::strtoul(env_columns, nullptr, 10) : 160);
  const size_t width = (columns - 10) / 2;
  out << "       " << fit("log 1", width) << " | log 2\n";
  for (size_t i = begin; i < end; ++i) {
    const bool marked = i == at;
    const std::string row = str_cat(marked ? "> " : "  ", std::string(4 - std::min<size_t>(4, std::to_string(i).size()), ' '),
                                    i, " ", fit(line_of(lines1, i), width), " | ", line_of(lines2, i));
    out << (marked && color ? "\x1b[31m" : "") << row << (marked && color ? "\x1b[0m" : "") << "\n";
  }
  if (at >= a.size() || at >= b.size()) {
    out << "log " << (at >= a.size() ? 1 : 2) << " ends after " << std::min(a.size(), b.size()) << " entries\n";
  }
  return 1;
}

}  // namespace opspec::cli::internal
