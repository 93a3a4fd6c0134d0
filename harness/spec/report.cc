// report.cc: summary, JUnit XML and JSON output.
#include "harness/spec/report.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace opspec::spec {
namespace {

using nlohmann::json;

// xml_escape: text safe inside XML elements, or attributes when attribute:
// valid UTF-8 (See valid_utf8), markup characters escaped, and control
// characters other than tab, newline and carriage return dropped (XML 1.0
// forbids them). In an attribute those three are character references: a
// parser normalizes a raw one to a space (a suite "a\nb" read back "a b").
std::string xml_escape(std::string_view s, bool attribute = false) {
  const std::string text = valid_utf8(s);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\r': out += attribute ? "&#13;" : "\r"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') break;
        out += ch;
    }
  }
  return out;
}

}  // namespace

absl::Status check_writable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return absl::InvalidArgumentError(str_cat("cannot write ", path, ": it is a directory"));
  // symlink_status: a dangling link "exists" for this purpose; the probe's cleanup must not remove it.
  const bool existed = std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
  std::ofstream probe(path, std::ios::binary | std::ios::app);  // app: an existing file keeps its text
  if (!probe) return absl::InvalidArgumentError(str_cat("cannot write ", path, ": ", std::strerror(errno)));
  probe.close();
  if (!existed) std::filesystem::remove(path, ec);
  return absl::OkStatus();
}

