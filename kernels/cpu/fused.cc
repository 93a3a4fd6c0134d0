// fused.cc: FusedProgram (building, validating and planning fused elementwise
// programs) and run_fused (tiled, parallel evaluation). See Note [Fused kernels].
#include "kernels/cpu/fused.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <type_traits>

#include "absl/strings/str_join.h"
#include "kernels/common/coalesce.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/loops.h"

namespace opspec::internal {
namespace {

using Instr = FusedProgram::Instr;
using Reg = FusedProgram::Reg;
using KernelFn = decltype(Instr::fn);

// ---- Op classes ----

enum class OpClass : uint8_t { kUnaryAny, kUnaryFloating, kLogicalNot, kArith, kPredicate, kWhere, kCast };

// kOpInfo: each FusedOp's name and class, in enum order.
struct OpInfo {
  std::string_view name;
  OpClass cls;
};
constexpr OpInfo kOpInfo[] = {
    {"neg", OpClass::kUnaryAny},         {"abs", OpClass::kUnaryAny},
    {"relu", OpClass::kUnaryAny},        {"sin", OpClass::kUnaryFloating},
    {"cos", OpClass::kUnaryFloating},    {"exp", OpClass::kUnaryFloating},
    {"log", OpClass::kUnaryFloating},    {"tanh", OpClass::kUnaryFloating},
    {"sigmoid", OpClass::kUnaryFloating}, {"sqrt", OpClass::kUnaryFloating},
    {"rsqrt", OpClass::kUnaryFloating},  {"reciprocal", OpClass::kUnaryFloating},
    {"erf", OpClass::kUnaryFloating},    {"gelu", OpClass::kUnaryFloating},
    {"gelu_tanh", OpClass::kUnaryFloating}, {"silu", OpClass::kUnaryFloating},
    {"pow_scalar", OpClass::kUnaryAny},  {"logical_not", OpClass::kLogicalNot},
    {"add", OpClass::kArith},            {"sub", OpClass::kArith},
    {"mul", OpClass::kArith},            {"div", OpClass::kArith},
    {"pow", OpClass::kArith},            {"maximum", OpClass::kArith},
    {"minimum", OpClass::kArith},        {"add_alpha", OpClass::kArith},
    {"sub_alpha", OpClass::kArith},      {"eq", OpClass::kPredicate},
    {"ne", OpClass::kPredicate},         {"lt", OpClass::kPredicate},
    {"le", OpClass::kPredicate},         {"gt", OpClass::kPredicate},
    {"ge", OpClass::kPredicate},         {"logical_and", OpClass::kPredicate},
    {"logical_or", OpClass::kPredicate}, {"where", OpClass::kWhere},
    {"cast", OpClass::kCast},
};
static_assert(std::size(kOpInfo) == static_cast<size_t>(FusedOp::kCast) + 1, "kOpInfo must list every FusedOp");

OpClass op_class(FusedOp op) { return kOpInfo[static_cast<size_t>(op)].cls; }

int op_arity(FusedOp op) {
  switch (op_class(op)) {
    case OpClass::kArith:
    case OpClass::kPredicate: return 2;
    case OpClass::kWhere: return 3;
    default: return 1;
  }
}

// ---- Typed loops ----
// Each mirrors the lambda the eager kernel passes to cpu_kernel, and runs it
// through the same contiguous_loop, so fused and eager values agree bit for
// bit. See Note [Shared elementwise functors].


// launch: out[i] = f(args[0][i], ...) for n elements; bit k of mask marks
// argument k as one broadcast value.
template <class Out, class... In, class F>
inline void launch(char* out, char* const* args, unsigned mask, int64_t n, const F& f) {
  constexpr int kN = sizeof...(In);
  char* data[kN + 1];
  data[0] = out;
  for (int k = 0; k < kN; ++k) data[k + 1] = args[k];
  loops_detail::dispatch_mask<0, (1u << kN) - 1, Out, In...>(mask, data, n, f);
}

template <class T, class Op>
void unary_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  if constexpr (std::is_floating_point_v<opmath_t<T>>) {
    launch<T, T>(out, args, mask, n, Op{});  // as unary.cc: the functor's fast path shows
  } else {
    launch<T, T>(out, args, mask, n, [](opmath_t<T> x) { return Op{}(static_cast<arith_t<T>>(x)); });
  }
}

// pow_scalar_kernel: pow.Tensor_Scalar's fast paths, exactly as binary.cc picks them.
template <class T>
void pow_scalar_kernel(const Instr& ins, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  const Scalar& exponent = ins.param;
  const double e = exponent.to_double();
  if constexpr (std::is_floating_point_v<C>) {
    const bool fast = !std::is_same_v<T, Half>;
    if (fast && e == 0.5) return unary_kernel<T, SqrtOp>(ins, out, args, mask, n);
    if (fast && e == -0.5) return unary_kernel<T, RsqrtOp>(ins, out, args, mask, n);
    if (fast && e == -1.0) return unary_kernel<T, ReciprocalOp>(ins, out, args, mask, n);
    if (fast && e == 2.0) return unary_kernel<T, SquareOp>(ins, out, args, mask, n);
    if (fast && e == 3.0) return unary_kernel<T, CubeOp>(ins, out, args, mask, n);
    if (fast && e == -2.0) return unary_kernel<T, InvSquareOp>(ins, out, args, mask, n);
    const C ev = std::is_same_v<T, Half> ? scalar_as<T>(exponent) : exponent.to<C>();
    launch<T, T>(out, args, mask, n, [ev](opmath_t<T> x) { return PowOp{}(static_cast<C>(x), ev); });
  } else {
    if (e == 2.0) return unary_kernel<T, SquareOp>(ins, out, args, mask, n);
    if (e == 3.0) return unary_kernel<T, CubeOp>(ins, out, args, mask, n);
    const C ev = scalar_as<T>(exponent);
    launch<T, T>(out, args, mask, n, [ev](opmath_t<T> x) { return PowOp{}(static_cast<C>(x), ev); });
  }
}

template <class T>
void logical_not_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<bool, T>(out, args, mask, n, [](opmath_t<T> x) { return LogicalNotOp{}(x); });
}

