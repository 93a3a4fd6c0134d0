// program.h: the inline program language of spec cases: parse, check, run.
// See Note [Program language].
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/value.h"

namespace opspec {

// Note [Program language]
// One statement per line:  `name = op(args, key=value)`, `a, b = op(...)`,
// `op(...)` (result unused), `return a, b`; `#` starts a comment. Arguments
// are names, nested calls, literals (int, float, bool True/False/true/false,
// None, "strings", [lists], dtypes f32/float32/...) and key=value pairs.
// A call resolves in this order: the built-ins graph_break(), item(t) and
// tensor([values], shape, dtype); a registered fixture (see Note [Fixtures]);
// then an operator: `add` means the aten overloads of add, `myns::op` a
// user's namespace, and a qualified overload (`aten::add.Tensor`) exactly one.
// Overloads are chosen as PyTorch's Python argument parser chooses them, and
// arguments are filled the way runtime/ops/ops.cc fills them (numbers passed
// as wrapped tensors for the arithmetic ops, factories get device=cpu and
// pin_memory=False), so `add(x, 1)` records exactly what ops::add(x, 1) does.
// Every error names the file, line and column of the offending token.

// ProgramOrigin: where the program text sits in its file, so errors point at
// the file: text line 1 is file line first_line, and every line's columns
// are shifted by column_offset (the block scalar's indentation).
struct ProgramOrigin {
  std::string file = "<program>";
  int first_line = 1;
  int column_offset = 0;
};

// SourceLocation: a position in a file, 1-based. str(): "file:line:col".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;
};

// ProgramError: a parse, check or run error of a program, with its location.
// what() is "file:line:col: message".
class ProgramError : public Error {
 public:
  ProgramError(SourceLocation where, const std::string& message);
  const SourceLocation& where() const { return where_; }
  // message: the text without the location prefix.
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

namespace internal {
struct ProgramImpl;
}  // namespace internal

// Program: a parsed program; cheap to copy (shared, immutable).
class Program {
 public:
  // names_used: names the program reads but never assigns (its inputs), in first-use order.
  std::vector<std::string> names_used() const;
  // ops_called: the callee names as written (e.g. "add", "mlp", "graph_break").
  std::vector<std::string> ops_called() const;
  // source: the program text.
  const std::string& source() const;
  const ProgramOrigin& origin() const;

  // run: executes the program with the given inputs (name -> value) and
  // returns the values of its return statement (none without one). Errors are
  // ProgramError naming the statement's location, keeping the original
  // message (e.g. "specs/a.yaml:7:9: aten::mm: mat2 has shape [4, 5]; ...").
  // The runtime's own error type is kept in nested form: the original
  // exception is available through std::rethrow_if_nested.
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& inputs) const;

 private:
  friend absl::StatusOr<Program> parse_program(std::string_view, const ProgramOrigin&);
  std::shared_ptr<const internal::ProgramImpl> impl_;
};

// parse_program: parses text. Errors: absl::InvalidArgumentError whose
// message is "file:line:col: error text" (also for unknown ops: every callee
// must be a builtin, a fixture or a registered operator at parse time).
absl::StatusOr<Program> parse_program(std::string_view text, const ProgramOrigin& origin = {});

// check_program: a name read before assignment that is not in input_names
// is an "file:line:col: undefined name 'y'" error.
absl::Status check_program(const Program& program, const std::vector<std::string>& input_names);

}  // namespace opspec
