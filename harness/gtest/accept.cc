// accept.cc: rewriting golden string literals in C++ test sources.
// See Note [Accepting golden text].
#include "harness/gtest/accept.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "runtime/core/error.h"

namespace opspec {
namespace {

// ---- A small C++ lexer: enough to find calls, their arguments and literals. ----

struct Token {
  enum class Kind { kIdent, kString, kChar, kNumber, kPunct };
  Kind kind;
  size_t begin, end;  // byte offsets
  int line;           // line of begin (1-based)
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_string_prefix(std::string_view s) {
  return s == "R" || s == "u8R" || s == "uR" || s == "UR" || s == "LR" || s == "u8" || s == "u" || s == "U" || s == "L";
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    size_t i = 0;
    while (i < src_.size()) {
      const char c = src_[i];
      if (c == '\n') {
        ++line_;
        ++i;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '/' && peek(i + 1) == '/') {
        while (i < src_.size() && src_[i] != '\n') ++i;
      } else if (c == '/' && peek(i + 1) == '*') {
        const size_t end = src_.find("*/", i + 2);
        const size_t stop = end == std::string_view::npos ? src_.size() : end + 2;
        advance_lines(i, stop);
        i = stop;
      } else if (ident_start(c)) {
        size_t j = i;
        while (j < src_.size() && ident_char(src_[j])) ++j;
        const std::string_view word = src_.substr(i, j - i);
        if (j < src_.size() && (src_[j] == '"' || src_[j] == '\'') && is_string_prefix(word)) {
          const bool raw = word.back() == 'R' && src_[j] == '"';
          i = literal(out, i, j, raw);
        } else {
          out.push_back({Token::Kind::kIdent, i, j, line_});
          i = j;
        }
      } else if (c == '"' || c == '\'') {
        i = literal(out, i, i, false);
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && std::isdigit(static_cast<unsigned char>(peek(i + 1))))) {
        size_t j = i + 1;
        while (j < src_.size()) {
          const char d = src_[j];
          if (ident_char(d) || d == '.' || d == '\'') {
            ++j;
          } else if ((d == '+' || d == '-') && std::strchr("eEpP", src_[j - 1]) != nullptr) {
            ++j;
          } else {
            break;
          }
        }
        out.push_back({Token::Kind::kNumber, i, j, line_});
        i = j;
      } else {
        out.push_back({Token::Kind::kPunct, i, i + 1, line_});
        ++i;
      }
    }
    return out;
  }

 private:
  char peek(size_t i) const { return i < src_.size() ? src_[i] : '\0'; }
  void advance_lines(size_t from, size_t to) {
    line_ += static_cast<int>(std::count(src_.begin() + from, src_.begin() + to, '\n'));
  }

  // literal: a string or char literal starting at begin (prefix included)
  // whose quote is at quote; returns the offset past it.
  size_t literal(std::vector<Token>& out, size_t begin, size_t quote, bool raw) {
    const int start_line = line_;
    size_t end = src_.size();
    if (raw) {
      const size_t open = src_.find('(', quote + 1);
      if (open != std::string_view::npos && open - quote - 1 <= 16) {
        const std::string close = str_cat(")", src_.substr(quote + 1, open - quote - 1), "\"");
        const size_t at = src_.find(close, open + 1);
        end = at == std::string_view::npos ? src_.size() : at + close.size();
      }
    } else {
      const char q = src_[quote];
      for (size_t j = quote + 1; j < src_.size(); ++j) {
        if (src_[j] == '\\') {
          ++j;
        } else if (src_[j] == q || src_[j] == '\n') {
          end = src_[j] == q ? j + 1 : j;
          break;
        }
      }
    }
    advance_lines(begin, end);
    out.push_back({src_[quote] == '"' ? Token::Kind::kString : Token::Kind::kChar, begin, end, start_line});
    return end;
  }