template <class T, class Op>
void arith_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  launch<T, T, T>(out, args, mask, n,
                  [](opmath_t<T> x, opmath_t<T> y) { return Op{}(static_cast<C>(x), static_cast<C>(y)); });
}

template <class T, template <class> class AlphaOp>
void alpha_kernel(const Instr& ins, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  const AlphaOp<C> f{scalar_as<T>(ins.param)};
  launch<T, T, T>(out, args, mask, n,
                  [f](opmath_t<T> x, opmath_t<T> y) { return f(static_cast<C>(x), static_cast<C>(y)); });
}

// reduced_rhs_kernel: f16/bf16 mul and div by a one-element operand already
// converted to float (binary.cc's reduced_scalar_rhs).
template <class T, class Op>
void reduced_rhs_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<T, T, float>(out, args, mask, n, [](float x, float y) { return Op{}(x, y); });
}

template <class T, class Op>
void predicate_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<bool, T, T>(out, args, mask, n, [](opmath_t<T> x, opmath_t<T> y) { return Op{}(x, y); });
}

template <class U>
void where_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<U, bool, U, U>(out, args, mask, n, [](bool c, U x, U y) { return WhereOp{}(c, x, y); });
}

template <class D, class S>
void cast_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<D, S>(out, args, mask, n, [](opmath_t<S> v) { return CastOp<opmath_t<D>>{}(v); });
}

// ---- Kernel selection ----

template <class T>
constexpr bool kFloating = std::is_floating_point_v<opmath_t<T>>;

template <class Op>
KernelFn unary_for(DType d, bool floating_only) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return nullptr;
    } else if constexpr (!kFloating<scalar_t>) {
      if (floating_only) return nullptr;
      if constexpr (std::is_same_v<Op, NegOp> || std::is_same_v<Op, AbsOp> || std::is_same_v<Op, ReluOp>) {
        return &unary_kernel<scalar_t, Op>;
      }
      return nullptr;
    } else {
      return &unary_kernel<scalar_t, Op>;
    }
  });
}

template <class Op>
KernelFn arith_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn { return &arith_kernel<scalar_t, Op>; });
}

template <class Op>
KernelFn predicate_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn { return &predicate_kernel<scalar_t, Op>; });
}

