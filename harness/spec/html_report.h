// html_report.h: `opspec run --report DIR`: a static HTML report of a run (no
// server; plain HTML and CSS with a little JavaScript to filter the index).
// See Note [HTML report].
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "harness/spec/report.h"
#include "harness/spec/runner.h"

namespace opspec::spec {

// Note [HTML report]
// DIR/index.html lists every case (status, time, suite::case, file:line) with
// a filter box and status toggles (also set from the URL:
// index.html#filter=TEXT&hide=passed); DIR/cases/<id>.html shows one case,
// its result kept beside it as JSON so the index can be rebuilt from the
// pages a directory holds (`opspec report DIR`, failing gtest assertions): the
// failure at the top, then the program with line numbers (or the fixture's
// name), the inputs, the eager DebugMode log (with `--report`, recorded with
// ids, norm hashes of inputs and outputs and module markers: RunOptions::
// report_logs), each compiled graph (its text,
// drawn as inline SVG by Graphviz's library where opspec was built with it,
// and its DOT text), the graph breaks, the fused kernels (launched, and each
// one's program: FusedProgram::str(), on cpu), each graph's guards
// and the recompile reasons, and the compiled log; a failed equivalence check
// adds both runs' logs side by side with the first divergent entry marked. Every text is HTML-escaped; a page never loads anything from
// outside DIR.

// ReportCase: one case's result and, where the runner knows it, its spec.
struct ReportCase {
  CaseResult result;
  const CaseSpec* spec = nullptr;  // null for results without a loaded spec
};

// write_html_report: writes DIR/index.html and a page per case (creating DIR).
absl::Status write_html_report(const std::string& dir, const std::vector<ReportCase>& cases, const Summary& summary);

// add_to_html_report: adds (or replaces, by id) one case's page in DIR and
// rebuilds DIR/index.html over every page there: how a failing gtest
// assertion joins a report (OPSPEC_REPORT_DIR).
absl::Status add_to_html_report(const std::string& dir, const ReportCase& c);

// rebuild_html_index: DIR/index.html over every case page in DIR (each page
// keeps its result beside it as DIR/cases/<page>.json), each linked to the
// page that holds it: `opspec report DIR`.
absl::Status rebuild_html_index(const std::string& dir);

// kMaxPageStem: the most bytes of a page name before its hash and ".html",
// so that "<page>.json" fits the 255 bytes a file name may have.
inline constexpr size_t kMaxPageStem = 160;

// case_page_name: the file name of a case's page, plus ".html": its id with
// letters, digits, '.', '_', '-' and '@' kept, "::" written "~~" and every
// other byte "~xx" (its hex): `suite::case@cpu` -> suite~~case@cpu.html. An id
// with an upper-case letter, or whose name would pass kMaxPageStem, has it cut
// there and "~h" and a 64-bit hash of the id added, so no two ids share a page
// on a case-insensitive file system either (barring a hash collision).
std::string case_page_name(std::string_view id);

// dot_to_svg: the DOT text laid out and drawn as an <svg> element by
// Graphviz's library, or "" where opspec was built without it (or the text
// is not DOT).
std::string dot_to_svg(const std::string& dot);

// html_escape: s with &, <, >, " and ' escaped.
std::string html_escape(std::string_view s);

}  // namespace opspec::spec
