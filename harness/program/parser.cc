// parser.cc: tokens to statements. See parser.h and Note [Program language].
#include "harness/program/parser.h"

#include <limits>
#include <set>

#include "runtime/core/error.h"
#include "runtime/core/memory_format.h"

namespace opspec::internal::prog {
namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& toks, LexError* error) : toks_(toks), error_(error) {}

  bool program(std::vector<Stmt>* out) {
    skip_blank_lines();
    if (peek().kind == TokKind::kEnd) return true;
    const int indent = peek().pos.col;
    if (!block(out, indent, 0)) return false;
    if (peek().kind != TokKind::kEnd) return fail(peek().pos, "unindent does not match any outer indentation level");
    return true;
  }

 private:
  void skip_blank_lines() {
    while (peek().kind == TokKind::kNewline) ++i_;
  }

  // block: the statements whose first token sits at column indent, up to a
  // line indented less (the end of the block: the caller checks it) or the
  // end. See Note [Program language].
  bool block(std::vector<Stmt>* out, int indent, int depth) {
    while (true) {
      skip_blank_lines();
      if (peek().kind == TokKind::kEnd || peek().pos.col < indent) return true;
      if (peek().pos.col > indent) return fail(peek().pos, "unexpected indent");
      const bool after_return = seen_return_;  // a `with` body's return sets it for what follows the block
      Stmt s;
      if (!statement(&s, depth)) return false;
      if (after_return) {
        return fail(s.pos, "statement after 'return': 'return' must be the program's last statement");
      }
      seen_return_ = seen_return_ || s.kind == StmtKind::kReturn;
      out->push_back(std::move(s));
    }
  }

  // with_block: `with no_grad():` or `with enable_grad():` (torch. optional),
  // then its body on the lines below, indented deeper than `with`.
  bool with_block(Stmt* s, int depth) {
    const Token& with = next();
    const Token& mode = peek();
    const bool no_grad = mode.text == "no_grad" || mode.text == "torch.no_grad";
    if (mode.kind != TokKind::kName || (!no_grad && mode.text != "enable_grad" && mode.text != "torch.enable_grad")) {
      return fail(mode.pos, str_cat("expected no_grad() or enable_grad() after 'with', got ", describe(mode)));
    }
    next();
    if (peek().kind != TokKind::kLParen || peek(1).kind != TokKind::kRParen) {
      return fail(peek().pos, str_cat("expected '()' after '", mode.text, "', got ", describe(peek())));
    }
    next();
    next();
    if (peek().kind != TokKind::kColon) return fail(peek().pos, str_cat("expected ':', got ", describe(peek())));
    next();
    if (peek().kind != TokKind::kNewline) {
      return fail(peek().pos, "the body of a 'with' statement goes on the lines below it, indented");
    }
    if (depth >= kMaxDepth) {
      return fail(with.pos, str_cat("'with' blocks nested too deeply (more than ", kMaxDepth, " levels)"));
    }
    s->kind = StmtKind::kWith;
    s->grad_enabled = !no_grad;
    skip_blank_lines();
    if (peek().kind == TokKind::kEnd || peek().pos.col <= with.pos.col) {
      return fail(peek().pos, "expected an indented block after 'with' statement");
    }
    const int indent = peek().pos.col;
    if (!block(&s->body, indent, depth + 1)) return false;
    // The line after the body returns to this statement's level or an outer one.
    if (peek().kind != TokKind::kEnd && peek().pos.col > with.pos.col) {
      return fail(peek().pos, "unindent does not match any outer indentation level");
    }
    return true;
  }

  const Token& peek(size_t ahead = 0) const {
    const size_t j = i_ + ahead;
    return j < toks_.size() ? toks_[j] : toks_.back();  // toks_ ends with kEnd
  }
  const Token& next() {
    const Token& t = peek();
    if (i_ < toks_.size() - 1) ++i_;
    return t;
  }
  bool fail(Pos pos, std::string message) {
    error_->pos = pos;
    error_->message = std::move(message);
    return false;
  }

  // statement: one statement and the end of its line (a `with` block: its body's lines).
  bool statement(Stmt* s, int depth) {
    if (peek().kind == TokKind::kName && peek().text == "with" && peek(1).kind == TokKind::kName) {
      s->pos = peek().pos;
      return with_block(s, depth);
    }
    if (!simple_statement(s)) return false;
    if (peek().kind == TokKind::kEquals && s->kind == StmtKind::kExpr) {
      return fail(s->pos, "cannot assign to an expression: only names can be assigned");
    }
    if (peek().kind != TokKind::kNewline && peek().kind != TokKind::kEnd) {
      return fail(peek().pos, str_cat("expected end of line, got ", describe(peek())));
    }
    return true;
  }

  bool simple_statement(Stmt* s) {
    const Token& first = peek();
    s->pos = first.pos;
    if (first.kind == TokKind::kName && first.text == "return") {
      next();
      s->kind = StmtKind::kReturn;
      if (peek().kind == TokKind::kNewline || peek().kind == TokKind::kEnd) return true;
      while (true) {
        Expr e;
        if (!expr(&e, 1)) return false;
        s->values.push_back(std::move(e));
        if (peek().kind != TokKind::kComma) return true;
        next();
      }
    }
    if (first.kind == TokKind::kName &&
        (peek(1).kind == TokKind::kEquals || peek(1).kind == TokKind::kComma)) {
      s->kind = StmtKind::kAssign;
      while (true) {
        const Token& t = peek();
        if (t.kind != TokKind::kName) return fail(t.pos, str_cat("expected a name to assign to, got ", describe(t)));
        if (!is_identifier(t.text) || t.text == "return" || t.text == "with" || literal_name(t.text, nullptr)) {
          return fail(t.pos, str_cat("cannot assign to '", t.text, "'"));
        }
        s->targets.push_back(t.text);
        s->target_pos.push_back(t.pos);
        next();
        if (peek().kind == TokKind::kEquals) break;
        if (peek().kind != TokKind::kComma) return fail(peek().pos, str_cat("expected ',' or '=', got ", describe(peek())));
        next();
      }
      next();  // '='
      Expr e;
      if (!expr(&e, 1)) return false;
      s->values.push_back(std::move(e));
      return true;
    }
    s->kind = StmtKind::kExpr;
    Expr e;
    if (!expr(&e, 1)) return false;
    s->values.push_back(std::move(e));
    return true;
  }

  bool expr(Expr* out, int depth) {
    const Token& t = peek();
    if (depth > kMaxDepth) {
      return fail(t.pos, str_cat("expression nested too deeply (more than ", kMaxDepth, " levels)"));
    }
    out->pos = t.pos;
    switch (t.kind) {
      case TokKind::kMinus: {
        next();
        if (peek().kind == TokKind::kInt && peek().int64_min_magnitude) {  // -9223372036854775808: INT64_MIN
          out->kind = ExprKind::kInt;
          out->ival = next().ival;
          return true;
        }
        Expr operand;
        if (!expr(&operand, depth + 1)) return false;
        if (operand.kind == ExprKind::kInt) {  // fold: INT64_MIN (above) is the one literal that cannot be negated
          if (operand.ival == std::numeric_limits<int64_t>::min()) {
            return fail(t.pos, "integer literal '-(-9223372036854775808)' is out of range");
          }
          operand.ival = -operand.ival;
        } else if (operand.kind == ExprKind::kFloat) {
          operand.dval = -operand.dval;
        } else {
          out->kind = ExprKind::kNeg;
          out->items.push_back(std::move(operand));
          return true;
        }
        operand.pos = t.pos;
        *out = std::move(operand);
        return true;
      }
      case TokKind::kLParen: {
        next();
        if (!expr(out, depth + 1)) return false;
        if (peek().kind != TokKind::kRParen) {
          return fail(peek().pos, str_cat("expected ')', got ", describe(peek()), " (tuples are not supported)"));
        }
        next();
        return true;
      }
      case TokKind::kLBracket: {
        next();
        out->kind = ExprKind::kList;
        while (peek().kind != TokKind::kRBracket) {
          Expr item;
          if (!expr(&item, depth + 1)) return false;
          out->items.push_back(std::move(item));
          if (peek().kind == TokKind::kComma) {
            next();
          } else if (peek().kind != TokKind::kRBracket) {
            return fail(peek().pos, str_cat("expected ',' or ']' in a list, got ", describe(peek())));
          }
        }
        next();
        return true;
      }
      case TokKind::kInt:
        if (t.int64_min_magnitude) return fail(t.pos, str_cat("integer literal '", t.text, "' is out of range"));
        out->kind = ExprKind::kInt;
        out->ival = next().ival;
        return true;
      case TokKind::kFloat:
        out->kind = ExprKind::kFloat;
        out->dval = next().dval;
        return true;
      case TokKind::kString:
        out->kind = ExprKind::kString;
        out->text = next().text;
        return true;
      case TokKind::kName:
        if (peek(1).kind == TokKind::kLParen) return call(out, depth);
        return name(out);
      default:
        return fail(t.pos, str_cat("expected an expression, got ", describe(t)));
    }
  }

  bool name(Expr* out) {
    const Token& t = next();
    if (literal_name(t.text, out)) return true;
    if (t.text == "return") return fail(t.pos, "'return' must start a statement");
    if (t.text == "with") return fail(t.pos, "'with' must start a statement");
    if (!is_identifier(t.text)) {
      if (t.text.find("::") != std::string::npos) {
        return fail(t.pos, str_cat("'", t.text, "' is an operator name: call it, as ", t.text, "(...)"));
      }
      if (t.text.starts_with("torch.")) return fail(t.pos, str_cat("unknown constant '", t.text, "'"));
      return fail(t.pos, str_cat("attribute access is not supported: '", t.text, "'"));
    }
    out->kind = ExprKind::kName;
    out->text = t.text;
    return true;
  }

  bool call(Expr* out, int depth) {
    const Token& callee = next();
    if (literal_name(callee.text, nullptr) || callee.text == "return" || callee.text == "with") {
      return fail(callee.pos, str_cat("'", callee.text, "' is not callable"));
    }
    out->kind = ExprKind::kCall;
    out->text = callee.text;
    next();  // '('
    bool seen_keyword = false;
    std::set<std::string> keywords;
    while (peek().kind != TokKind::kRParen) {
      if (peek().kind == TokKind::kName && peek(1).kind == TokKind::kEquals) {
        const Token& key = next();
        if (!is_identifier(key.text)) return fail(key.pos, str_cat("invalid keyword argument name '", key.text, "'"));
        if (!keywords.insert(key.text).second) {
          return fail(key.pos, str_cat("keyword argument repeated: '", key.text, "'"));
        }
        next();  // '='
        Kwarg kw;
        kw.name = key.text;
        kw.name_pos = key.pos;
        if (!expr(&kw.value, depth + 1)) return false;
        out->kwargs.push_back(std::move(kw));
        seen_keyword = true;
      } else {
        if (seen_keyword) return fail(peek().pos, "positional argument follows keyword argument");
        Expr arg;
        if (!expr(&arg, depth + 1)) return false;
        out->items.push_back(std::move(arg));
      }
      if (peek().kind == TokKind::kComma) {
        next();
      } else if (peek().kind != TokKind::kRParen) {
        return fail(peek().pos, str_cat("expected ',' or ')' in a call, got ", describe(peek())));
      }
    }
    next();  // ')'
    return true;
  }

  const std::vector<Token>& toks_;
  LexError* error_;
  size_t i_ = 0;
  bool seen_return_ = false;
};

}  // namespace