KernelFn cast_for(DType to, DType from) {
  return OPSPEC_DISPATCH_ALL_DTYPES(to, "fused", [&]() -> KernelFn {
    using D = scalar_t;
    return OPSPEC_DISPATCH_ALL_DTYPES(from, "fused", [&]() -> KernelFn { return &cast_kernel<D, scalar_t>; });
  });
}

// select_kernel: the typed loop of an instruction whose operand dtypes were
// validated by add_op (null only for combinations add_op rejects).
KernelFn select_kernel(const Instr& ins, const std::vector<Reg>& regs) {
  const DType d = regs[ins.args[0]].dtype;
  const bool reduced_rhs = ins.nargs == 2 && regs[ins.args[1]].dtype != d;
  switch (ins.op) {
    case FusedOp::kNeg: return unary_for<NegOp>(d, false);
    case FusedOp::kAbs: return unary_for<AbsOp>(d, false);
    case FusedOp::kRelu: return unary_for<ReluOp>(d, false);
    case FusedOp::kSin: return unary_for<SinOp>(d, true);
    case FusedOp::kCos: return unary_for<CosOp>(d, true);
    case FusedOp::kExp: return unary_for<ExpOp>(d, true);
    case FusedOp::kLog: return unary_for<LogOp>(d, true);
    case FusedOp::kTanh: return unary_for<TanhOp>(d, true);
    case FusedOp::kSigmoid: return unary_for<SigmoidOp>(d, true);
    case FusedOp::kSqrt: return unary_for<SqrtOp>(d, true);
    case FusedOp::kRsqrt: return unary_for<RsqrtOp>(d, true);
    case FusedOp::kReciprocal: return unary_for<ReciprocalOp>(d, true);
    case FusedOp::kErf: return unary_for<ErfOp>(d, true);
    case FusedOp::kGeluErf: return unary_for<GeluErfOp>(d, true);
    case FusedOp::kGeluTanh: return unary_for<GeluTanhOp>(d, true);
    case FusedOp::kSilu: return unary_for<SiluOp>(d, true);
    case FusedOp::kPowScalar:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          return nullptr;
        } else {
          return &pow_scalar_kernel<scalar_t>;
        }
      });
    case FusedOp::kLogicalNot:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn { return &logical_not_kernel<scalar_t>; });
    case FusedOp::kAdd: return arith_for<AddOp>(d);
    case FusedOp::kSub: return arith_for<SubOp>(d);
    case FusedOp::kMul:
      if (reduced_rhs) return d == DType::kFloat16 ? &reduced_rhs_kernel<Half, MulOp> : &reduced_rhs_kernel<BFloat16, MulOp>;
      return arith_for<MulOp>(d);
    case FusedOp::kDiv:
      if (reduced_rhs) return d == DType::kFloat16 ? &reduced_rhs_kernel<Half, DivOp> : &reduced_rhs_kernel<BFloat16, DivOp>;
      return OPSPEC_DISPATCH_FLOATING_DTYPES(d, "fused", [&]() -> KernelFn { return &arith_kernel<scalar_t, DivOp>; });
    case FusedOp::kPow:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          return nullptr;
        } else {
          return &arith_kernel<scalar_t, PowOp>;
        }
      });
    case FusedOp::kMaximum: return arith_for<MaximumOp>(d);
    case FusedOp::kMinimum: return arith_for<MinimumOp>(d);
    case FusedOp::kAddAlpha:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn { return &alpha_kernel<scalar_t, AddAlphaOp>; });
    case FusedOp::kSubAlpha:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> KernelFn { return &alpha_kernel<scalar_t, SubAlphaOp>; });
    case FusedOp::kEq: return predicate_for<EqOp>(d);
    case FusedOp::kNe: return predicate_for<NeOp>(d);
    case FusedOp::kLt: return predicate_for<LtOp>(d);
    case FusedOp::kLe: return predicate_for<LeOp>(d);
    case FusedOp::kGt: return predicate_for<GtOp>(d);
    case FusedOp::kGe: return predicate_for<GeOp>(d);
    case FusedOp::kLogicalAnd: return predicate_for<LogicalAndOp>(d);
    case FusedOp::kLogicalOr: return predicate_for<LogicalOrOp>(d);
    case FusedOp::kWhere:
      switch (element_size(regs[ins.args[1]].dtype)) {
        case 1: return &where_kernel<uint8_t>;
        case 2: return &where_kernel<uint16_t>;
        case 4: return &where_kernel<uint32_t>;
        case 8: return &where_kernel<uint64_t>;
        default: return nullptr;
      }
    case FusedOp::kCast: return cast_for(regs[ins.out].dtype, d);
  }
  return nullptr;
}

