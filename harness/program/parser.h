// parser.h: internal: tokens to statements (see Note [Program language] in
// program.h for the grammar). Callees are left unresolved (Expr::callee -1).
#pragma once

#include <string_view>
#include <vector>

#include "harness/program/ast.h"
#include "harness/program/lexer.h"

namespace opspec::internal::prog {

// parse_statements: lexes and parses text into statements; the first error
// otherwise. Nesting deeper than kMaxDepth is an error, not a deep recursion.
bool parse_statements(std::string_view text, std::vector<Stmt>* stmts, LexError* error);

// analyze (check.cc): the pass after parsing: resolves every callee (into
// program->callees), records names_used and ops_called, and type-checks
// statically (see Note [Program language]); the first error otherwise.
bool analyze(opspec::internal::ProgramImpl* program, LexError* error);

// literal_name: whether name is a reserved literal (True, None, inf, f32,
// torch.float32, torch.strided, ...); if so and out is not null, fills it.
bool literal_name(std::string_view name, Expr* out);

// is_identifier: a plain name (no `::` or `.` parts).
bool is_identifier(std::string_view name);

}  // namespace opspec::internal::prog
