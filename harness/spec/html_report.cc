// html_report.cc: write_html_report. See Note [HTML report].
#include "harness/spec/html_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <unistd.h>

#include <xxhash.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#ifdef OPSPEC_HAVE_GRAPHVIZ
#include <graphviz/gvc.h>
#endif

namespace opspec::spec {
namespace {

constexpr const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:.2em .6em;text-align:left;border-bottom:1px solid #eee}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em}
.passed{color:#1a7f37}.failed{color:#cf222e;font-weight:bold}.skipped,.xfailed{color:#9a6700}
.failure{background:#ffebe9;border:1px solid #cf222e}
.line{display:block}.line .no{color:#888;display:inline-block;width:3em;user-select:none}
.break{background:#fff1a8}
#filter{width:30em;padding:.3em}
table.aligned code{white-space:pre;font-size:.8em}tr.divergent{background:#ffebe9;font-weight:bold}
</style>
)";

// The index's filter: by text (id, file) and by status.
constexpr const char* kFilterScript = R"(<script>
function applyFilter() {
  const q = document.getElementById('filter').value.toLowerCase();
  const show = {};
  for (const b of document.querySelectorAll('input[data-status]')) show[b.dataset.status] = b.checked;
  let shown = 0;
  for (const row of document.querySelectorAll('tr.case')) {
    const ok = row.textContent.toLowerCase().includes(q) && show[row.dataset.status];
    row.style.display = ok ? '' : 'none';
    if (ok) ++shown;
  }
  document.getElementById('shown').textContent = shown;
  const hidden = Object.keys(show).filter(s => !show[s]);
  history.replaceState(null, '', '#filter=' + encodeURIComponent(q) + (hidden.length ? '&hide=' + hidden.join(',') : ''));
}
// A link to index.html#filter=TEXT&hide=passed,skipped opens filtered.
window.addEventListener('DOMContentLoaded', () => {
  const params = new URLSearchParams(location.hash.slice(1));
  document.getElementById('filter').value = params.get('filter') || '';
  for (const s of (params.get('hide') || '').split(',')) {
    const box = document.querySelector('input[data-status="' + s + '"]');
    if (box) box.checked = false;
  }
  if (location.hash) applyFilter();
});
</script>
)";

std::string page(std::string_view title, std::string_view body, std::string_view extra_head = "") {
  return str_cat("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", html_escape(title),
                 "</title>\n", kStyle, extra_head, "</head><body>\n", body, "</body></html>\n");
}

std::string pre(std::string_view text, std::string_view cls = "") {
  return str_cat("<pre", cls.empty() ? "" : str_cat(" class=\"", cls, "\""), ">", html_escape(text), "</pre>\n");
}

// section: a heading and its text, left out when the text is empty.
std::string section(std::string_view title, std::string_view text, std::string_view id) {
  if (text.empty()) return "";
  return str_cat("<h2 id=\"", id, "\">", html_escape(title), "</h2>\n", pre(text));
}

// break_lines: the file lines graph breaks name ("... (at FILE:LINE...)") in
// file; with program_lines, the program's own lines, which a site gives after
// ") at " where the program is not the file's text (Note [Program positions]).
std::set<int> break_lines(const CaseResult& r, bool program_lines) {
  std::set<int> lines;
  for (const std::string& b : r.graph_breaks) {
    const size_t at = b.rfind("(at ");
    if (at == std::string::npos) continue;
    const std::string site = b.substr(at + 4);
    const size_t colon = site.find(':');
    if (colon == std::string::npos || site.substr(0, colon) != r.file) continue;
    const size_t own = site.rfind(") at ");
    if (program_lines && own == std::string::npos) continue;
    int line = 0;
    for (size_t i = program_lines ? own + 5 : colon + 1;
         i < site.size() && std::isdigit(static_cast<unsigned char>(site[i])) && line < 100000000; ++i) {
      line = line * 10 + (site[i] - '0');
    }
    if (line > 0) lines.insert(line);
  }
  return lines;
}

std::string program_html(const CaseSpec& spec, const CaseResult& r) {
  if (!spec.program) return str_cat("<p>fixture <code>", html_escape(spec.fixture), "</code></p>\n");
  const bool program_lines = !spec.program->origin().unmapped.empty();  // not the file's lines: number them 1, 2, ...
  const std::set<int> breaks = break_lines(r, program_lines);
  const int first = program_lines ? 1 : spec.program->origin().first_line;
  std::string out = "<pre class=\"program\">";
  int n = 0;
  std::string_view source = spec.program->source();
  if (!source.empty() && source.back() == '\n') source.remove_suffix(1);
  for (absl::string_view line : absl::StrSplit(absl::string_view(source.data(), source.size()), '\n')) {
    const int file_line = first + n++;
    const bool broke = breaks.contains(file_line);
    str_append(&out, "<span class=\"line", broke ? " break" : "", "\" data-line=\"", file_line, "\"><span class=\"no\">",
               file_line, "</span>", html_escape(std::string_view(line.data(), line.size())), "</span>");
  }
  return out + "</pre>\n";
}

std::string inputs_html(const CaseSpec& spec) {
  if (spec.inputs.empty()) return "";
  std::string out = "<h2 id=\"inputs\">Inputs</h2>\n<table><tr><th>name</th><th>shape</th><th>dtype</th><th>init</th></tr>\n";
  for (const InputSpec& in : spec.inputs) {
    str_append(&out, "<tr><td>", html_escape(in.name), "</td><td>", html_escape(format_sizes(in.shape)), "</td><td>",
               dtype_short_name(in.dtype.value_or(spec.dtype)), "</td><td>", html_escape(in.init), "</td></tr>\n");
  }
  return out + "</table>\n";
}

std::string graphs_html(const CaseResult& r) {
  std::string out;
  for (size_t i = 0; i < r.graphs.size(); ++i) {
    str_append(&out, "<h2 id=\"graph-", i + 1, "\">Graph ", i + 1, " of ", r.graphs.size(), "</h2>\n", pre(r.graphs[i]));
    if (i < r.graph_dots.size()) {
      const std::string svg = dot_to_svg(r.graph_dots[i]);
      if (!svg.empty()) str_append(&out, "<div class=\"graph-svg\">", svg, "</div>\n");
      str_append(&out, "<details", svg.empty() ? " open" : "", "><summary>Graphviz DOT", 
                 svg.empty() ? " (Graphviz was not found when opspec was built: render with <code>dot -Tsvg</code>)" : "",
                 "</summary>\n", pre(r.graph_dots[i], "dot"), "</details>\n");
    }
  }
  return out;
}

// equivalence_html: a failed equivalence check's logs side by side, the
// first divergent entry marked (both rows show their hashes).
std::string equivalence_html(const CaseResult& r) {
  if (r.equivalence_eager.empty() && r.equivalence_compiled.empty()) return "";
  std::string out = "<h2 id=\"equivalence\">Eager and compiled runs</h2>\n";
  if (r.equivalence_divergence >= 0) {
    str_append(&out, "<p>First divergence at entry ", r.equivalence_divergence, " (marked).</p>\n");
  }
  str_append(&out, "<table class=\"aligned\"><tr><th>#</th><th>eager</th><th>compiled</th></tr>\n");
  const size_t n = std::max(r.equivalence_eager.size(), r.equivalence_compiled.size());
  for (size_t i = 0; i < n; ++i) {
    const bool marked = static_cast<int>(i) == r.equivalence_divergence;
    const auto cell = [](const std::vector<std::string>& log, size_t k) {
      return k < log.size() ? str_cat("<td><code>", html_escape(log[k]), "</code></td>") : std::string("<td></td>");
    };
    str_append(&out, "<tr", marked ? " class=\"divergent\"" : "", "><td>", i, "</td>", cell(r.equivalence_eager, i),
               cell(r.equivalence_compiled, i), "</tr>\n");
  }
  return out + "</table>\n";
}

std::string case_page(const ReportCase& c) {
  const CaseResult& r = c.result;
  std::string body = str_cat("<p><a href=\"../index.html\">&larr; all cases</a></p>\n<h1>", html_escape(r.id),
                             "</h1>\n<p class=\"", outcome_name(r.outcome), "\">", outcome_name(r.outcome), "</p>\n<p>",
                             html_escape(r.file), ":", r.line, " &middot; ", absl::StrFormat("%.3f", r.seconds),
                             " s</p>\n");
  if (!r.message.empty()) {
    str_append(&body, "<h2 id=\"failure\">", r.outcome == Outcome::kFailed ? "Failure" : "Note", "</h2>\n",
               pre(r.message, r.outcome == Outcome::kFailed ? "failure" : ""));
  }
  if (c.spec != nullptr) {
    if (!c.spec->description.empty()) str_append(&body, "<p>", html_escape(c.spec->description), "</p>\n");
    str_append(&body, "<h2 id=\"program\">Program</h2>\n", program_html(*c.spec, r), inputs_html(*c.spec));
  }
  str_append(&body, equivalence_html(r));
  if (!r.report_eager_log.empty()) {
    str_append(&body, section("Eager log (DebugMode: ids, norm hashes of inputs and outputs, modules)",
                              r.report_eager_log, "eager-log"));
  } else {
    str_append(&body, section("Eager log (DebugMode)", r.eager_debug_string, "eager-log"));
  }
  str_append(&body, graphs_html(r));
  std::string breaks;
  for (const std::string& b : r.graph_breaks) str_append(&breaks, b, "\n");
  str_append(&body, section("Graph breaks", breaks, "breaks"));
  std::string kernels;
  for (const std::string& k : r.fused_kernels) str_append(&kernels, k, "\n");
  str_append(&body, section("Kernels launched", kernels, "kernels"));
  std::string programs;
  for (const std::string& k : r.kernel_programs) str_append(&programs, k, k.empty() || k.back() == '\n' ? "" : "\n", "\n");
  str_append(&body, section("Fused kernels (their programs)", programs, "kernel-programs"));
  str_append(&body, section("Guards and recompiles", r.guards, "guards"));
  str_append(&body, section("Compiled log (DebugMode)", r.compiled_debug_string, "compiled-log"));
  if (!r.error.empty() && r.message.find(r.error) == std::string::npos) {
    str_append(&body, section("Error raised", r.error, "error"));
  }
  return page(r.id, body);
}

// index_page: pages[i] is the file (under cases/) that holds cases[i]'s page.
std::string index_page(const std::vector<ReportCase>& cases, const std::vector<std::string>& pages,
                       const Summary& summary) {
  std::string body = str_cat("<h1>opspec report</h1>\n<p id=\"summary\">", html_escape(summary.str()), "</p>\n",
                             "<p><input id=\"filter\" placeholder=\"filter: suite::case or file\" oninput=\"applyFilter()\"> ");
  for (const char* s : {"passed", "failed", "skipped", "xfailed"}) {
    str_append(&body, "<label class=\"", s, "\"><input type=\"checkbox\" checked data-status=\"", s,
               "\" onchange=\"applyFilter()\"> ", s, "</label> ");
  }
  str_append(&body, " &middot; <span id=\"shown\">", cases.size(), "</span> shown</p>\n",
             "<table id=\"cases\"><tr><th>status</th><th>case</th><th>time</th><th>file</th></tr>\n");
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& r = cases[i].result;
    const std::string_view status = outcome_name(r.outcome);
    str_append(&body, "<tr class=\"case\" data-status=\"", status, "\"><td class=\"", status, "\">", status,
               "</td><td><a href=\"cases/", html_escape(pages[i]), "\">", html_escape(r.id), "</a></td><td>",
               absl::StrFormat("%.3f s", r.seconds), "</td><td>", html_escape(r.file),
               r.line > 0 ? str_cat(":", r.line) : "", "</td></tr>\n");
  }
  str_append(&body, "</table>\n");
  return page("opspec report", body, kFilterScript);
}

absl::Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(str_cat("cannot write '", path.string(), "'"));
  return absl::OkStatus();
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : valid_utf8(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Graphviz's context is not thread-safe: one drawing at a time.
std::string dot_to_svg(const std::string& dot) {
#ifdef OPSPEC_HAVE_GRAPHVIZ
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  static GVC_t* gvc = gvContext();  // kept: plugins load once
  Agraph_t* g = agmemread(dot.c_str());
  if (g == nullptr) return "";
  std::string svg;
  if (gvLayout(gvc, g, "dot") == 0) {
    char* data = nullptr;
    unsigned int len = 0;
    if (gvRenderData(gvc, g, "svg", &data, &len) == 0 && data != nullptr) {
      svg.assign(data, len);
      // Inline in HTML: from the <svg> element on (no XML prolog or doctype).
      if (const size_t at = svg.find("<svg"); at != std::string::npos) svg.erase(0, at);
    }
    gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  return svg;
#else
  static_cast<void>(dot);
  return "";
#endif
}

std::string case_page_name(std::string_view id) {
  // '~' escapes (it is unreserved in URLs and allowed in every file system's
  // names), so no kept character can start an escape: two ids never share a page.
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  bool upper = false;
  size_t cut = 0;  // the longest whole-token prefix of at most kMaxPageStem bytes
  for (size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    upper |= c >= 'A' && c <= 'Z';
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-' || c == '@') {
      name += static_cast<char>(c);
    } else if (c == ':' && i + 1 < id.size() && id[i + 1] == ':') {
      name += "~~";  // suite::case, the common case, stays short
      ++i;
    } else {
      name += '~';
      name += kHex[c >> 4];
      name += kHex[c & 15];
    }
    if (name.size() <= kMaxPageStem) cut = name.size();
  }
  // Where letters differ in case only (a case-insensitive file system would
  // give two ids one file) or the name is too long for a file, a hash of the
  // id follows a "~h", which no escape starts.
  if (upper || name.size() > kMaxPageStem) {
    name.resize(cut);
    const uint64_t h = XXH3_64bits(id.data(), id.size());
    name += "~h";
    for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(h >> shift) & 15];
  }
  return name + ".html";
}

namespace {

// write_case: the case's page and its result beside it (for rebuild_html_index).
absl::Status write_case(const std::filesystem::path& root, const ReportCase& c) {
  const std::string page_name = case_page_name(c.result.id);
  if (absl::Status st = write_file(root / "cases" / page_name, case_page(c)); !st.ok()) return st;
  return write_file(root / "cases" / (page_name + ".json"), result_to_json(c.result));
}

absl::Status make_dirs(const std::filesystem::path& root) {
  std::error_code ec;
  std::filesystem::create_directories(root / "cases", ec);
  if (ec) return absl::InternalError(str_cat("cannot create the report directory '", root.string(), "': ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::Status write_html_report(const std::string& dir, const std::vector<ReportCase>& cases, const Summary& summary) {
  const std::filesystem::path root(dir);
  if (absl::Status st = make_dirs(root); !st.ok()) return st;
  for (const ReportCase& c : cases) {
    if (absl::Status st = write_case(root, c); !st.ok()) return st;
  }
  std::vector<std::string> pages;
  for (const ReportCase& c : cases) pages.push_back(case_page_name(c.result.id));
  return write_file(root / "index.html", index_page(cases, pages, summary));
}

absl::Status add_to_html_report(const std::string& dir, const ReportCase& c) {
  const std::filesystem::path root(dir);
  if (absl::Status st = make_dirs(root); !st.ok()) return st;
  if (absl::Status st = write_case(root, c); !st.ok()) return st;
  return rebuild_html_index(dir);
}

absl::Status rebuild_html_index(const std::string& dir) {
  const std::filesystem::path cases_dir = std::filesystem::path(dir) / "cases";
  std::error_code ec;
  if (!std::filesystem::is_directory(cases_dir, ec)) {
    return absl::NotFoundError(str_cat("'", dir, "' holds no report (no cases/ directory)"));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(cases_dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<ReportCase> cases;
  std::vector<std::string> pages;
  std::map<std::string, size_t> by_id;
  for (const std::filesystem::path& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<CaseResult> r = result_from_json(text.str());
    if (!r.ok()) return absl::InvalidArgumentError(str_cat(f.string(), ": ", r.status().message()));
    // Link the page that is there (a report written by an older opspec named
    // pages differently); of two pages of one id, the one named as now wins.
    std::string page = f.stem().string();
    const auto [it, added] = by_id.emplace(r->id, cases.size());
    if (!added) {
      if (page == case_page_name(r->id)) cases[it->second] = {*std::move(r), nullptr}, pages[it->second] = page;
      continue;
    }
    cases.push_back({*std::move(r), nullptr});
    pages.push_back(std::move(page));
  }
  Summary summary;
  for (const ReportCase& c : cases) {
    summary.add(c.result);
    summary.seconds += c.result.seconds;
  }
  // Written aside and renamed: processes adding pages at once never leave a half index.
  const std::filesystem::path index = std::filesystem::path(dir) / "index.html";
  const std::filesystem::path tmp = std::filesystem::path(dir) / str_cat(".index.", ::getpid(), ".html");
  if (absl::Status st = write_file(tmp, index_page(cases, pages, summary)); !st.ok()) return st;
  std::filesystem::rename(tmp, index, ec);
  if (ec) return absl::InternalError(str_cat("cannot write '", index.string(), "': ", ec.message()));
  return absl::OkStatus();
}

}  // namespace opspec::spec