// ---- Memory helpers ----

// RawBuffer: untyped, 64-byte aligned memory (like tensor storage, it holds
// elements of whatever type a loop writes there).
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using RawBuffer = std::unique_ptr<char, FreeDeleter>;
RawBuffer allocate(size_t bytes) {
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  return RawBuffer(static_cast<char*>(std::aligned_alloc(64, rounded)));
}

// fill_elements: n copies of the element at value (es bytes each).
template <class U>
void fill_as(char* dst, const char* value, int64_t n) {
  U v;
  std::memcpy(&v, value, sizeof(U));
  U* d = reinterpret_cast<U*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}
void fill_elements(char* dst, const char* value, int64_t n, int64_t es) {
  switch (es) {
    case 1: return fill_as<uint8_t>(dst, value, n);
    case 2: return fill_as<uint16_t>(dst, value, n);
    case 4: return fill_as<uint32_t>(dst, value, n);
    default: return fill_as<uint64_t>(dst, value, n);
  }
}

// gather_as: dst[0, n) = the input elements of output indices [begin, begin + n).
template <class U>
void gather_as(U* dst, const U* src, const CoalescedGeometry& g, int64_t begin, int64_t n) {
  const int nd = static_cast<int>(g.sizes.size());
  if (nd == 0) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[0];
    return;
  }
  SizeVec idx(static_cast<size_t>(nd));
  int64_t off = 0, rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    idx[d] = rest % g.sizes[d];
    rest /= g.sizes[d];
    off += idx[d] * g.strides[d];
  }
  const int last = nd - 1;
  const int64_t inner = g.sizes[last], s = g.strides[last];
  while (n > 0) {
    const int64_t run = std::min(n, inner - idx[last]);
    const U* p = src + off;
    if (s == 1) {
      std::memcpy(dst, p, static_cast<size_t>(run) * sizeof(U));
    } else if (s == 0) {
      const U v = *p;
      for (int64_t i = 0; i < run; ++i) dst[i] = v;
    } else {
      for (int64_t i = 0; i < run; ++i) dst[i] = p[i * s];
    }
    dst += run;
    n -= run;
    if (n == 0) break;
    // The row is done: step the odometer to the start of the next one.
    off -= idx[last] * s;
    idx[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < g.sizes[d]) {
        off += g.strides[d];
        break;
      }
      off -= (g.sizes[d] - 1) * g.strides[d];
      idx[d] = 0;
    }
  }
}

void gather(char* dst, const char* src, int64_t es, const CoalescedGeometry& g, int64_t begin, int64_t n) {
  switch (es) {
    case 1: return gather_as(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), g, begin, n);
    case 2: return gather_as(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), g, begin, n);
    case 4: return gather_as(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), g, begin, n);
    default: return gather_as(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), g, begin, n);
  }
}

std::string reg_name(int r) { return str_cat("r", r); }

}  // namespace

std::string_view fused_op_name(FusedOp op) { return kOpInfo[static_cast<size_t>(op)].name; }

FusedProgram::FusedProgram(IntArrayRef shape) : shape_(shape.begin(), shape.end()), numel_(compute_numel(shape)) {
  for (int64_t s : shape) OPSPEC_CHECK(s >= 0, "FusedProgram: negative size in shape ", format_sizes(shape));
}

int FusedProgram::new_reg(DType dtype) {
  OPSPEC_CHECK(!finalized_, "FusedProgram: the program is finalized; build a new one to add instructions");
  regs_.push_back(Reg{.dtype = dtype});
  return static_cast<int>(regs_.size()) - 1;
}

