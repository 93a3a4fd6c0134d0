// lexer.cc: program text to tokens. See lexer.h.
#include "harness/program/lexer.h"

#include <cctype>
#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>

#include "absl/strings/str_format.h"
#include "runtime/core/error.h"

namespace opspec::internal::prog {
namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quote_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return str_cat("'", std::string(1, c), "'");
  return absl::StrFormat("'\\x%02x'", u);
}

// underflows: whether a float literal out of double's range is too small
// (not too large): the decimal exponent of its first nonzero digit is
// negative. Its text is digits, an optional point and an optional exponent.
bool underflows(std::string_view lit) {
  const size_t e = std::min(lit.find_first_of("eE"), lit.size());
  const std::string_view mantissa = lit.substr(0, e);
  const size_t point = std::min(mantissa.find('.'), mantissa.size());
  const size_t first = mantissa.find_first_of("123456789");
  if (first == std::string_view::npos) return true;  // zero: no range error, but never an overflow
  int64_t lead = first < point ? static_cast<int64_t>(point - first) - 1 : -static_cast<int64_t>(first - point);
  int64_t exponent = 0;
  bool negative = false;
  for (size_t i = e + 1; i < lit.size(); ++i) {
    if (lit[i] == '-' || lit[i] == '+') negative = lit[i] == '-';
    else exponent = std::min<int64_t>(exponent * 10 + (lit[i] - '0'), int64_t{1} << 40);  // saturates
  }
  return lead + (negative ? -exponent : exponent) < 0;
}

class Lexer {
 public:
  Lexer(std::string_view text, std::vector<Token>* out, LexError* error) : text_(text), out_(out), error_(error) {}