  std::string_view src_;
  int line_ = 1;
};

// Call: a call `name(args)`: the name token, the closing ')' token and the
// tokens of its last argument.
struct Call {
  size_t name_token = 0;
  int start_line = 0, end_line = 0;
  size_t last_arg_begin = 0, last_arg_end = 0;  // token range [begin, end)
};

// match_brackets: for each opening (, [ or { token, the index of its closing
// token (toks.size() when unbalanced); other entries are unused.
std::vector<size_t> match_brackets(const std::vector<Token>& toks, std::string_view src) {
  std::vector<size_t> match(toks.size(), toks.size());
  std::vector<size_t> open;
  for (size_t k = 0; k < toks.size(); ++k) {
    if (toks[k].kind != Token::Kind::kPunct) continue;
    const char c = src[toks[k].begin];
    if (c == '(' || c == '[' || c == '{') {
      open.push_back(k);
    } else if ((c == ')' || c == ']' || c == '}') && !open.empty()) {
      match[open.back()] = k;
      open.pop_back();
    }
  }
  return match;
}

bool is_punct(const std::vector<Token>& toks, std::string_view src, size_t k, char c) {
  return k < toks.size() && toks[k].kind == Token::Kind::kPunct && src[toks[k].begin] == c;
}

std::optional<Call> parse_call(const std::vector<Token>& toks, std::string_view src, const std::vector<size_t>& match,
                               size_t name_token) {
  const size_t open = name_token + 1;
  if (!is_punct(toks, src, open, '(') || match[open] >= toks.size()) return std::nullopt;
  const size_t close = match[open];
  Call call;
  call.name_token = name_token;
  call.start_line = toks[name_token].line;
  call.end_line = toks[close].line;
  call.last_arg_begin = open + 1;
  call.last_arg_end = close;
  for (size_t k = open + 1; k < close; ++k) {
    if (is_punct(toks, src, k, ',')) {
      call.last_arg_begin = k + 1;
    } else if ((is_punct(toks, src, k, '(') || is_punct(toks, src, k, '[') || is_punct(toks, src, k, '{')) &&
               match[k] < close) {
      k = match[k];  // skip the nested group
    }
  }
  return call;
}

bool last_arg_is_literal(const std::vector<Token>& toks, const Call& call) {
  if (call.last_arg_begin >= call.last_arg_end) return false;
  for (size_t k = call.last_arg_begin; k < call.last_arg_end; ++k) {
    if (toks[k].kind != Token::Kind::kString) return false;
  }
  return true;
}

// find_call: the golden call at line; see Note [Accepting golden text].
std::optional<Call> find_call(const std::vector<Token>& toks, std::string_view src, int line) {
  const std::vector<std::string>& known = golden_macro_names();
  const std::vector<size_t> match = match_brackets(toks, src);
  std::optional<Call> known_start, known_end, other;
  for (size_t k = 0; k < toks.size() && toks[k].line <= line; ++k) {
    if (toks[k].kind != Token::Kind::kIdent) continue;
    std::optional<Call> call = parse_call(toks, src, match, k);
    if (!call || (call->start_line != line && call->end_line != line)) continue;
    const std::string_view name = src.substr(toks[k].begin, toks[k].end - toks[k].begin);
    if (std::find(known.begin(), known.end(), name) != known.end()) {
      if (call->start_line == line && !known_start) known_start = call;
      if (call->end_line == line && !known_end) known_end = call;
    } else if (!other && last_arg_is_literal(toks, *call)) {
      other = call;  // the first found is the outermost (earliest start)
    }
  }
  if (known_start) return known_start;
  if (known_end) return known_end;
  return other;
}

// ---- The per-file edit history (expecttest's EditHistory). ----

struct EditHistory {
  std::mutex mu;
  std::map<std::string, std::vector<std::pair<int, int>>> edits;  // file -> (line as compiled, lines added)
};

EditHistory& history() {
  static EditHistory* h = new EditHistory();
  return *h;
}

int adjusted_line_locked(const EditHistory& h, const std::string& file, int line) {
  auto it = h.edits.find(file);
  if (it == h.edits.end()) return line;
  int out = line;
  for (const auto& [at, delta] : it->second) {
    if (at < line) out += delta;
  }
  return out;
}

absl::Status write_file(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".opspec-tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::PermissionDeniedError(str_cat("cannot write ", tmp));
    f.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!f) return absl::DataLossError(str_cat("writing ", tmp, " failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(str_cat("cannot replace ", path));
  }
  return absl::OkStatus();
}

}  // namespace