void FusedProgram::check_reg(int reg, std::string_view what) const {
  OPSPEC_CHECK(reg >= 0 && reg < static_cast<int>(regs_.size()), "FusedProgram: ", what, ": register ", reg,
               " does not exist (the program has ", regs_.size(), ")");
}

DType FusedProgram::dtype(int reg) const {
  check_reg(reg, "dtype");
  return regs_[reg].dtype;
}

IntArrayRef FusedProgram::input_sizes(int k) const { return input_sizes_.at(static_cast<size_t>(k)); }

int FusedProgram::add_input(DType dtype, IntArrayRef sizes) {
  bool broadcasts = sizes.size() <= shape_.size();
  for (size_t d = 0; broadcasts && d < sizes.size(); ++d) {
    const int64_t s = sizes[sizes.size() - 1 - d];
    broadcasts = s == 1 || s == shape_[shape_.size() - 1 - d];
  }
  OPSPEC_CHECK(broadcasts, "FusedProgram: input ",
               input_regs_.size(), " has sizes ", format_sizes(sizes), ", which do not broadcast to the shape ",
               format_sizes(shape_));
  const int r = new_reg(dtype);
  regs_[r].input = static_cast<int>(input_regs_.size());
  input_regs_.push_back(r);
  input_sizes_.emplace_back(sizes.begin(), sizes.end());
  return r;
}

int FusedProgram::add_constant(const Scalar& value, DType dtype) {
  const int r = new_reg(dtype);
  regs_[r].constant = true;
  OPSPEC_DISPATCH_ALL_DTYPES(dtype, "FusedProgram", [&] {
    const scalar_t v = value.to<scalar_t>();
    std::memcpy(&regs_[r].constant_bits, &v, sizeof(v));
  });
  return r;
}

int FusedProgram::add_cast(int x, DType dtype) {
  check_reg(x, "cast");
  if (regs_[x].dtype == dtype) return x;
  return add_op(FusedOp::kCast, {x}, Scalar(static_cast<int64_t>(dtype)));
}

int FusedProgram::add_op(FusedOp op, std::initializer_list<int> args, const Scalar& param) {
  const std::string_view name = fused_op_name(op);
  OPSPEC_CHECK(static_cast<int>(args.size()) == op_arity(op), "FusedProgram: ", name, " takes ", op_arity(op),
               " operand(s) but ", args.size(), " were given");
  Instr ins{.op = op, .nargs = static_cast<int>(args.size()), .param = param};
  int k = 0;
  for (int a : args) {
    check_reg(a, name);
    ins.args[k++] = a;
  }
  auto dt = [&](int i) { return regs_[ins.args[i]].dtype; };
  auto dname = [&](int i) { return dtype_short_name(dt(i)); };
  const DType d = dt(0);
  DType out = d;
  switch (op_class(op)) {
    case OpClass::kUnaryAny:
      OPSPEC_CHECK(d != DType::kBool, "FusedProgram: ", name, " does not take b8 operands");
      break;
    case OpClass::kUnaryFloating:
      OPSPEC_CHECK(is_floating(d), "FusedProgram: ", name, " takes a floating operand, got ", dname(0));
      break;
    case OpClass::kLogicalNot: out = DType::kBool; break;
    case OpClass::kArith: {
      const bool reduced = (op == FusedOp::kMul || op == FusedOp::kDiv) &&
                           (d == DType::kFloat16 || d == DType::kBFloat16) && dt(1) == DType::kFloat32;
      OPSPEC_CHECK(dt(1) == d || reduced, "FusedProgram: ", name, " takes operands of one dtype, got ", dname(0),
                   " and ", dname(1));
      OPSPEC_CHECK(op != FusedOp::kDiv || is_floating(d), "FusedProgram: div takes floating operands, got ",
                   dname(0));
      OPSPEC_CHECK(op != FusedOp::kPow || d != DType::kBool, "FusedProgram: pow does not take b8 operands");
      break;
    }
    case OpClass::kPredicate:
      OPSPEC_CHECK(dt(1) == d, "FusedProgram: ", name, " takes operands of one dtype, got ", dname(0), " and ",
                   dname(1));
      out = DType::kBool;
      break;
    case OpClass::kWhere:
      OPSPEC_CHECK(d == DType::kBool, "FusedProgram: where takes a b8 condition, got ", dname(0));
      OPSPEC_CHECK(dt(1) == dt(2), "FusedProgram: where takes values of one dtype, got ", dname(1), " and ",
                   dname(2));
      out = dt(1);
      break;
    case OpClass::kCast: {
      const int64_t code = param.to_int();
      OPSPEC_CHECK(param.is_integral() && code >= 0 && code < kNumDTypes,
                   "FusedProgram: cast takes the target dtype as its param");
      out = static_cast<DType>(code);
      break;
    }
  }
  ins.out = new_reg(out);
  instrs_.push_back(ins);
  return ins.out;
}