  bool run() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '\n') {
        if (open_.empty()) push(TokKind::kNewline, here(), "\n");
        advance_line();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        advance(1);
        continue;
      }
      if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') advance(1);
        continue;
      }
      const Pos pos = here();
      if (is_ident_start(c)) {
        name(pos);
      } else if (is_digit(c) || (c == '.' && i_ + 1 < text_.size() && is_digit(text_[i_ + 1]))) {
        if (!number(pos)) return false;
      } else if (c == '"' || c == '\'') {
        if (!string(pos, c)) return false;
      } else if (c == '(' || c == '[') {
        open_.push_back({c, pos});
        push(c == '(' ? TokKind::kLParen : TokKind::kLBracket, pos, std::string(1, c));
        advance(1);
      } else if (c == ')' || c == ']') {
        const char want = c == ')' ? '(' : '[';
        if (open_.empty()) return fail(pos, str_cat("unmatched '", std::string(1, c), "'"));
        if (open_.back().c != want) {
          return fail(pos, str_cat("closing '", std::string(1, c), "' does not match opening '",
                                   std::string(1, open_.back().c), "'"));
        }
        open_.pop_back();
        push(c == ')' ? TokKind::kRParen : TokKind::kRBracket, pos, std::string(1, c));
        advance(1);
      } else if (c == ',' || c == '=' || c == '-' || c == ':') {
        push(c == ',' ? TokKind::kComma : c == '=' ? TokKind::kEquals : c == '-' ? TokKind::kMinus : TokKind::kColon,
             pos, std::string(1, c));
        advance(1);
      } else {
        return fail(pos, str_cat("unexpected character ", quote_char(c)));
      }
    }
    if (!open_.empty()) {
      return fail(open_.back().pos, str_cat("'", std::string(1, open_.back().c), "' was never closed"));
    }
    push(TokKind::kNewline, here(), "\n");
    push(TokKind::kEnd, here(), "");
    return true;
  }

 private:
  struct Open {
    char c;
    Pos pos;
  };

  Pos here() const { return Pos{line_, col_}; }
  void advance(size_t n) {
    i_ += n;
    col_ = col_ > kMaxPos - static_cast<int>(n) ? kMaxPos : col_ + static_cast<int>(n);
  }
  void advance_line() {
    ++i_;
    if (line_ < kMaxPos) ++line_;
    col_ = 1;
  }
  bool fail(Pos pos, std::string message) {
    error_->pos = pos;
    error_->message = std::move(message);
    return false;
  }
  void push(TokKind kind, Pos pos, std::string text) {
    Token t;
    t.kind = kind;
    t.pos = pos;
    t.text = std::move(text);
    out_->push_back(std::move(t));
  }

  // name: an identifier, with `::name` and `.name` parts (aten::add.Tensor).
  void name(Pos pos) {
    const size_t start = i_;
    auto ident = [&] {
      while (i_ < text_.size() && is_ident_char(text_[i_])) advance(1);
    };
    ident();
    while (i_ < text_.size()) {
      if (text_.substr(i_, 2) == "::" && i_ + 2 < text_.size() && is_ident_start(text_[i_ + 2])) {
        advance(2);
      } else if (text_[i_] == '.' && i_ + 1 < text_.size() && is_ident_start(text_[i_ + 1])) {
        advance(1);
      } else {
        break;
      }
      ident();
    }
    push(TokKind::kName, pos, std::string(text_.substr(start, i_ - start)));
  }

  bool number(Pos pos) {
    const size_t start = i_;
    bool is_float = false;
    while (i_ < text_.size() && is_digit(text_[i_])) advance(1);
    if (i_ < text_.size() && text_[i_] == '.') {
      is_float = true;
      advance(1);
      while (i_ < text_.size() && is_digit(text_[i_])) advance(1);
    }
    if (i_ < text_.size() && (text_[i_] == 'e' || text_[i_] == 'E')) {
      size_t j = i_ + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && is_digit(text_[j])) {
        is_float = true;
        advance(j - i_);
        while (i_ < text_.size() && is_digit(text_[i_])) advance(1);
      }
    }
    const std::string_view lit = text_.substr(start, i_ - start);
    if (i_ < text_.size() && (is_ident_char(text_[i_]) || text_[i_] == '.')) {
      size_t end = i_;
      while (end < text_.size() && (is_ident_char(text_[end]) || text_[end] == '.') && end - start < 40) ++end;
      return fail(pos, str_cat("invalid number literal '", text_.substr(start, end - start), "'"));
    }
    Token t;
    t.pos = pos;
    t.text = std::string(lit);
    if (is_float) {
      t.kind = TokKind::kFloat;
      const auto r = std::from_chars(lit.data(), lit.data() + lit.size(), t.dval);
      if (r.ec == std::errc::result_out_of_range && underflows(lit)) {
        t.dval = 0.0;  // as Python: 1e-400 is 0.0 (a denormal is read as one)
      } else if (r.ec != std::errc() || r.ptr != lit.data() + lit.size()) {
        return fail(pos, str_cat("float literal '", lit, "' is out of range"));
      }
    } else {
      t.kind = TokKind::kInt;
      if (lit.size() > 1 && lit[0] == '0' && lit.find_first_not_of('0') != std::string_view::npos) {
        return fail(pos, str_cat("invalid number literal '", lit,
                                 "': leading zeros in decimal integer literals are not permitted (as in Python)"));
      }
      const auto r = std::from_chars(lit.data(), lit.data() + lit.size(), t.ival);
      if (r.ec == std::errc::result_out_of_range && lit == "9223372036854775808") {
        t.int64_min_magnitude = true;  // only `-9223372036854775808` may use it (the parser checks)
        t.ival = std::numeric_limits<int64_t>::min();
      } else if (r.ec != std::errc() || r.ptr != lit.data() + lit.size()) {
        return fail(pos, str_cat("integer literal '", lit, "' is out of range"));
      }
    }
    out_->push_back(std::move(t));
    return true;
  }

  bool string(Pos pos, char quote) {
    advance(1);
    std::string value;
    while (true) {
      if (i_ >= text_.size() || text_[i_] == '\n') return fail(pos, "unterminated string literal");
      const char c = text_[i_];
      if (c == quote) {
        advance(1);
        break;
      }
      if (c == '\\' && i_ + 1 < text_.size() && text_[i_ + 1] != '\n') {
        const char e = text_[i_ + 1];
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '\\': value += '\\'; break;
          case '\'': value += '\''; break;
          case '"': value += '"'; break;
          default: value += '\\'; value += e; break;  // unknown escapes stay, as in Python
        }
        advance(2);
        continue;
      }
      value += c;
      advance(1);
    }
    Token t;
    t.kind = TokKind::kString;
    t.pos = pos;
    t.text = std::move(value);
    out_->push_back(std::move(t));
    return true;
  }

  static constexpr int kMaxPos = 1 << 30;  // lines and columns saturate: ints on any input
  std::string_view text_;
  std::vector<Token>* out_;
  LexError* error_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::vector<Open> open_;
};

}  // namespace

bool lex(std::string_view text, std::vector<Token>* tokens, LexError* error) {
  tokens->clear();
  return Lexer(text, tokens, error).run();
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokKind::kNewline: return "end of line";
    case TokKind::kEnd: return "end of input";
    case TokKind::kString: return "a string";
    default:  // long names and numbers are cut: the column says where they are
      return t.text.size() <= 40 ? str_cat("'", t.text, "'") : str_cat("'", t.text.substr(0, 37), "...'");
  }
}

}  // namespace opspec::internal::prog