namespace {

// memory_format_named: the memory format Python prints as name ("torch.channels_last").
std::optional<MemoryFormat> memory_format_named(std::string_view name) {
  for (MemoryFormat f : {MemoryFormat::kContiguous, MemoryFormat::kPreserve, MemoryFormat::kChannelsLast,
                         MemoryFormat::kChannelsLast3d}) {
    if (memory_format_name(f) == name) return f;
  }
  return std::nullopt;
}

}  // namespace

bool is_identifier(std::string_view name) {
  return !name.empty() && name.find(':') == std::string_view::npos && name.find('.') == std::string_view::npos;
}

bool literal_name(std::string_view name, Expr* out) {
  Expr e;
  if (name == "True" || name == "true" || name == "False" || name == "false") {
    e.kind = ExprKind::kBool;
    e.bval = name[0] == 'T' || name[0] == 't';
  } else if (name == "None") {
    e.kind = ExprKind::kNone;
  } else if (name == "inf" || name == "nan") {
    e.kind = ExprKind::kFloat;
    e.dval = name == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (name == "torch.strided") {
    e.kind = ExprKind::kLayout;
    e.ival = 0;
  } else if (const std::optional<MemoryFormat> f = memory_format_named(name)) {
    e.kind = ExprKind::kMemoryFormat;
    e.ival = static_cast<int64_t>(*f);
  } else {
    // Bare dtype names are the short and the PyTorch ones; Python's own
    // `float`/`int` are not dtypes here (they would mean f64/i64 in PyTorch).
    static constexpr std::string_view kBare[] = {"f32",     "f64",     "f16",     "bf16",     "i64",   "i32",
                                                 "b8",      "float32", "float64", "float16",  "bfloat16",
                                                 "int64",   "int32",   "bool"};
    bool bare = false;
    for (std::string_view b : kBare) bare = bare || name == b;
    std::optional<DType> d;
    if (bare || name.starts_with("torch.")) d = parse_dtype(name);
    if (!d) return false;
    e.kind = ExprKind::kDType;
    e.dtype = *d;
  }
  if (out != nullptr) {
    const Pos pos = out->pos;
    *out = std::move(e);
    out->pos = pos;
  }
  return true;
}

bool parse_statements(std::string_view text, std::vector<Stmt>* stmts, LexError* error) {
  std::vector<Token> toks;
  if (!lex(text, &toks, error)) return false;
  return Parser(toks, error).program(stmts);
}

}  // namespace opspec::internal::prog