void FusedProgram::add_output(int reg) {
  check_reg(reg, "output");
  OPSPEC_CHECK(!finalized_, "FusedProgram: the program is finalized; build a new one to add outputs");
  outputs_.push_back(reg);
}

void FusedProgram::finalize() {
  OPSPEC_CHECK(!finalized_, "FusedProgram: finalize called twice");
  const int nregs = static_cast<int>(regs_.size());
  // Dead code: only instructions an output depends on run.
  std::vector<bool> live(static_cast<size_t>(nregs), false);
  for (int r : outputs_) live[r] = true;
  for (auto it = instrs_.rbegin(); it != instrs_.rend(); ++it) {
    if (!live[it->out]) continue;
    for (int k = 0; k < it->nargs; ++k) live[it->args[k]] = true;
  }
  std::erase_if(instrs_, [&](const Instr& ins) { return !live[ins.out]; });

  // Uniform registers: constants, one-element inputs, and what only they feed.
  for (int r : input_regs_) regs_[r].uniform = compute_numel(input_sizes_[regs_[r].input]) == 1;
  for (Reg& reg : regs_) reg.uniform = reg.uniform || reg.constant;
  for (size_t i = 0; i < instrs_.size(); ++i) {
    Instr& ins = instrs_[i];
    bool uniform = true;
    for (int k = 0; k < ins.nargs; ++k) {
      if (regs_[ins.args[k]].uniform) {
        ins.uniform_mask |= 1u << k;
      } else {
        uniform = false;
      }
    }
    regs_[ins.out].uniform = uniform;
    (uniform ? prologue_ : body_).push_back(static_cast<int>(i));
    ins.fn = select_kernel(ins, regs_);
    OPSPEC_INTERNAL_ASSERT(ins.fn != nullptr);
  }

  // Outputs: the first output of a per-tile instruction's register is written
  // in place by it; the others are copied (or filled, when uniform) per tile.
  direct_output_.assign(static_cast<size_t>(nregs), -1);
  std::vector<bool> computed(static_cast<size_t>(nregs), false);
  for (int i : body_) computed[instrs_[i].out] = true;
  for (int k = 0; k < num_outputs(); ++k) {
    const int r = outputs_[k];
    if (computed[r] && direct_output_[r] < 0) {
      direct_output_[r] = k;
    } else {
      stored_outputs_.push_back(k);
    }
  }

  // Scratch slots: tile inputs first, then each per-tile result not written in
  // place; a slot is freed after its register's last reader, never within one
  // instruction (so no loop reads the buffer it writes).
  const int nbody = static_cast<int>(body_.size());
  std::vector<int> last_use(static_cast<size_t>(nregs), -1);
  for (int j = 0; j < nbody; ++j) {
    const Instr& ins = instrs_[body_[j]];
    for (int k = 0; k < ins.nargs; ++k) last_use[ins.args[k]] = j;
  }
  for (int k : stored_outputs_) last_use[outputs_[k]] = nbody;
  std::vector<int> free_slots;
  auto alloc = [&]() {
    if (free_slots.empty()) return num_slots_++;
    const int s = free_slots.back();
    free_slots.pop_back();
    return s;
  };
  for (int r : input_regs_) {
    if (!regs_[r].uniform && last_use[r] >= 0) {
      tile_inputs_.push_back(r);
      regs_[r].slot = alloc();
    }
  }
  for (int j = 0; j < nbody; ++j) {
    const Instr& ins = instrs_[body_[j]];
    if (direct_output_[ins.out] < 0) regs_[ins.out].slot = alloc();
    for (int k = 0; k < ins.nargs; ++k) {
      const int a = ins.args[k];
      const bool first = std::find(ins.args, ins.args + k, a) == ins.args + k;
      if (first && regs_[a].slot >= 0 && last_use[a] == j) free_slots.push_back(regs_[a].slot);
    }
  }
  finalized_ = true;
}