namespace {

absl::Status write_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return absl::InvalidArgumentError(str_cat("cannot write ", path, ": it is a directory"));
  std::ofstream f(path, std::ios::binary);
  if (!f) return absl::InvalidArgumentError(str_cat("cannot write ", path, ": ", std::strerror(errno)));
  f << text;
  f.close();
  if (!f) return absl::InvalidArgumentError(str_cat("error writing ", path, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

// utf8_length: the length of the valid UTF-8 sequence at s[i], or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if ((b & 0xE0) == 0xC0) n = 2, cp = b & 0x1F, min = 0x80;
  else if ((b & 0xF0) == 0xE0) n = 3, cp = b & 0x0F, min = 0x800;
  else if ((b & 0xF8) == 0xF0) n = 4, cp = b & 0x07, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates, past U+10FFFF, and XML's forbidden U+FFFE/U+FFFF.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return n;
}

json to_json_object(const CaseResult& r) {
  json j = {{"id", r.id},           {"suite", r.suite},     {"name", r.name},
            {"file", r.file},       {"line", r.line},       {"outcome", std::string(outcome_name(r.outcome))},
            {"message", r.message}, {"seconds", r.seconds}};
  return j;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void make_reportable(CaseResult& r) {
  for (std::string* s : {&r.id, &r.suite, &r.name, &r.file, &r.message, &r.error, &r.eager_debug_string,
                         &r.compiled_debug_string}) {
    *s = valid_utf8(*s);
  }
  r.guards = valid_utf8(r.guards);
  r.report_eager_log = valid_utf8(r.report_eager_log);
  for (std::vector<std::string>* v : {&r.graphs, &r.graph_dots, &r.graph_breaks, &r.fused_kernels,
                                      &r.equivalence_eager, &r.equivalence_compiled, &r.kernel_programs}) {
    for (std::string& s : *v) s = valid_utf8(s);
  }
  if (r.accepted_debug_string) *r.accepted_debug_string = valid_utf8(*r.accepted_debug_string);
}

void Summary::add(const CaseResult& r) {
  switch (r.outcome) {
    case Outcome::kPassed: ++passed; break;
    case Outcome::kFailed: ++failed; break;
    case Outcome::kSkipped: ++skipped; break;
    case Outcome::kXfailed: ++xfailed; break;
  }
}

std::string Summary::str() const {
  return absl::StrFormat("%d passed, %d failed, %d skipped, %d xfailed in %.2f s", passed, failed, skipped, xfailed,
                         seconds);
}

std::string result_to_json(const CaseResult& r) {
  json j = to_json_object(r);
  j["eager_debug_string"] = r.eager_debug_string;
  j["compiled_debug_string"] = r.compiled_debug_string;
  j["graphs"] = r.graphs;
  j["graph_dots"] = r.graph_dots;
  j["guards"] = r.guards;
  j["report_eager_log"] = r.report_eager_log;
  j["kernel_programs"] = r.kernel_programs;
  j["equivalence_eager"] = r.equivalence_eager;
  j["equivalence_compiled"] = r.equivalence_compiled;
  j["equivalence_divergence"] = r.equivalence_divergence;
  j["graph_breaks"] = r.graph_breaks;
  j["fused_kernels"] = r.fused_kernels;
  j["error"] = r.error;
  if (r.accepted_debug_string) j["accepted_debug_string"] = *r.accepted_debug_string;
  // Invalid UTF-8 in a message (e.g. a program's string literal) must not throw.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<CaseResult> result_from_json(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("malformed case result");
  try {
    CaseResult r;
    r.id = j.at("id");
    r.suite = j.at("suite");
    r.name = j.at("name");
    r.file = j.at("file");
    r.line = j.at("line");
    const std::string outcome = j.at("outcome");
    r.outcome = outcome == "passed"    ? Outcome::kPassed
                : outcome == "skipped" ? Outcome::kSkipped
                : outcome == "xfailed" ? Outcome::kXfailed
                                       : Outcome::kFailed;
    r.message = j.at("message");
    r.seconds = j.at("seconds");
    r.eager_debug_string = j.value("eager_debug_string", "");
    r.compiled_debug_string = j.value("compiled_debug_string", "");
    r.graphs = j.value("graphs", std::vector<std::string>{});
    r.graph_dots = j.value("graph_dots", std::vector<std::string>{});
    r.guards = j.value("guards", std::string());
    r.report_eager_log = j.value("report_eager_log", std::string());
    r.kernel_programs = j.value("kernel_programs", std::vector<std::string>{});
    r.equivalence_eager = j.value("equivalence_eager", std::vector<std::string>{});
    r.equivalence_compiled = j.value("equivalence_compiled", std::vector<std::string>{});
    r.equivalence_divergence = j.value("equivalence_divergence", -1);
    r.graph_breaks = j.value("graph_breaks", std::vector<std::string>{});
    r.fused_kernels = j.value("fused_kernels", std::vector<std::string>{});
    r.error = j.value("error", "");
    if (j.contains("accepted_debug_string")) r.accepted_debug_string = j["accepted_debug_string"].get<std::string>();
    return r;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(str_cat("malformed case result: ", e.what()));
  }
}

absl::Status write_junit(const std::string& path, const std::vector<CaseResult>& results, const Summary& summary) {
  return write_file(path, junit_xml(results, summary));
}

std::string junit_xml(const std::vector<CaseResult>& results, const Summary& summary) {
  // Group by suite, keeping first-seen order.
  std::vector<std::string> suites;
  for (const CaseResult& r : results)
    if (std::find(suites.begin(), suites.end(), r.suite) == suites.end()) suites.push_back(r.suite);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppendFormat(&out, "<testsuites name=\"opspec\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                        summary.total(), summary.failed, summary.skipped + summary.xfailed, summary.seconds);
  for (const std::string& suite : suites) {
    Summary s;
    for (const CaseResult& r : results)
      if (r.suite == suite) s.add(r), s.seconds += r.seconds;
    absl::StrAppendFormat(&out, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                          xml_escape(suite, true), s.total(), s.failed, s.skipped + s.xfailed, s.seconds);
    for (const CaseResult& r : results) {
      if (r.suite != suite) continue;
      absl::StrAppendFormat(&out, "    <testcase classname=\"%s\" name=\"%s\" file=\"%s\" line=\"%d\" time=\"%.3f\"",
                            xml_escape(r.suite, true), xml_escape(r.id.substr(r.suite.size() + 2), true),
                            xml_escape(r.file, true),
                            r.line, r.seconds);
      switch (r.outcome) {
        case Outcome::kPassed: out += "/>\n"; break;
        case Outcome::kFailed: {
          std::string first_line = r.message.substr(0, r.message.find('\n'));
          str_append(&out, ">\n      <failure message=\"", xml_escape(first_line, true), "\">", xml_escape(r.message),
                          "</failure>\n    </testcase>\n");
          break;
        }
        case Outcome::kSkipped:
        case Outcome::kXfailed:
          str_append(&out, ">\n      <skipped message=\"",
                          xml_escape(str_cat(outcome_name(r.outcome), ": ",
                                                  r.message.substr(0, r.message.find('\n'))),
                                     true),
                          "\"/>\n    </testcase>\n");
          break;
      }
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

absl::Status write_json(const std::string& path, const std::vector<CaseResult>& results, const Summary& summary) {
  json cases = json::array();
  for (const CaseResult& r : results) cases.push_back(to_json_object(r));
  json j = {{"summary",
             {{"passed", summary.passed},
              {"failed", summary.failed},
              {"skipped", summary.skipped},
              {"xfailed", summary.xfailed},
              {"seconds", summary.seconds}}},
            {"cases", cases}};
  return write_file(path, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace opspec::spec
