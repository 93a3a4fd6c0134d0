// sequence_diff.cc: LCS alignment and the compact unified rendering.
// See Note [Sequence diff format].
#include "harness/expect/sequence_diff.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_split.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

enum class EditKind : uint8_t { kEqual, kDelete, kInsert };

struct Edit {
  EditKind kind;
  size_t i;  // index into expected (kEqual, kDelete)
  size_t j;  // index into actual (kEqual, kInsert)
};

using Equal = std::function<bool(const std::string&, const std::string&)>;

// align: a shortest edit script between a and b (LCS by dynamic programming
// on the part between the common prefix and suffix; above the cell limit
// that middle is all deletions then all insertions).
std::vector<Edit> align(const std::vector<std::string>& a, const std::vector<std::string>& b, const Equal& eq) {
  std::vector<Edit> edits;
  const size_t n = a.size(), m = b.size();
  size_t prefix = 0;
  while (prefix < n && prefix < m && eq(a[prefix], b[prefix])) ++prefix;
  size_t suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && eq(a[n - 1 - suffix], b[m - 1 - suffix])) ++suffix;
  for (size_t k = 0; k < prefix; ++k) edits.push_back({EditKind::kEqual, k, k});

  const size_t rn = n - prefix - suffix, rm = m - prefix - suffix;
  if (rn > 0 && rm > 0 && rn * rm <= kSequenceDiffCellLimit) {
    // lcs[x][y]: LCS length of a[prefix+x..] and b[prefix+y..].
    const size_t w = rm + 1;
    std::vector<uint32_t> lcs((rn + 1) * w, 0);
    std::vector<uint8_t> same(rn * rm, 0);
    for (size_t x = rn; x-- > 0;) {
      for (size_t y = rm; y-- > 0;) {
        const bool e = eq(a[prefix + x], b[prefix + y]);
        same[x * rm + y] = e;
        lcs[x * w + y] = e ? lcs[(x + 1) * w + y + 1] + 1 : std::max(lcs[(x + 1) * w + y], lcs[x * w + y + 1]);
      }
    }
    size_t x = 0, y = 0;
    while (x < rn || y < rm) {
      if (x < rn && y < rm && same[x * rm + y] && lcs[x * w + y] == lcs[(x + 1) * w + y + 1] + 1) {
        edits.push_back({EditKind::kEqual, prefix + x, prefix + y});
        ++x, ++y;
      } else if (y == rm || (x < rn && lcs[(x + 1) * w + y] >= lcs[x * w + y + 1])) {
        edits.push_back({EditKind::kDelete, prefix + x, 0});
        ++x;
      } else {
        edits.push_back({EditKind::kInsert, 0, prefix + y});
        ++y;
      }
    }
  } else {
    for (size_t x = 0; x < rn; ++x) edits.push_back({EditKind::kDelete, prefix + x, 0});
    for (size_t y = 0; y < rm; ++y) edits.push_back({EditKind::kInsert, 0, prefix + y});
  }
  for (size_t k = 0; k < suffix; ++k) edits.push_back({EditKind::kEqual, n - suffix + k, m - suffix + k});

  // Within each change hunk, deletions first, then insertions (unified diff order).
  std::vector<Edit> out;
  out.reserve(edits.size());
  for (size_t k = 0; k < edits.size();) {
    if (edits[k].kind == EditKind::kEqual) {
      out.push_back(edits[k++]);
      continue;
    }
    size_t end = k;
    while (end < edits.size() && edits[end].kind != EditKind::kEqual) ++end;
    for (size_t q = k; q < end; ++q) {
      if (edits[q].kind == EditKind::kDelete) out.push_back(edits[q]);
    }
    for (size_t q = k; q < end; ++q) {
      if (edits[q].kind == EditKind::kInsert) out.push_back(edits[q]);
    }
    k = end;
  }
  return out;
}

// kMaxChangeRun: a run of one kind of change longer than this is shortened.
constexpr size_t kMaxChangeRun = 40;
constexpr size_t kChangeRunHead = 30;
constexpr size_t kChangeRunTail = 5;

// Line: one rendered row before padding: marker, index tag, text.
struct Line {
  char marker;      // ' ', '-', '+', or '.' for an elision
  std::string tag;  // "[3|4]", "[3]"
  std::string text;
};