std::string FusedProgram::str() const {
  std::string out;
  for (size_t r = 0; r < regs_.size(); ++r) {
    const Reg& reg = regs_[r];
    if (reg.input >= 0) {
      str_append(&out, reg_name(static_cast<int>(r)), " = input ", reg.input, " : ", dtype_short_name(reg.dtype),
                 format_sizes(input_sizes_[reg.input]), "\n");
    } else if (reg.constant) {
      double v = 0;
      OPSPEC_DISPATCH_ALL_DTYPES(reg.dtype, "FusedProgram", [&] {
        scalar_t x;
        std::memcpy(static_cast<void*>(&x), &reg.constant_bits, sizeof(x));
        v = static_cast<double>(static_cast<opmath_t<scalar_t>>(x));
      });
      str_append(&out, reg_name(static_cast<int>(r)), " = constant ", format_double(v), " : ",
                 dtype_short_name(reg.dtype), "\n");
    }
  }
  for (const Instr& ins : instrs_) {
    std::vector<std::string> args;
    for (int k = 0; k < ins.nargs; ++k) args.push_back(reg_name(ins.args[k]));
    const bool has_param = ins.op == FusedOp::kAddAlpha || ins.op == FusedOp::kSubAlpha || ins.op == FusedOp::kPowScalar;
    if (has_param) args.push_back(ins.param.str());
    str_append(&out, reg_name(ins.out), " = ", fused_op_name(ins.op), "(", absl::StrJoin(args, ", "), ") : ",
               dtype_short_name(regs_[ins.out].dtype), "\n");
  }
  for (size_t k = 0; k < outputs_.size(); ++k) str_append(&out, "output ", k, " = ", reg_name(outputs_[k]), "\n");
  return out;
}