std::string resolve_source_path(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path given(file);
  if (given.is_absolute() || fs::exists(given, ec)) return file;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; !ec && up < 5 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path candidate = dir / given;
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
    if (dir == dir.parent_path()) break;
  }
  return file;
}

bool accept_requested() {
  const char* v = std::getenv("OPSPEC_ACCEPT");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

bool running_on_ci() {
  const char* v = std::getenv("CI");
  return v != nullptr && *v != '\0';
}

bool accept_mode() { return accept_requested() && !running_on_ci(); }

const std::vector<std::string>& golden_macro_names() {
  static const std::vector<std::string>* names = new std::vector<std::string>{
      "EXPECT_DEBUG_STRING", "ASSERT_DEBUG_STRING", "EXPECT_DEBUG_STRING_WITH", "ASSERT_DEBUG_STRING_WITH"};
  return *names;
}

std::string_view golden_text(std::string_view literal_value) {
  if (!literal_value.empty() && literal_value.front() == '\n') literal_value.remove_prefix(1);
  return literal_value;
}

std::string make_raw_literal(std::string_view text) {
  std::string delim;
  for (int n = 0; text.find(str_cat(")", delim, "\"")) != std::string_view::npos; ++n) {
    delim = n == 0 ? "golden" : str_cat("golden", n);
  }
  const bool multiline = text.find('\n') != std::string_view::npos;
  return str_cat("R\"", delim, "(", multiline ? "\n" : "", text, ")", delim, "\"");
}

int adjusted_line(const std::string& file, int line) {
  EditHistory& h = history();
  std::lock_guard<std::mutex> lock(h.mu);
  return adjusted_line_locked(h, file, line);
}

void reset_golden_edit_history() {
  EditHistory& h = history();
  std::lock_guard<std::mutex> lock(h.mu);
  h.edits.clear();
}

absl::Status rewrite_golden_literal(const std::string& file, int line, std::string_view new_text) {
  if (running_on_ci()) {
    return absl::FailedPreconditionError(
        str_cat("not rewriting the golden text in ", file, ":", line, ": the CI environment variable is set"));
  }
  EditHistory& h = history();
  std::lock_guard<std::mutex> lock(h.mu);
  // History is keyed by the name as compiled (__FILE__); the bytes live at path.
  const std::string path = resolve_source_path(file);
  std::string src;
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) return absl::NotFoundError(str_cat("cannot read ", path, " to rewrite its golden text"));
    std::ostringstream ss;
    ss << f.rdbuf();
    src = ss.str();
  }
  const int now = adjusted_line_locked(h, file, line);
  const std::vector<Token> toks = Lexer(src).run();
  std::optional<Call> call = find_call(toks, src, now);
  const std::string where = now == line ? str_cat(file, ":", line) : str_cat(file, ":", line, " (now line ", now, ")");
  if (!call) return absl::NotFoundError(str_cat("no golden macro call found at ", where));
  if (!last_arg_is_literal(toks, *call)) {
    return absl::InvalidArgumentError(
        str_cat("the last argument of the call at ", where, " is not a string literal; cannot rewrite it"));
  }
  const size_t begin = toks[call->last_arg_begin].begin;
  const size_t end = toks[call->last_arg_end - 1].end;
  const std::string literal = make_raw_literal(new_text);
  const int delta = static_cast<int>(std::count(literal.begin(), literal.end(), '\n')) -
                    static_cast<int>(std::count(src.begin() + begin, src.begin() + end, '\n'));
  std::string out = src.substr(0, begin) + literal + src.substr(end);
  if (out == src) return absl::OkStatus();
  if (h.edits.find(file) == h.edits.end()) {
    if (absl::Status s = write_file(path + ".orig", src); !s.ok()) return s;
  }
  if (absl::Status s = write_file(path, out); !s.ok()) return s;
  h.edits[file].push_back({line, delta});
  return absl::OkStatus();
}

}  // namespace opspec
