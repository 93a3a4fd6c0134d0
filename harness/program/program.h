// program.h: the inline program language of spec cases: parse, check, run.
// See Note [Program language].
#pragma once

#include <functional>
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
// One statement per line (a call may continue over lines inside its open
// parentheses or brackets; `#` starts a comment; blank lines are fine):
//   y = op(args, key=value)      assign a result
//   a, b = op(...)               unpack a tuple or list result (the counts must agree)
//   op(...)                      call for effect: graph_break(), add_(x, 1)
//   return e1, e2                at most once, as the last statement
//   with no_grad():              a block: the lines below it, indented deeper
//     y = mul(x, 2)              (as Python's), run without recording autograd
//                                history (torch.no_grad(); enable_grad() turns
//                                it back on); names it assigns stay bound after it
// Expressions: names, calls (nested), [lists], (parentheses), unary minus,
// and literals: ints, floats (1.5, .5, 1e-5, inf, nan), True/False/true/
// false, None, "double" or 'single' quoted strings, dtypes (f32 f64 f16 bf16
// i64 i32 b8, float32 ... bool, torch.float32 ...), torch.strided,
// torch.contiguous_format, torch.preserve_format, torch.channels_last,
// torch.channels_last_3d; devices are strings
// ("cpu", "meta", "cuda:0"). Nesting is limited to 64 levels.
// A call resolves in this order: the built-ins graph_break(), item(t),
// tensor(data, shape=None, *, dtype=f32), allclose(a, b, rtol, atol),
// equal(a, b), backward(t), grad(x) and retain_grad(t) (x.grad and
// t.retain_grad()); a registered fixture (see Note [Fixtures]; called with its
// tensors in FixtureInput order, it returns its single tensor or a tuple);
// then an operator: `add` means the aten overloads of add that PyTorch
// exposes to Python, `myns::op` a user's op, `op` alone a user's op when no
// aten op has that name and one namespace does, and `aten::add.Tensor` (or
// `add.Tensor`) exactly that overload. Overloads are chosen as PyTorch's
// Python argument parser chooses them, and arguments are filled the way
// runtime/ops/ops.cc fills them (numbers passed as wrapped tensors for the
// arithmetic ops, factories get device=cpu and pin_memory=False, *_like ops
// take dtype and device from self), so `add(x, 1)` records exactly what
// ops::add(x, 1) does (see Note [Overload resolution] in resolve.h).
// parse_program checks what it can before any run (syntax, unknown ops,
// argument counts, keywords and the types of literals, unpack counts of ops
// with several results); inputs and item() results are typed at run time.
// Every error names the file, line and column of the offending token.
// docs/program-language.md is the user's guide.

// ProgramOrigin: where the program text sits in its file, so errors point at
// the file: text line 1 is file line first_line, and every line's columns
// are shifted by column_offset (the block scalar's indentation). When the
// text is not the file's line for line (unmapped: "a double-quoted scalar"
// with escapes or folded lines), errors point at where it starts and give
// the program's own line:col (See Note [Program positions] in yaml_reader.cc).
struct ProgramOrigin {
  std::string file = "<program>";
  int first_line = 1;
  int column_offset = 0;
  std::string unmapped;
};

// SourceLocation: a position in a file, 1-based. str(): "file:line:col", and
// where the position is only the program text's start, ": in the program
// (a double-quoted scalar) at 2:8" after it (the within).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string within;
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
struct ProgramFixtures;
}  // namespace internal

class ProgramInstance;

// ReturnCheck: a test of one value a program returns (throws Error to refuse it).
using ReturnCheck = std::function<void(const Value&)>;

// Program: a parsed program; cheap to copy (shared, immutable).
class Program {
 public:
  // names_used: names the program reads before (or without) assigning them:
  // its inputs, in first-use order.
  std::vector<std::string> names_used() const;
  // ops_called: the distinct callee names as written (e.g. "add", "mlp",
  // "graph_break"), in first-use order.
  std::vector<std::string> ops_called() const;
  // source: the program text.
  const std::string& source() const;
  // origin: where the text sits in its file (error locations use it).
  const ProgramOrigin& origin() const;

  // instantiate: makes every fixture the program calls once (Fixture::make,
  // under HideUserModesGuard so logging modes do not see parameter
  // creation), for runs that must share them: the eager run and each
  // compiled call of a spec case.
  ProgramInstance instantiate() const;

  // run: instantiate().run(inputs).
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& inputs) const;

 private:
  friend absl::StatusOr<Program> parse_program(std::string_view, const ProgramOrigin&);
  friend absl::Status check_program(const Program&, const std::vector<std::string>&);
  friend class ProgramInstance;
  std::shared_ptr<const internal::ProgramImpl> impl_;
};

// ProgramInstance: a program with its fixtures made; cheap to copy (copies
// share the fixtures). run() may be called any number of times, also from
// a function being compiled; it is as thread-safe as its fixtures are.
class ProgramInstance {
 public:
  // run: executes the program with the given inputs (name -> value; unused
  // ones are ignored) and returns the values of its return statement (none
  // without one; a returned tuple, such as a fixture's results, is
  // flattened). Errors are ProgramError at the failing call's (or name's)
  // location, keeping the original message (e.g. "specs/a.yaml:7:9:
  // aten::mm: mat2 has shape [4, 5]; ..."). The runtime's own exception is
  // kept in nested form: std::rethrow_if_nested(e) rethrows it. check, if
  // given, sees each returned value; an Error it throws becomes a
  // ProgramError at that value in the return statement.
  std::vector<Value> run(const std::vector<std::pair<std::string, Value>>& inputs, const ReturnCheck& check = {}) const;
  // program: the program this instance runs.
  const Program& program() const { return program_; }

 private:
  friend class Program;
  ProgramInstance(Program program, std::shared_ptr<const internal::ProgramFixtures> fixtures)
      : program_(std::move(program)), fixtures_(std::move(fixtures)) {}
  Program program_;
  std::shared_ptr<const internal::ProgramFixtures> fixtures_;
};

// parse_program: parses and checks text. Errors: absl::InvalidArgumentError
// whose message is "file:line:col: error text" (also for unknown ops: every
// callee must be a builtin, a fixture or a registered operator at parse
// time, and for calls that cannot bind whatever the inputs are). Any input
// is safe: no crash, hang or deep recursion.
absl::StatusOr<Program> parse_program(std::string_view text, const ProgramOrigin& origin = {});

// check_program: a name read before assignment that is not in input_names
// is an "file:line:col: undefined name 'y'" error.
absl::Status check_program(const Program& program, const std::vector<std::string>& input_names);

// is_reserved_name: whether the program language reads name as a literal or
// a keyword (True, None, inf, f32, torch.float32, return, ...), so that an
// input of that name could never be read.
bool is_reserved_name(std::string_view name);

}  // namespace opspec