void run_fused(const FusedProgram& p, TensorList inputs, TensorList outputs) {
  OPSPEC_CHECK(p.finalized_, "run_fused: the program is not finalized; call finalize() after building it");
  OPSPEC_CHECK(static_cast<int>(inputs.size()) == p.num_inputs(), "run_fused: the program takes ", p.num_inputs(),
               " input(s) but ", inputs.size(), " were given");
  OPSPEC_CHECK(static_cast<int>(outputs.size()) == p.num_outputs(), "run_fused: the program has ", p.num_outputs(),
               " output(s) but ", outputs.size(), " were given");
  auto has_cpu_data = [](const Tensor& t) { return t.impl()->storage()->device().is_cpu(); };
  for (int k = 0; k < p.num_inputs(); ++k) {
    const Tensor& t = inputs[k];
    OPSPEC_CHECK(t.defined(), "run_fused: input ", k, " is undefined");
    const IntArrayRef want = p.input_sizes(k);
    OPSPEC_CHECK(t.dtype() == p.input_dtype(k) && std::equal(t.sizes().begin(), t.sizes().end(), want.begin(), want.end()),
                 "run_fused: input ", k, " is ", t.meta_str(), " but the program expects ",
                 dtype_short_name(p.input_dtype(k)), format_sizes(want));
    OPSPEC_CHECK(t.device().is_cpu() && has_cpu_data(t), "run_fused: input ", k, " (", t.meta_str(),
                 ") has no cpu data; fused kernels run on cpu tensors");
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    const Tensor& t = outputs[k];
    OPSPEC_CHECK(t.defined(), "run_fused: output ", k, " is undefined");
    OPSPEC_CHECK(t.dtype() == p.output_dtype(k) &&
                     std::equal(t.sizes().begin(), t.sizes().end(), p.shape_.begin(), p.shape_.end()),
                 "run_fused: output ", k, " is ", t.meta_str(), " but the program writes ",
                 dtype_short_name(p.output_dtype(k)), format_sizes(p.shape_));
    OPSPEC_CHECK(t.device().is_cpu() && has_cpu_data(t) && t.is_contiguous(), "run_fused: output ", k, " (",
                 t.meta_str(), ") must be a contiguous cpu tensor");
    for (const Tensor& other : inputs) {
      OPSPEC_CHECK(!(t.numel() > 0 && other.numel() > 0 && t.is_alias_of(other)), "run_fused: output ", k,
                   " shares memory with an input; fused kernels write fresh outputs");
    }
    for (int j = 0; j < k; ++j) {
      OPSPEC_CHECK(!(t.numel() > 0 && t.is_alias_of(outputs[j])), "run_fused: outputs ", j, " and ", k,
                   " share memory");
    }
  }
  if (p.numel_ == 0) return;

  // Uniform registers, computed once: 8 bytes each, read-only during the tiles.
  const int nregs = static_cast<int>(p.regs_.size());
  RawBuffer uniform = allocate(static_cast<size_t>(nregs) * 8);
  auto uniform_ptr = [&](int r) { return uniform.get() + static_cast<size_t>(r) * 8; };
  for (int r = 0; r < nregs; ++r) {
    const Reg& reg = p.regs_[r];
    if (reg.constant) std::memcpy(uniform_ptr(r), &reg.constant_bits, 8);
    if (reg.input >= 0 && reg.uniform) {
      std::memcpy(uniform_ptr(r), inputs[reg.input].raw_data(), static_cast<size_t>(element_size(reg.dtype)));
    }
  }
  for (int i : p.prologue_) {
    const Instr& ins = p.instrs_[i];
    char* args[3];
    for (int k = 0; k < ins.nargs; ++k) args[k] = uniform_ptr(ins.args[k]);
    ins.fn(ins, uniform_ptr(ins.out), args, ins.uniform_mask, 1);
  }

  std::vector<CoalescedGeometry> geometry;
  for (int r : p.tile_inputs_) geometry.push_back(coalesce_over(inputs[p.regs_[r].input], p.shape_));

  parallel_for(p.numel_, kGrainSize, [&](int64_t begin, int64_t end) {
    RawBuffer scratch = allocate(static_cast<size_t>(p.num_slots_) * kFusedTile * 8);
    std::vector<char*> ptr(static_cast<size_t>(nregs), nullptr);
    for (int r = 0; r < nregs; ++r) {
      if (p.regs_[r].uniform) {
        ptr[r] = uniform_ptr(r);
      } else if (p.regs_[r].slot >= 0) {
        ptr[r] = scratch.get() + static_cast<size_t>(p.regs_[r].slot) * kFusedTile * 8;
      }
    }
    std::vector<char*> slot_ptr = ptr;  // where gathered inputs go
    for (int64_t t0 = begin; t0 < end; t0 += kFusedTile) {
      const int64_t n = std::min(kFusedTile, end - t0);
      for (size_t j = 0; j < p.tile_inputs_.size(); ++j) {
        const int r = p.tile_inputs_[j];
        const Tensor& in = inputs[p.regs_[r].input];
        const int64_t es = in.element_size();
        char* base = static_cast<char*>(in.raw_data());
        if (geometry[j].dense()) {
          ptr[r] = base + t0 * es;
        } else {
          gather(slot_ptr[r], base, es, geometry[j], t0, n);
        }
      }
      for (int i : p.body_) {
        const Instr& ins = p.instrs_[i];
        const int k = p.direct_output_[ins.out];
        char* out = k >= 0 ? static_cast<char*>(outputs[k].raw_data()) + t0 * outputs[k].element_size() : ptr[ins.out];
        char* args[3];
        for (int a = 0; a < ins.nargs; ++a) args[a] = ptr[ins.args[a]];
        ins.fn(ins, out, args, ins.uniform_mask, n);
        if (k >= 0) ptr[ins.out] = out;
      }
      for (int k : p.stored_outputs_) {
        const int r = p.outputs_[k];
        const int64_t es = outputs[k].element_size();
        char* dst = static_cast<char*>(outputs[k].raw_data()) + t0 * es;
        if (p.regs_[r].uniform) {
          fill_elements(dst, ptr[r], n, es);
        } else {
          std::memcpy(dst, ptr[r], static_cast<size_t>(n * es));
        }
      }
    }
  });
}

}  // namespace opspec::internal