std::string diff_impl(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                      const Equal& equal, int context, std::string_view noun, size_t base) {
  const Equal eq = equal ? equal : Equal([](const std::string& a, const std::string& b) { return a == b; });
  const std::vector<Edit> edits = align(expected, actual, eq);
  const bool any_change =
      std::any_of(edits.begin(), edits.end(), [](const Edit& e) { return e.kind != EditKind::kEqual; });
  if (!any_change) return "";
  const size_t ctx = static_cast<size_t>(std::max(context, 0));

  std::vector<Line> lines;
  auto elide = [&](std::string text) { lines.push_back({'.', "", str_cat("... ", text, " ...")}); };
  auto emit = [&](const Edit& e) {
    switch (e.kind) {
      case EditKind::kEqual:
        lines.push_back({' ', str_cat("[", e.i + base, "|", e.j + base, "]"), actual[e.j]});
        break;
      case EditKind::kDelete:
        lines.push_back({'-', str_cat("[", e.i + base, "]"), expected[e.i]});
        break;
      case EditKind::kInsert:
        lines.push_back({'+', str_cat("[", e.j + base, "]"), actual[e.j]});
        break;
    }
  };
  for (size_t k = 0; k < edits.size();) {
    size_t end = k;
    while (end < edits.size() && edits[end].kind == edits[k].kind) ++end;
    const size_t run = end - k;
    if (edits[k].kind == EditKind::kEqual) {
      const bool leading = k == 0, trailing = end == edits.size();
      const size_t head = leading ? 0 : ctx;
      const size_t tail = trailing ? 0 : ctx;
      // Elide only when that hides at least two elements.
      if (run >= head + tail + 2) {
        for (size_t q = k; q < k + head; ++q) emit(edits[q]);
        const size_t hidden = run - head - tail;
        elide(str_cat(hidden, " matching ", noun, hidden == 1 ? "" : "s"));
        for (size_t q = end - tail; q < end; ++q) emit(edits[q]);
      } else {
        for (size_t q = k; q < end; ++q) emit(edits[q]);
      }
    } else if (run > kMaxChangeRun) {
      for (size_t q = k; q < k + kChangeRunHead; ++q) emit(edits[q]);
      const size_t hidden = run - kChangeRunHead - kChangeRunTail;
      elide(str_cat(hidden, " more ", noun, hidden == 1 ? "" : "s",
                    edits[k].kind == EditKind::kDelete ? " only in expected" : " only in actual"));
      for (size_t q = end - kChangeRunTail; q < end; ++q) emit(edits[q]);
    } else {
      for (size_t q = k; q < end; ++q) emit(edits[q]);
    }
    k = end;
  }

  size_t width = 0;
  for (const Line& l : lines) width = std::max(width, l.tag.size());
  std::string out;
  for (const Line& l : lines) {
    if (l.marker == '.') {
      str_append(&out, "  ", l.text, "\n");
      continue;
    }
    out += l.marker;
    out += ' ';
    out += l.tag;
    out.append(width - l.tag.size() + 1, ' ');
    str_append(&out, l.text, "\n");
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  if (text.empty()) return lines;
  if (text.back() == '\n') text.remove_suffix(1);
  for (absl::string_view piece : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    lines.emplace_back(piece);
  }
  return lines;
}

}  // namespace

std::string sequence_diff(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                          const std::function<bool(const std::string& expected, const std::string& actual)>& equal,
                          int context) {
  return diff_impl(expected, actual, equal, context, "op", 0);
}

std::vector<std::pair<size_t, size_t>> align_sequences(
    const std::vector<std::string>& expected, const std::vector<std::string>& actual,
    const std::function<bool(const std::string& expected, const std::string& actual)>& equal) {
  const Equal eq = equal ? equal : Equal([](const std::string& a, const std::string& b) { return a == b; });
  std::vector<std::pair<size_t, size_t>> pairs;
  for (const Edit& e : align(expected, actual, eq)) {
    if (e.kind == EditKind::kEqual) pairs.emplace_back(e.i, e.j);
  }
  return pairs;
}

std::string line_diff(std::string_view expected, std::string_view actual, int context) {
  return diff_impl(split_lines(expected), split_lines(actual), {}, context, "line", 1);
}

}  // namespace opspec
