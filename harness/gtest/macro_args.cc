// macro_args.cc: stringized macro arguments back to readable text.
#include "harness/gtest/macro_args.h"

#include <cctype>

namespace opspec::internal {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// skip_literal: text[i] opens a string or char literal; returns the index just past it.
size_t skip_literal(std::string_view text, size_t i) {
  const char quote = text[i];
  // Raw string: R"delim( ... )delim".
  if (quote == '"' && i > 0 && text[i - 1] == 'R') {
    const size_t open = text.find('(', i);
    if (open != std::string_view::npos) {
      const std::string close = ")" + std::string(text.substr(i + 1, open - i - 1)) + "\"";
      const size_t end = text.find(close, open);
      return end == std::string_view::npos ? text.size() : end + close.size();
    }
  }
  for (size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] == '\\') {
      ++j;
    } else if (text[j] == quote) {
      return j + 1;
    }
  }
  return text.size();
}

}  // namespace

std::vector<std::string> split_macro_args(std::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || (c == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      i = skip_literal(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
    ++i;
  }
  parts.emplace_back(trim(text.substr(start)));
  return parts;
}

std::string join_args(const std::vector<std::string>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < parts.size(); ++i) {
    if (i > begin) out += ", ";
    out += parts[i];
  }
  return out;
}

std::string abbreviate(std::string_view text, size_t max_chars) {
  std::string one_line;
  for (char c : trim(text)) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && !one_line.empty() && one_line.back() == ' ') continue;
    one_line += c;
  }
  if (one_line.size() <= max_chars || max_chars < 10) return one_line;
  const size_t keep = max_chars - 5;
  return one_line.substr(0, keep - keep / 3) + " ... " + one_line.substr(one_line.size() - keep / 3);
}

}  // namespace opspec::internal
