// ast.h: internal: the parsed form of a program (statements, expressions,
// resolved callees) and the values and static types the checker and the
// interpreter work with. See Note [Program language] in program.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/program/fixture.h"
#include "harness/program/program.h"
#include "runtime/dispatch/operator.h"

namespace opspec::internal::prog {

// kMaxDepth: how deeply expressions may nest (calls, lists, parentheses,
// unary minus); deeper input is an error, so recursion stays bounded.
inline constexpr int kMaxDepth = 64;

// Pos: a position in the program text: 1-based line and column (bytes).
struct Pos {
  int line = 0;
  int col = 0;
};

// to_location: pos in file coordinates (see ProgramOrigin).
SourceLocation to_location(const ProgramOrigin& origin, Pos pos);

enum class ExprKind : uint8_t {
  kName,          // text
  kInt,           // ival
  kFloat,         // dval
  kBool,          // bval
  kNone,
  kString,        // text
  kDType,         // dtype
  kLayout,        // ival (0 = torch.strided)
  kMemoryFormat,  // ival: c10::MemoryFormat (0 contiguous, 1 preserve, 2 channels_last, 3 _3d)
  kList,          // items
  kCall,          // text (callee as written), items (positional), kwargs, callee
  kNeg,           // items[0]
};

struct Kwarg;

// Expr: one expression node.
struct Expr {
  ExprKind kind = ExprKind::kNone;
  Pos pos;
  std::string text;
  int64_t ival = 0;
  double dval = 0;
  bool bval = false;
  DType dtype = DType::kFloat32;
  std::vector<Expr> items;
  std::vector<Kwarg> kwargs;
  int callee = -1;  // index into ProgramImpl::callees
  std::string site;  // kCall: "file:line:col", the SiteLabelScope its call runs under (made once, at parse)
};

// Kwarg: `name=value` in a call.
struct Kwarg {
  std::string name;
  Pos name_pos;
  Expr value;
};

enum class StmtKind : uint8_t { kAssign, kExpr, kReturn, kWith };

// Stmt: one line: `a, b = e`, `e`, or `return e1, e2`; or a block:
// `with no_grad():` (or enable_grad()) and the indented lines under it.
struct Stmt {
  StmtKind kind = StmtKind::kExpr;
  Pos pos;
  std::vector<std::string> targets;  // kAssign
  std::vector<Pos> target_pos;
  std::vector<Expr> values;  // one for kAssign/kExpr, any number for kReturn
  std::string site;          // "file:line:col" of the statement (made once, at parse)
  bool grad_enabled = false;  // kWith: the grad mode of its body
  std::vector<Stmt> body;     // kWith
};

// BuiltinId: the built-in functions (see builtins.cc).
enum class BuiltinId : uint8_t { kGraphBreak, kItem, kTensor, kAllclose, kEqual, kBackward, kGrad, kRetainGrad };

// Candidate: one signature a call may bind to: an operator overload, a
// builtin's or a fixture's (synthesized) schema.
struct Candidate {
  FunctionSchema schema;
  const OperatorHandle* op = nullptr;  // operators only
  bool numbers_as_tensors = false;     // Tensor parameters accept numbers (wrapped)
};

// Callee: what a call's name resolved to at parse time.
struct Callee {
  enum class Kind : uint8_t { kBuiltin, kFixture, kOp };
  Kind kind = Kind::kOp;
  std::string name;  // as written
  Pos pos;           // its first call
  BuiltinId builtin = BuiltinId::kGraphBreak;
  const Fixture* fixture = nullptr;
  // candidates: in resolution order (PyTorch's overload order for operators).
  std::vector<Candidate> candidates;
};

}  // namespace opspec::internal::prog

namespace opspec::internal {

// ProgramImpl: a parsed and checked program.
struct ProgramImpl {
  std::string source;
  ProgramOrigin origin;
  std::vector<prog::Stmt> stmts;
  std::vector<prog::Callee> callees;
  std::vector<std::string> names_used;  // read before assignment, first-use order
  std::vector<prog::Pos> names_used_pos;
  std::vector<std::string> ops_called;  // distinct callee names, first-use order
};

}  // namespace opspec::internal

namespace opspec::internal::prog {

// Obj: a value while a program runs.
struct Obj {
  enum class Kind : uint8_t {
    kNone, kTensor, kInt, kFloat, kBool, kStr, kDType, kDevice, kLayout, kMemoryFormat, kList, kTuple,
  };
  Kind kind = Kind::kNone;
  Value value;             // the payload of the scalar-like kinds (layouts and formats as int)
  std::vector<Obj> items;  // kList, kTuple
};

// Ty: a static type, as the checker infers it; kUnknown and kNumber stand
// for what only the run decides (inputs; item()'s int, float or bool).
struct Ty {
  enum class Kind : uint8_t {
    kUnknown, kNone, kTensor, kInt, kFloat, kBool, kNumber, kStr, kDType, kDevice, kLayout, kMemoryFormat,
    kList, kTuple,
  };
  Kind kind = Kind::kUnknown;
  std::vector<Ty> items;  // kList, kTuple
  friend bool operator==(const Ty& a, const Ty& b) { return a.kind == b.kind && a.items == b.items; }
};

// type_of: the (fully known) type of a runtime value.
Ty type_of(const Obj& o);
// type_name: "Tensor", "int", "float", "bool", "Number", "str", "NoneType",
// "list", "tuple", "torch.dtype", "torch.device", "torch.layout",
// "torch.memory_format", or "object" when unknown.
std::string type_name(const Ty& t);

}  // namespace opspec::internal::prog
