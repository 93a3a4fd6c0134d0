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
// a filter box and status toggles; DIR/cases/<n>.html shows one case: the
// failure at the top, then the program with line numbers (or the fixture's
// name), the inputs, the eager DebugMode log, each compiled graph (its text,
// drawn as inline SVG by Graphviz's library where opspec was built with it,
// and its DOT text), the graph breaks, the fused kernels, each graph's guards
// and the recompile reasons, and the compiled log; a failed equivalence check
// adds both runs' logs side by side with the first divergent entry marked. Every text is HTML-escaped; a page never loads anything from
// outside DIR.

// ReportCase: one case's result and, where the runner knows it, its spec.
struct ReportCase {
  CaseResult result;
  const CaseSpec* spec = nullptr;  // null for results without a loaded spec
};

// write_html_report: writes DIR/index.html and DIR/cases/*.html (creating DIR).
absl::Status write_html_report(const std::string& dir, const std::vector<ReportCase>& cases, const Summary& summary);

// dot_to_svg: the DOT text laid out and drawn as an <svg> element by
// Graphviz's library, or "" where opspec was built without it (or the text
// is not DOT).
std::string dot_to_svg(const std::string& dot);

// html_escape: s with &, <, >, " and ' escaped.
std::string html_escape(std::string_view s);

}  // namespace opspec::spec
