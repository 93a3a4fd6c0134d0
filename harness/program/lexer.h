// lexer.h: internal: splits program text into tokens. Newlines inside open
// parentheses or brackets are dropped (a call may span lines); brackets are
// matched here so an unbalanced one is reported at the right token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/program/ast.h"

namespace opspec::internal::prog {

enum class TokKind : uint8_t {
  kName,      // identifier, possibly qualified: aten::add.Tensor, torch.float32
  kInt,
  kFloat,
  kString,    // text holds the unescaped contents
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kEquals,
  kMinus,
  kColon,     // a lone ':' (a `with` statement's); `::` belongs to names
  kNewline,
  kEnd,
};

// Token: one token with its position in the text.
struct Token {
  TokKind kind = TokKind::kEnd;
  Pos pos;
  std::string text;  // as written (names, numbers), or a string's contents
  int64_t ival = 0;
  double dval = 0;
  // int64_min_magnitude: the literal 9223372036854775808, one past INT64_MAX:
  // ival holds INT64_MIN, valid only negated (Python's -9223372036854775808).
  bool int64_min_magnitude = false;
};

// LexError: where and what.
struct LexError {
  Pos pos;
  std::string message;
};

// lex: the tokens of text, ending with kEnd; the first error otherwise.
// Works in one pass with no recursion, whatever the input.
bool lex(std::string_view text, std::vector<Token>* tokens, LexError* error);

// describe: a token as error messages quote it ("'foo'", "end of line").
std::string describe(const Token& t);

}  // namespace opspec::internal::prog
