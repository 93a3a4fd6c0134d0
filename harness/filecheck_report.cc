// filecheck_report.cc: what a failed file_check() shows: input locations,
// the most similar line for a pattern that was not found, and the annotated
// input. See Note [FileCheck failure message] in harness/filecheck.h.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/internal/filecheck_internal.h"

namespace opspec::internal {
namespace {

constexpr size_t kContextLines = 5;     // shown around each annotated line of a long input
constexpr size_t kShowAllLines = 20;    // inputs this short are shown whole
constexpr size_t kTabStop = 8;
constexpr size_t kFuzzyMaxCells = 20'000'000;  // bound on the similarity search's work

// display_column: the display column of byte `index` of `line` (tabs to the
// next stop, UTF-8 continuation bytes take no column).
size_t display_column(std::string_view line, size_t index) {
  size_t col = 0;
  for (size_t i = 0; i < index && i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == '\t') {
      col = (col / kTabStop + 1) * kTabStop;
    } else if ((c & 0xC0) != 0x80) {
      ++col;
    }
  }
  return col;
}

std::string expand_tabs(std::string_view line) {
  std::string out;
  for (char c : line) {
    if (c == '\t') {
      out.append(kTabStop - display_column(out, out.size()) % kTabStop, ' ');
    } else {
      out += c;
    }
  }
  return out;
}

std::string pad_left(std::string_view s, size_t width) {
  return cat(std::string(width > s.size() ? width - s.size() : 0, ' '), s);
}

}  // namespace

InputText::InputText(std::string_view original, bool strict_whitespace)
    : original_(original), canonical_(canonicalize(original, strict_whitespace)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < original.size(); ++i) {
    if (original[i] == '\n' && i + 1 < original.size()) line_starts_.push_back(i + 1);
  }
}

size_t InputText::line_of(size_t original_offset) const {
  return static_cast<size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), original_offset) -
                             line_starts_.begin()) - 1;
}

std::string_view InputText::line(size_t i) const {
  const size_t start = line_starts_[i];
  size_t end = original_.find('\n', start);
  if (end == std::string_view::npos) end = original_.size();
  std::string_view out = original_.substr(start, end - start);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

std::string InputText::location(std::string_view name, size_t canonical_offset) const {
  const size_t offset = to_original(std::min(canonical_offset, canonical_.text.size()));
  const size_t line = line_of(offset);
  return cat(name, ":", line + 1, ":", offset - line_starts_[line] + 1);
}

std::pair<size_t, size_t> fuzzy_match(const InputText& input, size_t begin, size_t end, std::string_view needle) {
  // Per line, the substring at the least edit distance from the needle
  // (free start and end in the line); the closest line wins, the earliest
  // on ties. Suggested only when under half the needle needs editing.
  const std::string& t = input.text();
  const size_t m = needle.size();
  size_t best_distance = m, best_pos = std::string::npos, best_len = 0, cells = 0;
  if (m == 0) return {best_pos, 0};
  std::vector<size_t> dist(m + 1), start(m + 1), prev_dist(m + 1), prev_start(m + 1);
  end = std::min(end, t.size());
  for (size_t s = begin; s < end && cells < kFuzzyMaxCells;) {
    size_t eol = t.find('\n', s);
    if (eol == std::string::npos || eol > end) eol = end;
    // Column j = text position s + j; dist[i] = distance of needle[0, i)
    // to the best substring ending at j, starting at start[i].
    for (size_t i = 0; i <= m; ++i) dist[i] = i, start[i] = s;
    for (size_t j = s; j < eol; ++j) {
      std::swap(dist, prev_dist);
      std::swap(start, prev_start);
      dist[0] = 0;
      start[0] = j + 1;
      for (size_t i = 1; i <= m; ++i) {
        size_t d = prev_dist[i - 1] + (needle[i - 1] == t[j] ? 0 : 1), st = prev_start[i - 1];
        if (prev_dist[i] + 1 < d) d = prev_dist[i] + 1, st = prev_start[i];  // skip a text character
        if (dist[i - 1] + 1 < d) d = dist[i - 1] + 1, st = start[i - 1];      // skip a needle character
        dist[i] = d;
        start[i] = st;
      }
      cells += m;
      if (dist[m] < best_distance) best_distance = dist[m], best_pos = start[m], best_len = j + 1 - start[m];
    }
    s = eol + 1;
  }
  if (best_pos == std::string::npos || best_len == 0 || best_distance * 2 >= m) return {std::string::npos, 0};
  return {best_pos, best_len};
}

std::string render_dump(const InputText& input, const std::vector<Annotation>& annotations, std::string_view title) {
  struct Row {
    std::string label;
    std::string body;
  };
  std::map<size_t, std::vector<Row>> rows;  // input line -> its annotation rows, in order
  for (const Annotation& a : annotations) {
    const size_t size = input.text().size();
    const size_t ob = input.to_original(std::min(a.begin, size));
    const size_t oe = input.to_original(std::min(std::max(a.end, a.begin), size));
    const size_t line = input.line_of(ob);
    const std::string_view text = input.line(line);
    const size_t ls = input.line_start(line);
    const size_t cb = std::min(ob - ls, text.size()), ce = std::min(oe - ls, text.size());
    const size_t db = display_column(text, cb);
    const size_t de = a.to_line_end ? display_column(text, text.size()) : display_column(text, ce);
    const size_t width = std::max<size_t>(1, de > db ? de - db : 0);
    std::string body = cat(std::string(db, ' '), std::string(1, a.marker), std::string(width - 1, '~'));
    if (!a.note.empty()) append(&body, " ", a.note);
    rows[line].push_back({a.label, std::move(body)});
  }
  const size_t lines = input.line_count();
  std::set<size_t> shown;
  for (size_t i = 0; lines <= kShowAllLines && i < lines; ++i) shown.insert(i);
  for (const auto& [line, unused] : rows) {
    const size_t from = line > kContextLines ? line - kContextLines : 0;
    for (size_t i = from; i < lines && i <= line + kContextLines; ++i) shown.insert(i);
  }
  size_t gutter = std::to_string(lines).size();
  for (const auto& [line, list] : rows) {
    for (const Row& r : list) gutter = std::max(gutter, r.label.size());
  }
  std::string out(title);
  size_t next = 0;  // the line after the last one shown
  for (size_t line : shown) {
    if (line > next) append(&out, pad_left("...", gutter), "\n");
    std::string text = expand_tabs(input.line(line));
    append(&out, pad_left(std::to_string(line + 1), gutter), " |", text.empty() ? "" : " ", text, "\n");
    if (auto it = rows.find(line); it != rows.end()) {
      for (const Row& r : it->second) append(&out, pad_left(r.label, gutter), " | ", r.body, "\n");
    }
    next = line + 1;
  }
  if (next < lines) append(&out, pad_left("...", gutter), "\n");
  return out;
}

}  // namespace opspec::internal
