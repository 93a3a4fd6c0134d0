// The program language: literals, statements, errors with file:line:col,
// overload resolution, fixtures, user ops, graph_break() under compile(),
// `with no_grad():` blocks and retain_grad, and robustness on hostile input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/program/fixture.h"
#include "harness/program/program.h"
#include "runtime/compile/compile.h"
#include "runtime/core/generator.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/library.h"
#include "runtime/dispatch/mode.h"
#include "runtime/dispatch/op_names_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace program_language_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using OpNames = test_util::OpNames;  // records the names of the ops it sees

Program parse_ok(std::string_view text) {
  auto p = parse_program(text, {.file = "t.yaml", .first_line = 10, .column_offset = 4});
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Program();
}

// parse_error: the message of a program that must not parse (file t.yaml,
// text line 1 = file line 10, columns shifted by 4).
std::string parse_error(std::string_view text) {
  auto p = parse_program(text, {.file = "t.yaml", .first_line = 10, .column_offset = 4});
  if (p.ok()) return "(parsed)";
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

// run_error: the message of a program that parses but fails when run.
std::string run_error(std::string_view text, std::vector<std::pair<std::string, Value>> inputs) {
  const Program p = parse_ok(text);
  try {
    p.run(inputs);
  } catch (const ProgramError& e) {
    EXPECT_EQ(std::string(e.what()), str_cat(e.where().str(), ": ", e.message()));
    return e.what();
  }
  return "(ran)";
}

Tensor f32(std::vector<double> v, std::vector<int64_t> shape) { return ops::tensor(std::move(v), shape); }

// ---- Literals and statements ----

TEST(ProgramParse, EveryLiteral) {
  const Program p = parse_ok(
      "return 1, -2, 1.5, .5, 1e-5, -2.5E+3, 7., inf, -inf, True, true, False, false, None, "
      "\"dq\", 'sq \\' \\n', f32, bf16, b8, torch.float64, int32, bool, [1, 2], [1, 2.5], [], "
      "torch.strided, torch.contiguous_format, torch.preserve_format, \"cuda:1\", torch.channels_last, "
      "torch.channels_last_3d");
  const std::vector<Value> v = p.run({});
  ASSERT_EQ(v.size(), 31u);
  EXPECT_EQ(v[0], Value(int64_t{1}));
  EXPECT_EQ(v[1], Value(int64_t{-2}));
  EXPECT_EQ(v[2], Value(1.5));
  EXPECT_EQ(v[3], Value(0.5));
  EXPECT_EQ(v[4], Value(1e-5));
  EXPECT_EQ(v[5], Value(-2500.0));
  EXPECT_EQ(v[6], Value(7.0));
  EXPECT_EQ(v[7], Value(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(v[8], Value(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(v[9], Value(true));
  EXPECT_EQ(v[10], Value(true));
  EXPECT_EQ(v[11], Value(false));
  EXPECT_EQ(v[12], Value(false));
  EXPECT_TRUE(v[13].is_none());
  EXPECT_EQ(v[14], Value("dq"));
  EXPECT_EQ(v[15], Value("sq ' \n"));
  EXPECT_EQ(v[16], Value(DType::kFloat32));
  EXPECT_EQ(v[17], Value(DType::kBFloat16));
  EXPECT_EQ(v[18], Value(DType::kBool));
  EXPECT_EQ(v[19], Value(DType::kFloat64));
  EXPECT_EQ(v[20], Value(DType::kInt32));
  EXPECT_EQ(v[21], Value(DType::kBool));
  EXPECT_EQ(v[22], Value(std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v[23], Value(std::vector<double>{1, 2.5}));
  EXPECT_EQ(v[24], Value(std::vector<int64_t>{}));
  EXPECT_EQ(v[25], Value(int64_t{0}));
  EXPECT_EQ(v[26], Value(int64_t{0}));
  EXPECT_EQ(v[27], Value(int64_t{1}));
  EXPECT_EQ(v[28], Value("cuda:1"));
  EXPECT_EQ(v[29], Value(int64_t{2}));  // c10::MemoryFormat::ChannelsLast
  EXPECT_EQ(v[30], Value(int64_t{3}));  // ChannelsLast3d
}

TEST(ProgramParse, NanAndNegatedNames) {
  const std::vector<Value> v = parse_ok("n = item(x)\nreturn nan, -n, -(-n), -True").run({{"x", f32({3}, {1})}});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(std::isnan(v[0].to_double()));
  EXPECT_EQ(v[1], Value(-3.0));
  EXPECT_EQ(v[2], Value(3.0));
  EXPECT_EQ(v[3], Value(int64_t{-1}));
}

// Number literals read as Python reads them: INT64_MIN negated (its magnitude
// alone is out of range), an underflow is 0.0 (an overflow stays an error), and
// a decimal int with leading zeros is refused (Python 3's octal trap).
TEST(ProgramParse, NumberLiteralsAsPython) {
  const std::vector<Value> v = parse_ok("return -9223372036854775808, 9223372036854775807, 1e-400, -1e-400, "
                                        "0.000e-99999999999999999999, 5e-324, 00, 0, 007.5, 00e1")
                                   .run({});
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0], Value(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(v[1], Value(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(v[2], Value(0.0));
  EXPECT_TRUE(std::signbit(v[3].to_double()) && v[3].to_double() == 0.0);
  EXPECT_EQ(v[4], Value(0.0));
  EXPECT_EQ(v[5], Value(5e-324));
  EXPECT_EQ(v[6], Value(int64_t{0}));
  EXPECT_EQ(v[7], Value(int64_t{0}));
  EXPECT_EQ(v[8], Value(7.5));
  EXPECT_EQ(v[9], Value(0.0));
  EXPECT_EQ(parse_error("y = 9223372036854775808"), "t.yaml:10:9: integer literal '9223372036854775808' is out of range");
  EXPECT_EQ(parse_error("y = --9223372036854775808"),
            "t.yaml:10:9: integer literal '-(-9223372036854775808)' is out of range");
  EXPECT_EQ(parse_error("y = -9223372036854775809"), "t.yaml:10:10: integer literal '9223372036854775809' is out of range");
  EXPECT_EQ(parse_error("y = 1e400"), "t.yaml:10:9: float literal '1e400' is out of range");
  EXPECT_EQ(parse_error("y = 1000e306"), "t.yaml:10:9: float literal '1000e306' is out of range");
  EXPECT_EQ(parse_error("y = 007"), "t.yaml:10:9: invalid number literal '007': leading zeros in decimal integer "
                                    "literals are not permitted (as in Python)");
}

TEST(ProgramParse, CommentsBlankLinesContinuationAndUnpacking) {
  const Program p = parse_ok(
      "# a comment line\n"
      "\n"
      "a, b = native_dropout(x,   # the input\n"
      "                      0.0,\n"
      "                      True)  # p = 0: keeps everything\n"
      "   \t\n"
      "c = cat([a,\n"
      "         x],\n"
      "        0)\n"
      "return c, b\n");
  EXPECT_THAT(p.names_used(), ElementsAre("x"));
  EXPECT_THAT(p.ops_called(), ElementsAre("native_dropout", "cat"));
  const Tensor x = f32({1, 2}, {2});
  const std::vector<Value> v = p.run({{"x", x}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(ops::equal(v[0].to_tensor(), f32({1, 2, 1, 2}, {4})));
  EXPECT_EQ(v[1].to_tensor().dtype(), DType::kBool);
}

TEST(ProgramParse, NamesUsedAreReadsBeforeAssignment) {
  const Program p = parse_ok("x = add(x, y)\nz = mul(x, w)\nreturn add(z, y)");
  EXPECT_THAT(p.names_used(), ElementsAre("x", "y", "w"));
  EXPECT_THAT(p.ops_called(), ElementsAre("add", "mul"));
  EXPECT_TRUE(check_program(p, {"x", "y", "w"}).ok());
  const absl::Status s = check_program(p, {"x", "y"});
  EXPECT_EQ(s.message(), "t.yaml:11:16: undefined name 'w'");
}

TEST(ProgramParse, ReturnsFlattenTuplesAndCallsForEffect) {
  const Tensor x = f32({1, 2, 3}, {3});
  // A bare call's result is dropped; in-place ops change the input.
  const std::vector<Value> v = parse_ok("add_(x, 1)\nreturn native_dropout(x, 0.0, False)").run({{"x", x}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(ops::equal(x, f32({2, 3, 4}, {3})));
  EXPECT_TRUE(parse_ok("graph_break()").run({}).empty());
}

// ---- Errors: file:line:col at the offending token ----

TEST(ProgramErrors, LexingAndParsing) {
  EXPECT_EQ(parse_error("y = add(x, $)"), "t.yaml:10:16: unexpected character '$'");
  EXPECT_EQ(parse_error("y = add(x, 1"), "t.yaml:10:12: '(' was never closed");
  EXPECT_EQ(parse_error("y = add(x, 1))"), "t.yaml:10:18: unmatched ')'");
  EXPECT_EQ(parse_error("y = cat([x, x), 0)"), "t.yaml:10:18: closing ')' does not match opening '['");
  EXPECT_EQ(parse_error("y = \"abc"), "t.yaml:10:9: unterminated string literal");
  EXPECT_EQ(parse_error("y = 12abc"), "t.yaml:10:9: invalid number literal '12abc'");
  EXPECT_EQ(parse_error("y = 99999999999999999999"), "t.yaml:10:9: integer literal '99999999999999999999' is out of range");
  EXPECT_EQ(parse_error("y = add(x, 1) z"), "t.yaml:10:19: expected end of line, got 'z'");
  EXPECT_EQ(parse_error("y = add(x, 1 2)"), "t.yaml:10:18: expected ',' or ')' in a call, got '2'");
  EXPECT_EQ(parse_error("y ="), "t.yaml:10:8: expected an expression, got end of line");
  EXPECT_EQ(parse_error("\n\n  y = = 1"), "t.yaml:12:11: expected an expression, got '='");
  EXPECT_EQ(parse_error("True = 1"), "t.yaml:10:5: cannot assign to 'True'");
  EXPECT_EQ(parse_error("add(x, 1) = y"), "t.yaml:10:5: cannot assign to an expression: only names can be assigned");
  EXPECT_EQ(parse_error("y = x.shape"), "t.yaml:10:9: attribute access is not supported: 'x.shape'");
  EXPECT_EQ(parse_error("y = torch.foo"), "t.yaml:10:9: unknown constant 'torch.foo'");
  EXPECT_EQ(parse_error("y = (x, x)"), "t.yaml:10:11: expected ')', got ',' (tuples are not supported)");
  EXPECT_EQ(parse_error("y = add(x=1, 2)"), "t.yaml:10:18: positional argument follows keyword argument");
  EXPECT_EQ(parse_error("y = gelu(x, approximate='tanh', approximate='none')"),
            "t.yaml:10:37: keyword argument repeated: 'approximate'");
  EXPECT_EQ(parse_error("return x\ny = relu(x)"),
            "t.yaml:11:5: statement after 'return': 'return' must be the program's last statement");
}

TEST(ProgramErrors, UnknownOpsAndNames) {
  EXPECT_EQ(parse_error("x = relu(x)\ny = ad(x, 1)"), "t.yaml:11:9: unknown op 'ad'; did you mean 'add'?");
  EXPECT_EQ(parse_error("y = frobnicate(x)"), "t.yaml:10:9: unknown op 'frobnicate'");
  EXPECT_EQ(parse_error("y = aten::add.Nope(x, x)"), "t.yaml:10:9: unknown op 'aten::add.Nope'");
  EXPECT_EQ(parse_error("y = True(x)"), "t.yaml:10:9: 'True' is not callable");
  EXPECT_EQ(run_error("y = relu(x)\nreturn add(y, z)", {{"x", f32({1}, {1})}}), "t.yaml:11:19: undefined name 'z'");
}

TEST(ProgramErrors, ArgumentsLikePyTorch) {
  // One overload: its specific error, at the offending argument.
  EXPECT_EQ(parse_error("y = add(x, \"s\")"), "t.yaml:10:16: add(): argument 'other' (position 2) must be Tensor, not str");
  EXPECT_EQ(parse_error("y = relu(x, 1)"), "t.yaml:10:17: relu() takes 1 positional argument but 2 were given");
  EXPECT_EQ(parse_error("y = softmax(x, 1, f32, 2)"),
            "t.yaml:10:28: softmax() takes from 2 to 3 positional arguments but 4 were given");
  // round(x, 1): both overloads are plausible by count once PyTorch's out= is counted (round's signatures take
  // 1 to 2 and 2 to 3 arguments), so the error is the invalid combination, as torch 1.13's (See Note [The out=
  // parameter in overload errors]), not round.decimals' own.
  const std::string round_overloads =
      ", but expected one of:\n * aten::round(Tensor self) -> Tensor\n * aten::round.decimals(Tensor self, *, int "
      "decimals) -> Tensor";
  EXPECT_EQ(parse_error("y = round(relu(x), 1)"),
            "t.yaml:10:24: round() received an invalid combination of arguments - got (Tensor, int)" + round_overloads);
  EXPECT_EQ(parse_error("y = round(relu(x), decimals=1.5)"),
            "t.yaml:10:9: round() received an invalid combination of arguments - got (Tensor, decimals=float)" +
                round_overloads);
  // With one overload, a required keyword-only parameter is not counted as positional, as Python counts.
  EXPECT_EQ(parse_error("y = round.decimals(x, 1)"),
            "t.yaml:10:27: round.decimals() takes 1 positional argument but 2 were given");
  EXPECT_EQ(parse_error("y = relu(x, foo=1)"), "t.yaml:10:17: relu() got an unexpected keyword argument 'foo'");
  // A misspelled keyword is named (and a near name offered), not reported as the argument it left missing (issue 22).
  EXPECT_EQ(parse_error("y = softmax(x, dimm=0)"),
            "t.yaml:10:20: softmax() got an unexpected keyword argument 'dimm'; did you mean 'dim'?");
  EXPECT_EQ(parse_error("y = relu(x, self=x)"), "t.yaml:10:17: relu() got multiple values for argument 'self'");
  EXPECT_EQ(parse_error("y = softmax(x)"), "t.yaml:10:9: softmax() missing 1 required positional argument: \"dim\"");
  EXPECT_EQ(parse_error("y = gelu(x, approximate=1)"), "t.yaml:10:29: gelu(): argument 'approximate' must be str, not int");
  EXPECT_EQ(parse_error("y = view(x, [2, 2.5])"),
            "t.yaml:10:17: view(): argument 'size' (position 2) must be tuple of ints, but found element of type "
            "float at pos 1");
  EXPECT_EQ(parse_error("y = mm(x, 1)"), "t.yaml:10:15: mm(): argument 'mat2' (position 2) must be Tensor, not int");
  EXPECT_EQ(parse_error("y = relu(None)"), "t.yaml:10:14: relu(): argument 'self' (position 1) must be Tensor, not NoneType");
  // Several overloads, none plausible alone: PyTorch's "invalid combination", listing the schemas.
  EXPECT_EQ(parse_error("y = sum(x, \"s\")"),
            "t.yaml:10:16: sum() received an invalid combination of arguments - got (object, str), but expected "
            "one of:\n"
            " * aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor\n"
            " * aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
            "Tensor");
  // item() always gives a number: a Tensor parameter can never take it.
  EXPECT_EQ(parse_error("n = item(x)\ny = relu(n)"),
            "t.yaml:11:14: relu(): argument 'self' (position 1) must be Tensor, not Number");
  // The same errors when the types are only known at run time (inputs).
  EXPECT_EQ(run_error("y = relu(n)", {{"n", Value(1.5)}}),
            "t.yaml:10:14: relu(): argument 'self' (position 1) must be Tensor, not float");
  // With three arguments only sum.dim_IntList is plausible: its own error, as PyTorch gives.
  EXPECT_EQ(parse_error("y = sum(x, \"s\", n)"),
            "t.yaml:10:16: sum(): argument 'dim' (position 2) must be tuple of ints, not str");
  EXPECT_EQ(run_error("y = sum(x, s)", {{"x", f32({1}, {1})}, {"s", Value("s")}}),
            "t.yaml:10:16: sum() received an invalid combination of arguments - got (Tensor, str), but "
            "expected one of:\n"
            " * aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor\n"
            " * aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
            "Tensor");
}

TEST(ProgramErrors, UnpackCounts) {
  EXPECT_EQ(parse_error("a, b, c = native_dropout(x, 0.5, True)"),
            "t.yaml:10:5: not enough values to unpack (expected 3, got 2)");
  EXPECT_EQ(parse_error("a, b = relu(x)"), "t.yaml:10:5: cannot unpack a non-sequence Tensor into 2 names");
  EXPECT_EQ(run_error("a, b = x", {{"x", Value(std::vector<int64_t>{1, 2, 3})}}),
            "t.yaml:10:5: too many values to unpack (expected 2, got 3)");
  EXPECT_EQ(parse_error("y = neg(x)\nz = -y"), "t.yaml:11:9: bad operand type for unary -: 'Tensor' (use neg(x) for tensors)");
}

TEST(ProgramErrors, RuntimeErrorsKeepTheOriginalNested) {
  const Program p = parse_ok("\ny = mm(x, x)");
  try {
    p.run({{"x", f32({1, 2, 3, 4, 5, 6}, {2, 3})}});
    FAIL() << "mm of [2, 3] by [2, 3] ran";
  } catch (const ProgramError& e) {
    EXPECT_EQ(e.where().str(), "t.yaml:11:9");
    EXPECT_THAT(e.what(), StartsWith("t.yaml:11:9: "));
    EXPECT_THAT(e.message(), HasSubstr("mm"));
    try {
      std::rethrow_if_nested(e);
      FAIL() << "no nested exception";
    } catch (const ProgramError&) {
      FAIL() << "the nested exception should be the runtime's own";
    } catch (const Error& inner) {
      EXPECT_EQ(e.message(), inner.what());
    }
  }
  EXPECT_EQ(run_error("y = to(x, \"gpu\")", {{"x", f32({1}, {1})}}),
            "t.yaml:10:15: invalid device 'gpu' (expected cpu, meta, cuda or cuda:N)");
  EXPECT_EQ(run_error("y = tensor([[1, 2], [3]])", {}), "t.yaml:10:16: tensor(): data is ragged: a list of 1 where 2 were expected");
}

// ---- Resolution ----

std::vector<std::string> ops_of(const Program& p, std::vector<std::pair<std::string, Value>> inputs) {
  OpNames names;
  {
    ModeGuard g(names);
    p.run(inputs);
  }
  return names.names;
}

TEST(ProgramResolution, OverloadsAsPythonChoosesThem) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(ops_of(parse_ok("arange(0, 5)"), {}), ElementsAre("aten::arange.start"));
  EXPECT_THAT(ops_of(parse_ok("arange(0, 5, 1)"), {}), ElementsAre("aten::arange.start_step"));
  EXPECT_THAT(ops_of(parse_ok("sum(x, 1)\nsum(x)"), {{"x", x}}), ElementsAre("aten::sum.dim_IntList", "aten::sum"));
  EXPECT_THAT(ops_of(parse_ok("squeeze(x)\nsqueeze(x, 0)"), {{"x", x}}),
              ElementsAre("aten::squeeze", "aten::squeeze.dim"));
  // The hidden Scalar overload is used only when named.
  EXPECT_THAT(ops_of(parse_ok("add(x, 1)\naten::add.Scalar(x, 1)\nadd.Scalar(x, 1, 2)"), {{"x", x}}),
              ElementsAre("aten::add.Tensor", "aten::add.Scalar", "aten::add.Scalar"));
  EXPECT_THAT(ops_of(parse_ok("aten::relu.default(x)\naten::add(x, x)"), {{"x", x}}),
              ElementsAre("aten::relu", "aten::add.Tensor"));
  // `input` names a `self` parameter, as in torch.add(input=...).
  EXPECT_THAT(ops_of(parse_ok("add(input=x, other=x)"), {{"x", x}}), ElementsAre("aten::add.Tensor"));
  // A number returned by item() flows into the next call, typed at run time.
  const std::vector<Value> v = parse_ok("n = item(sum(x))\nreturn full([2], n), view(x, [4])").run({{"x", x}});
  EXPECT_TRUE(ops::equal(v[0].to_tensor(), f32({10, 10}, {2})));
}

TEST(ProgramResolution, StaticCheckAllowsWhatOnlyTheRunDecides) {
  // n's kind is unknown until item() runs: both calls parse; the run decides.
  const Program p = parse_ok("n = item(i)\nreturn view(x, [n, 2]), full([1], n)");
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  const std::vector<Value> v = p.run({{"x", x}, {"i", Value(ops::full({1}, 2, {.dtype = DType::kInt64}))}});
  EXPECT_EQ(v[0].to_tensor().sizes(), (IntArrayRef{2, 2}));
  EXPECT_EQ(run_error("n = item(i)\ny = view(x, [n, 2])", {{"x", x}, {"i", f32({2}, {1})}}),
            "t.yaml:11:17: view(): argument 'size' (position 2) must be tuple of ints, but found element of type "
            "float at pos 0");
}

// ---- User ops ----

Tensor scale_kernel(const Tensor& x, double s) { return ops::mul(x, s); }
Tensor twin_kernel(const Tensor& x) { return ops::neg(x); }

void register_user_ops() {
  static const bool once = [] {
    Library a("progtest");
    a.def("scale(Tensor x, float s=2.0) -> Tensor").impl("scale", DispatchKey::kCPU, &scale_kernel);
    a.def("twin(Tensor x) -> Tensor").impl("twin", DispatchKey::kCPU, &twin_kernel);
    a.def("relu(Tensor x) -> Tensor").impl("relu", DispatchKey::kCPU, &twin_kernel);
    Library b("progtest2");
    b.def("twin(Tensor x) -> Tensor").impl("twin", DispatchKey::kCPU, &twin_kernel);
    return true;
  }();
  (void)once;
}

TEST(ProgramUserOps, QualifiedAndUnambiguousBareNames) {
  register_user_ops();
  const Tensor x = f32({1, 2}, {2});
  EXPECT_THAT(ops_of(parse_ok("progtest::scale(x, 3)\nscale(x)\nscale(x, s=1)"), {{"x", x}}),
              ElementsAre("progtest::scale", "progtest::scale", "progtest::scale"));
  const std::vector<Value> v = parse_ok("return scale(x, 3)").run({{"x", x}});
  EXPECT_TRUE(ops::equal(v[0].to_tensor(), f32({3, 6}, {2})));
  // aten wins a bare name; a name two namespaces define must be qualified.
  EXPECT_THAT(ops_of(parse_ok("relu(x)\nprogtest::relu(x)"), {{"x", x}}),
              ElementsAre("aten::relu", "progtest::relu"));
  EXPECT_EQ(parse_error("y = twin(x)"),
            "t.yaml:10:9: ambiguous op 'twin': qualify it as one of progtest::twin, progtest2::twin");
  EXPECT_EQ(parse_error("y = progtest::scale(x, \"a\")"),
            "t.yaml:10:28: progtest::scale(): argument 's' (position 2) must be float, not str");
}

// ---- Fixtures ----

int g_makes = 0;

void register_test_fixture() {
  static const bool once = [] {
    register_fixture(Fixture{
        "prog_test_affine", "x * w + x, and x - w", {{"x", {2}}},
        [] {
          ++g_makes;
          const Tensor w = ops::randn({2});  // a parameter: created once per instance
          return FixtureFn([w](const std::vector<Tensor>& in) -> std::vector<Tensor> {
            return {ops::add(ops::mul(in[0], w), in[0]), ops::sub(in[0], w)};
          });
        }});
    register_fixture(Fixture{"prog_test_id", "x", {{"x", {2}}},
                             [] { return FixtureFn([](const std::vector<Tensor>& in) { return in; }); }});
    register_fixture(Fixture{"prog_test_broken", "make() fails", {},
                             []() -> FixtureFn { OPSPEC_FAIL("prog_test_broken: no weights"); }});
    return true;
  }();
  (void)once;
}

TEST(ProgramFixtures, InstantiateMakesEachFixtureOnceAcrossRuns) {
  register_test_fixture();
  const Program p = parse_ok("a, b = prog_test_affine(x)\nc = prog_test_affine(x=a)\nreturn prog_test_id(b), c");
  const Tensor x = f32({1, 2}, {2});
  g_makes = 0;
  OpNames names;
  ProgramInstance inst = [&] {
    ModeGuard g(names);
    return p.instantiate();
  }();
  EXPECT_EQ(g_makes, 1);
  EXPECT_THAT(names.names, ElementsAre()) << "parameter creation is hidden from user modes";
  const std::vector<Value> first = inst.run({{"x", x}});
  const std::vector<Value> second = inst.run({{"x", x}});
  inst.run({{"x", x}});
  EXPECT_EQ(g_makes, 1);
  ASSERT_EQ(first.size(), 3u);  // prog_test_id's single result, then c's tuple flattened
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(ops::equal(first[i].to_tensor(), second[i].to_tensor()));
  p.run({{"x", x}});
  p.run({{"x", x}});
  EXPECT_EQ(g_makes, 3);
}

TEST(ProgramFixtures, ArgumentAndUnpackErrors) {
  register_test_fixture();
  EXPECT_EQ(parse_error("y = prog_test_affine(x, x)"),
            "t.yaml:10:29: prog_test_affine() takes 1 positional argument but 2 were given");
  EXPECT_EQ(parse_error("y = prog_test_affine(1.5)"),
            "t.yaml:10:26: prog_test_affine(): argument 'x' (position 1) must be Tensor, not float");
  EXPECT_EQ(run_error("a, b, c = prog_test_affine(x)", {{"x", f32({1, 2}, {2})}}),
            "t.yaml:10:5: not enough values to unpack (expected 3, got 2)");
  // A failing make() is reported at the fixture's first call.
  const Program p = parse_ok("x = relu(x)\ny = prog_test_broken()");
  try {
    p.instantiate();
    FAIL() << "make() did not fail";
  } catch (const ProgramError& e) {
    EXPECT_STREQ(e.what(), "t.yaml:11:9: prog_test_broken: no weights");
  }
}

TEST(ProgramFixtures, DefaultConstructedProgramIsEmpty) {
  const Program p;
  EXPECT_TRUE(p.run({}).empty());
  EXPECT_TRUE(p.names_used().empty());
  EXPECT_EQ(p.source(), "");
}

// ---- Under compile() ----

TEST(ProgramCompile, GraphBreakBreaksTheGraph) {
  const Program p = parse_ok("a = add(x, 1)\ngraph_break()\nreturn mul(a, 2)");
  const ProgramInstance inst = p.instantiate();
  auto cf = compile(
      [inst](const std::vector<Tensor>& in) {
        std::vector<Tensor> out;
        for (const Value& v : inst.run({{"x", in[0]}})) out.push_back(v.to_tensor());
        return out;
      },
      {.input_names = {"x"}});
  const Tensor x = f32({1, 2}, {2});
  EXPECT_TRUE(ops::equal(cf(x)[0], f32({4, 6}, {2})));
  const CompileStats stats = cf.stats();
  ASSERT_EQ(stats.breaks.size(), 1u);
  EXPECT_THAT(stats.breaks[0].reason, HasSubstr("graph_break"));
  EXPECT_EQ(stats.graphs_run, 2);
  EXPECT_THAT(stats.ops_per_graph, ElementsAre(ElementsAre("aten::add.Tensor"), ElementsAre("aten::mul.Tensor")));
}

TEST(ProgramCompile, FullgraphBreakIsALocatedError) {
  const ProgramInstance inst = parse_ok("a = add(x, 1)\ngraph_break()\nreturn a").instantiate();
  auto cf = compile(
      [inst](const std::vector<Tensor>& in) { return std::vector<Tensor>{inst.run({{"x", in[0]}})[0].to_tensor()}; },
      {.fullgraph = true});
  try {
    cf(f32({1}, {1}));
    FAIL() << "fullgraph allowed a break";
  } catch (const ProgramError& e) {
    EXPECT_EQ(e.where().str(), "t.yaml:11:5");
    try {
      std::rethrow_if_nested(e);
    } catch (const GraphBreakError&) {
      SUCCEED();
    }
  }
}

TEST(ProgramDocs, ExamplesRun) {
  // The examples of docs/program-language.md.
  const Tensor x = ops::randn({2, 4}), w = ops::randn({16, 4});
  const std::vector<Value> a = parse_ok(
                                   "h = linear(x, w)            # aten::linear, decomposed as PyTorch does\n"
                                   "a = gelu(h, approximate=\"tanh\")\n"
                                   "graph_break()\n"
                                   "return softmax(a, -1), item(sum(a))")
                                   .run({{"x", x}, {"w", w}});
  EXPECT_EQ(a.size(), 2u);
  const std::vector<Value> b = parse_ok(
                                   "z = zeros([2, 3], dtype=f64)\n"
                                   "fill_(z, 1.5)\n"
                                   "o = ones_like(z)                 # f64, like z\n"
                                   "return add(z, o, alpha=2)")
                                   .run({});
  EXPECT_TRUE(ops::equal(b[0].to_tensor(), ops::full({2, 3}, 3.5, {.dtype = DType::kFloat64})));
  parse_ok(
      "s = sum(x, [0, 1], True)\nm = mean(x, 1, dtype=f64)\nn = amax(x, -1)\n"
      "v = view(x, [4, 2])\np = permute(v, [1, 0])\nc = cat([x, x], 1)\ns2 = stack([x, x], dim=0)\n"
      "y2 = aten::add.Scalar(x, 1)")
      .run({{"x", x}});
}

// ---- Grad mode blocks and retain_grad ----

// `with no_grad():` runs its indented body without recording history, as
// torch.no_grad(); enable_grad() turns it back on inside; names assigned in
// a block stay bound; retain_grad(t) keeps a result's gradient for grad(t).
TEST(ProgramGradMode, NoGradBlocksAndRetainGrad) {
  const Tensor w = ops::tensor({1, 2, 3}, {3});
  w.requires_grad_();
  const std::vector<Value> v = parse_ok(
                                   "with no_grad():\n"
                                   "  a = mul(w, 2)\n"
                                   "\n"
                                   "  # a comment line\n"
                                   "  with enable_grad():\n"
                                   "    b = mul(w, 3)\n"
                                   "  c = add(b, 1)\n"
                                   "d = mul(w, 4)\n"
                                   "retain_grad(d)\n"
                                   "backward(sum(add(d, b)))\n"
                                   "return a, b, c, grad(d), grad(w)")
                                   .run({{"w", w}});
  ASSERT_EQ(v.size(), 5u);
  EXPECT_FALSE(v[0].to_tensor().requires_grad());  // under no_grad
  EXPECT_TRUE(v[1].to_tensor().requires_grad());   // enable_grad inside it
  EXPECT_FALSE(v[2].to_tensor().requires_grad());  // back to no_grad
  EXPECT_THAT(v[3].to_tensor().to_vector<double>(), ElementsAre(1, 1, 1));  // d's retained gradient
  EXPECT_THAT(v[4].to_tensor().to_vector<double>(), ElementsAre(7, 7, 7));  // 4 from d, 3 from b
  EXPECT_TRUE(autograd::is_grad_enabled());  // restored after the block
  // torch.no_grad() is spelled that way too; a block may end the program with its return.
  const std::vector<Value> r = parse_ok("with torch.no_grad():\n    return mul(w, 2)").run({{"w", w}});
  EXPECT_FALSE(r[0].to_tensor().requires_grad());
  // An error inside the block still restores grad mode.
  EXPECT_THAT(run_error("with no_grad():\n  y = mm(w, w)", {{"w", w}}), HasSubstr("t.yaml:11:11: aten::mm"));
  EXPECT_TRUE(autograd::is_grad_enabled());
  // retain_grad of a tensor without grad is PyTorch's error; grad() of a result without it says what to do.
  EXPECT_THAT(run_error("retain_grad(x)", {{"x", ops::ones({2})}}),
              HasSubstr("can't retain_grad on Tensor that has requires_grad=False"));
  EXPECT_THAT(run_error("y = mul(w, 2)\nbackward(sum(y))\nreturn grad(y)", {{"w", w}}),
              HasSubstr("call retain_grad(t) before backward() to keep a result's"));
}

TEST(ProgramGradMode, BlockSyntaxErrorsAsPython) {
  EXPECT_EQ(parse_error("with no_grad():\ny = x"), "t.yaml:11:5: expected an indented block after 'with' statement");
  EXPECT_EQ(parse_error("with no_grad():"), "t.yaml:10:20: expected an indented block after 'with' statement");
  EXPECT_EQ(parse_error("with no_grad():\n  y = x\n    z = y"), "t.yaml:12:9: unexpected indent");
  EXPECT_EQ(parse_error("with no_grad():\n    y = x\n  z = y"),
            "t.yaml:12:7: unindent does not match any outer indentation level");
  EXPECT_EQ(parse_error("y = x\n  z = y"), "t.yaml:11:7: unexpected indent");
  EXPECT_EQ(parse_error("with no_grad(): y = x"),
            "t.yaml:10:21: the body of a 'with' statement goes on the lines below it, indented");
  EXPECT_EQ(parse_error("with grad():\n  y = x"),
            "t.yaml:10:10: expected no_grad() or enable_grad() after 'with', got 'grad'");
  EXPECT_EQ(parse_error("with no_grad:\n  y = x"), "t.yaml:10:17: expected '()' after 'no_grad', got ':'");
  EXPECT_EQ(parse_error("with no_grad()\n  y = x"), "t.yaml:10:19: expected ':', got end of line");
  EXPECT_EQ(parse_error("with no_grad():\n  return x\ny = x"),
            "t.yaml:12:5: statement after 'return': 'return' must be the program's last statement");
  EXPECT_EQ(parse_error("with = 1"), "t.yaml:10:5: cannot assign to 'with'");
  EXPECT_EQ(parse_error("y = add(x, 1):"), "t.yaml:10:18: expected end of line, got ':'");
  EXPECT_TRUE(is_reserved_name("with"));
  // Nesting is bounded, never a deep recursion.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += std::string(static_cast<size_t>(i), ' ') + "with no_grad():\n";
  deep += std::string(100, ' ') + "y = x";
  EXPECT_THAT(parse_error(deep), HasSubstr("'with' blocks nested too deeply (more than 64 levels)"));
}

// ---- Robustness ----

TEST(ProgramRobustness, DeepNestingIsAnErrorNotARecursion) {
  std::string deep = "y = ";
  for (int i = 0; i < 100000; ++i) deep += "neg(";
  deep += "x";
  for (int i = 0; i < 100000; ++i) deep += ")";
  EXPECT_EQ(parse_error(deep), "t.yaml:10:265: expression nested too deeply (more than 64 levels)");
  EXPECT_THAT(parse_error(std::string(100000, '[')), HasSubstr("was never closed"));
  EXPECT_THAT(parse_error("y = " + std::string(100000, '-') + "1"), HasSubstr("nested too deeply"));
  std::string ok = "y = ";
  for (int i = 0; i < 60; ++i) ok += "neg(";
  ok += "x";
  for (int i = 0; i < 60; ++i) ok += ")";
  parse_ok(ok);
}

TEST(ProgramRobustness, LargeProgramsAndArbitraryBytes) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += str_cat("x", i + 1, " = add(x", i, ", 1)  # step\n");
  const Program p = parse_ok(big);
  EXPECT_EQ(p.names_used().size(), 1u);
  std::string wide = "y = f(";
  for (int i = 0; i < 50000; ++i) wide += str_cat("k", i, "=1, ");
  wide += "k7=2)";
  EXPECT_THAT(parse_error(wide), HasSubstr("keyword argument repeated: 'k7'"));
  std::mt19937 rng(1234);
  const std::string alphabet = "ab_:.()[],=-#'\"\\\n 0123456789eE+\t\xff\x01xy";
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    auto r = parse_program(s);  // must return, not crash or throw
    if (!r.ok()) {
      EXPECT_THAT(std::string(r.status().message()), StartsWith("<program>:"));
    }
  }
}

}  // namespace
}  // namespace opspec
