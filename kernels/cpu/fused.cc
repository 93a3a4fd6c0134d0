// fused.cc: the CPU's fused kernels: the tile interpreter, which runs each
// instruction of a FusedProgram as its typed loop (fused_loops.h) tile by
// tile in parallel, the same tiles through generated code (fused_codegen.h),
// and the FusedKernel that picks between them. See Note [Fused kernels].
#include "kernels/cpu/fused.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "kernels/common/coalesce.h"
#include "kernels/cpu/cache_hints.h"
#include "kernels/cpu/cpu_jit.h"
#include "kernels/cpu/fused_codegen.h"
#include "kernels/cpu/fused_loops.h"
#include "kernels/cpu/loops.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

using Instr = FusedProgram::Instr;
using Reg = FusedProgram::Reg;

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

}  // namespace

namespace {

// select_kernels: every live instruction's loop, in instrs() order.
std::vector<FusedLoopFn> select_kernels(const FusedProgram& p) {
  std::vector<FusedLoopFn> fns;
  fns.reserve(p.instrs().size());
  for (const Instr& ins : p.instrs()) {
    fns.push_back(select_fused_loop(ins, p.regs()));
    OPSPEC_INTERNAL_ASSERT(fns.back() != nullptr);  // add_op rejected every dtype with no loop
  }
  return fns;
}

// Note [Fused outputs in eager's layout]
// A group's results keep eager's layout: TensorIterator writes an output in
// its inputs' memory order, so a transposed q times cos is transposed and a
// channels-last batch norm's relu is channels-last. Rather than write
// row-major and copy (a pass over every result), the CPU kernel walks the
// elements in the outputs' memory order: the program's dims are permuted,
// outermost first, for the outputs and every input alike, so the outputs are
// written in place and an input laid out as they are is read in place too.
// The programs are elementwise, so the order of the walk changes no bits.

// memory_order: t's dims outermost first, when t is dense in that order (no
// gaps, no overlap; size-1 dims first); nullopt otherwise.
std::optional<std::vector<int>> memory_order(const Tensor& t) {
  std::vector<int> order(static_cast<size_t>(t.dim()));
  for (int d = 0; d < t.dim(); ++d) order[static_cast<size_t>(d)] = d;
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if ((sizes[a] == 1) != (sizes[b] == 1)) return sizes[a] == 1;
    return sizes[a] != 1 && strides[a] > strides[b];
  });
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (sizes[*it] == 1) continue;
    if (strides[*it] != expected) return std::nullopt;
    expected *= sizes[*it];
  }
  return order;
}

// same_layout: a and b (of one shape) step alike over every dim longer than 1
// (empty ones always do: nothing is written).
bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0) return true;
  for (int d = 0; d < a.dim(); ++d) {
    if (a.sizes()[d] != 1 && a.strides()[d] != b.strides()[d]) return false;
  }
  return true;
}

// Walk: the operands seen in the order of the outputs' memory (See Note
// [Fused outputs in eager's layout]): views over the permuted shape, the
// outputs contiguous in it, the inputs broadcast to it.
struct Walk {
  SizeVec shape;
  std::vector<Tensor> inputs, outputs;
};

// permuted_walk: the Walk when the outputs lie in another order than
// row-major; nullopt when they are row-major already. An output that is an
// input (See Note [In-place fusion]) gets the same view as that input.
std::optional<Walk> permuted_walk(const FusedProgram& p, TensorList inputs, TensorList outputs) {
  if (outputs.empty() || outputs[0].is_contiguous() || p.numel() == 0) return std::nullopt;
  const std::vector<int> order = *memory_order(outputs[0]);  // check_operands made sure
  const IntArrayRef shape = p.shape();
  const int64_t nd = static_cast<int64_t>(shape.size());
  Walk w;
  for (int d : order) w.shape.push_back(shape[d]);
  auto view = [&](const Tensor& t) {
    const int64_t lead = nd - t.dim();
    SizeVec strides;
    for (int d : order) {
      const bool broadcast = d < lead || t.sizes()[d - lead] == 1;
      strides.push_back(broadcast ? 0 : t.strides()[d - lead]);
    }
    return make_view(t, w.shape, strides, t.storage_offset());
  };
  for (const Tensor& t : inputs) w.inputs.push_back(view(t));
  for (const Tensor& t : outputs) w.outputs.push_back(view(t));
  return w;
}

// check_operands: run_fused's argument checks (See run_fused in fused.h).
void check_operands(const FusedProgram& p, TensorList inputs, TensorList outputs) {
  OPSPEC_CHECK(p.finalized(), "run_fused: the program is not finalized; call finalize() after building it");
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
                     std::equal(t.sizes().begin(), t.sizes().end(), p.shape().begin(), p.shape().end()),
                 "run_fused: output ", k, " is ", t.meta_str(), " but the program writes ",
                 dtype_short_name(p.output_dtype(k)), format_sizes(p.shape()));
    OPSPEC_CHECK(t.device().is_cpu() && has_cpu_data(t) && (t.is_contiguous() || memory_order(t).has_value()),
                 "run_fused: output ", k, " (", t.meta_str(),
                 ") must be a cpu tensor dense in some order of its dims (contiguous, transposed, channels-last)");
    OPSPEC_CHECK(k == 0 || same_layout(t, outputs[0]), "run_fused: output ", k, " (strides ", format_sizes(t.strides()),
                 ") is laid out unlike output 0 (strides ", format_sizes(outputs[0].strides()),
                 "); a kernel writes every output in one order");
    for (const Tensor& other : inputs) {
      // An output may be an input itself (an in-place group, See Note [In-place fusion]), nothing else.
      OPSPEC_CHECK(!(t.numel() > 0 && other.numel() > 0 && t.is_alias_of(other)) || same_elements(t, other),
                   "run_fused: output ", k, " shares memory with an input but is not that input; fused kernels "
                   "write fresh outputs or write over an input element for element");
    }
    for (int j = 0; j < k; ++j) {
      OPSPEC_CHECK(!(t.numel() > 0 && t.is_alias_of(outputs[j])), "run_fused: outputs ", j, " and ", k,
                   " share memory");
    }
  }
}

// OutputMode: how a tile's values reach an output.
enum OutputMode : char {
  kDirect = 0,   // written where they belong by the tile's instructions
  kBuffered,     // computed into a tile buffer, then copied out
  kStreamed,     // computed into a tile buffer, then copied out with streaming stores
};

// output_modes: per output, whether it is computed into a tile buffer and
// copied out after the tile: streamed when it is large enough (See Note
// [Streaming stores] in cache_hints.h), buffered when it is an input too,
// which the tile may still read (a fast path's exact rerun reads its inputs
// again; See Note [In-place fusion]) and which is read again soon (a matmul
// epilogue's block: See Note [Matmul epilogues]).
std::vector<char> output_modes(TensorList inputs, TensorList outputs) {
  std::vector<char> modes;
  for (const Tensor& t : outputs) {
    const bool in_place =
        std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& in) { return t.numel() > 0 && same_elements(t, in); });
    modes.push_back(t.numel() * t.element_size() >= kStreamMinBytes ? kStreamed : in_place ? kBuffered : kDirect);
  }
  return modes;
}

// copy_out: a tile buffer's bytes to an output, as its mode says.
void copy_out(char mode, char* dst, const char* src, int64_t bytes) {
  if (mode == kStreamed) {
    stream_copy(dst, src, bytes);
  } else {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
}

// Ranges: the output elements one task evaluates: [begin, end), or (block
// set) a block's row segments of the output viewed with `width` columns.
struct Ranges {
  int64_t begin = 0, end = 0;
  const MatrixBlock* block = nullptr;
  int64_t width = 0;

  template <class F>
  void for_each(F&& f) const {
    if (block == nullptr) return f(begin, end);
    for (int64_t r = block->row0; r < block->row0 + block->rows; ++r) {
      const int64_t first = r * width + block->col0;
      f(first, first + block->cols);
    }
  }
};

// run_tasks: task over every element, split over the OpenMP threads, or over
// one block on the calling thread.
template <class Task>
void run_tasks(const FusedProgram& p, const MatrixBlock* block, int64_t width, Task&& task) {
  if (block != nullptr) return task(Ranges{0, 0, block, width});
  parallel_for(p.numel(), kGrainSize, [&](int64_t begin, int64_t end) { task(Ranges{begin, end}); });
}

// run_planned: evaluates p with fns[i] the loop of instruction i, over all
// of its output or (block set) one block of it.
void run_planned(const FusedProgram& p, const std::vector<FusedLoopFn>& fns, TensorList inputs, TensorList outputs,
                 IntArrayRef shape, const MatrixBlock* block = nullptr, int64_t width = 0) {
  if (p.numel() == 0) return;

  // Uniform registers, computed once: 8 bytes each, read-only during the tiles.
  const int nregs = static_cast<int>(p.regs().size());
  RawBuffer uniform = allocate(static_cast<size_t>(nregs) * 8);
  auto uniform_ptr = [&](int r) { return uniform.get() + static_cast<size_t>(r) * 8; };
  for (int r = 0; r < nregs; ++r) {
    const Reg& reg = p.regs()[r];
    if (reg.constant) std::memcpy(uniform_ptr(r), &reg.constant_bits, 8);
    if (reg.input >= 0 && reg.uniform) {
      std::memcpy(uniform_ptr(r), inputs[reg.input].raw_data(), static_cast<size_t>(element_size(reg.dtype)));
    }
  }
  for (int i : p.prologue()) {
    const Instr& ins = p.instrs()[i];
    char* args[3];
    for (int k = 0; k < ins.nargs; ++k) args[k] = uniform_ptr(ins.args[k]);
    fns[static_cast<size_t>(i)](ins, uniform_ptr(ins.out), args, ins.uniform_mask, 1);
  }

  std::vector<CoalescedGeometry> geometry;
  for (int r : p.tile_inputs()) geometry.push_back(coalesce_over(inputs[p.regs()[r].input], shape));

  const std::vector<char> streamed = output_modes(inputs, outputs);

  run_tasks(p, block, width, [&](const Ranges& ranges) {
    RawBuffer scratch = allocate(static_cast<size_t>(p.num_scratch_slots() + p.num_outputs()) * kFusedTile * 8);
    auto stream_buffer = [&](int k) {
      return scratch.get() + static_cast<size_t>(p.num_scratch_slots() + k) * kFusedTile * 8;
    };
    std::vector<char*> ptr(static_cast<size_t>(nregs), nullptr);
    for (int r = 0; r < nregs; ++r) {
      if (p.regs()[r].uniform) {
        ptr[r] = uniform_ptr(r);
      } else if (p.regs()[r].slot >= 0) {
        ptr[r] = scratch.get() + static_cast<size_t>(p.regs()[r].slot) * kFusedTile * 8;
      }
    }
    std::vector<char*> slot_ptr = ptr;  // where gathered inputs go
    ranges.for_each([&](int64_t begin, int64_t end) {
      for (int64_t t0 = begin; t0 < end; t0 += kFusedTile) {
        const int64_t n = std::min(kFusedTile, end - t0);
        for (size_t j = 0; j < p.tile_inputs().size(); ++j) {
          const int r = p.tile_inputs()[j];
          const Tensor& in = inputs[p.regs()[r].input];
          const int64_t es = in.element_size();
          char* base = static_cast<char*>(in.raw_data());
          if (geometry[j].dense()) {
            ptr[r] = base + t0 * es;
          } else {
            gather(slot_ptr[r], base, es, geometry[j], t0, n);
          }
        }
        for (int i : p.body()) {
          const Instr& ins = p.instrs()[i];
          const int k = p.direct_output()[ins.out];
          char* out = k < 0 ? ptr[ins.out]
                      : streamed[k] ? stream_buffer(k)
                                    : static_cast<char*>(outputs[k].raw_data()) + t0 * outputs[k].element_size();
          char* args[3];
          for (int a = 0; a < ins.nargs; ++a) args[a] = ptr[ins.args[a]];
          fns[static_cast<size_t>(i)](ins, out, args, ins.uniform_mask, n);
          if (k >= 0) ptr[ins.out] = out;
        }
        for (int k = 0; k < p.num_outputs(); ++k) {
          if (streamed[k] && p.direct_output()[p.output_reg(k)] == k) {
            const int64_t es = outputs[k].element_size();
            copy_out(streamed[k], static_cast<char*>(outputs[k].raw_data()) + t0 * es, stream_buffer(k), n * es);
          }
        }
        for (int k : p.stored_outputs()) {
          const int r = p.output_reg(k);
          const int64_t es = outputs[k].element_size();
          char* dst = static_cast<char*>(outputs[k].raw_data()) + t0 * es;
          if (p.regs()[r].uniform) {
            fill_elements(dst, ptr[r], n, es);
          } else {
            copy_out(streamed[k], dst, ptr[r], n * es);
          }
        }
      }
    });
    stream_fence();
  });
}

// run_generated: evaluates p with its generated tile function (See Note
// [Generated CPU kernels] in fused_codegen.cc): the same tiles, threads,
// gathers and streamed outputs as run_planned, one call per tile.
void run_generated(const FusedProgram& p, FusedTileFn fn, TensorList inputs, TensorList outputs, IntArrayRef shape,
                   const MatrixBlock* block = nullptr, int64_t width = 0) {
  if (p.numel() == 0) return;
  const int ni = p.num_inputs(), no = p.num_outputs();
  std::vector<char> per_tile(static_cast<size_t>(ni), 0), dense(static_cast<size_t>(ni), 0);
  std::vector<CoalescedGeometry> geometry(static_cast<size_t>(ni));
  int buffers = 0;  // tile buffers: one per gathered input and per streamed output
  for (int r : p.tile_inputs()) {
    const int k = p.regs()[r].input;
    per_tile[k] = 1;
    geometry[k] = coalesce_over(inputs[k], shape);
    dense[k] = geometry[k].dense();
    buffers += dense[k] ? 0 : 1;
  }
  const std::vector<char> streamed = output_modes(inputs, outputs);
  for (char s : streamed) buffers += s != kDirect;
  run_tasks(p, block, width, [&](const Ranges& ranges) {
    RawBuffer scratch = allocate(static_cast<size_t>(buffers) * kFusedTile * 8);
    std::vector<const void*> in(static_cast<size_t>(ni), nullptr);
    std::vector<void*> out(static_cast<size_t>(no), nullptr);
    std::vector<char*> buffer_of_input(static_cast<size_t>(ni), nullptr), buffer_of_output(static_cast<size_t>(no), nullptr);
    int next = 0;
    auto take_buffer = [&] { return scratch.get() + static_cast<size_t>(next++) * kFusedTile * 8; };
    for (int k = 0; k < ni; ++k) {
      if (per_tile[k] && !dense[k]) buffer_of_input[k] = take_buffer();
      if (!per_tile[k] && p.regs()[p.input_reg(k)].uniform) in[k] = inputs[k].raw_data();
    }
    for (int k = 0; k < no; ++k) {
      if (streamed[k]) buffer_of_output[k] = take_buffer();
    }
    ranges.for_each([&](int64_t begin, int64_t end) {
      for (int64_t t0 = begin; t0 < end; t0 += kFusedTile) {
        const int64_t n = std::min(kFusedTile, end - t0);
        for (int k = 0; k < ni; ++k) {
          if (!per_tile[k]) continue;
          const int64_t es = inputs[k].element_size();
          const char* base = static_cast<const char*>(inputs[k].raw_data());
          if (dense[k]) {
            in[k] = base + t0 * es;
          } else {
            gather(buffer_of_input[k], base, es, geometry[k], t0, n);
            in[k] = buffer_of_input[k];
          }
        }
        for (int k = 0; k < no; ++k) {
          out[k] = streamed[k] ? buffer_of_output[k]
                               : static_cast<char*>(outputs[k].raw_data()) + t0 * outputs[k].element_size();
        }
        fn(n, in.data(), out.data());
        for (int k = 0; k < no; ++k) {
          if (!streamed[k]) continue;
          const int64_t es = outputs[k].element_size();
          copy_out(streamed[k], static_cast<char*>(outputs[k].raw_data()) + t0 * es, buffer_of_output[k], n * es);
        }
      }
    });
    stream_fence();
  });
}

// FailedCompilers: the compilers a kAuto compile failed with; kernels
// interpret from then on rather than fail again on every tier-up.
struct FailedCompilers {
  std::mutex mu;
  absl::flat_hash_set<std::string> names;
};
FailedCompilers& failed_compilers() {
  static FailedCompilers* f = new FailedCompilers;
  return *f;
}
bool codegen_failed(const std::string& cxx) {
  FailedCompilers& f = failed_compilers();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.names.contains(cxx);
}
// note_codegen_failure: records cxx as failed, saying why once per compiler.
void note_codegen_failure(const std::string& cxx, std::string_view why) {
  FailedCompilers& f = failed_compilers();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.names.insert(cxx).second) {
    std::cerr << str_cat("[opspec] fused CPU kernels: code generation is off for ", cxx,
                         ", interpreting instead: ", why, "\n");
  }
}

// CpuFusedKernel: a program with its loops selected once, and its generated
// kernel once the codegen policy asks for it (See Note [Generated CPU kernels]).
class CpuFusedKernel final : public FusedKernel {
 public:
  CpuFusedKernel(std::shared_ptr<const FusedProgram> program, std::string_view name)
      : program_(std::move(program)), name_(name), fns_(select_kernels(*program_)), policy_(cpu_fused_codegen()) {
    if (policy_ == CpuFusedCodegen::kAlways) generated_.store(compile_fused_cpu(*program_, name_));
  }
  void run(TensorList inputs, TensorList outputs) const override {
    check_operands(*program_, inputs, outputs);
    FusedTileFn fn = generated_.load(std::memory_order_acquire);
    if (fn == nullptr && policy_ == CpuFusedCodegen::kAuto) fn = tier_up(program_->numel(), program_->numel());
    const std::optional<Walk> walk = permuted_walk(*program_, inputs, outputs);
    const TensorList ins = walk ? TensorList(walk->inputs) : inputs, outs = walk ? TensorList(walk->outputs) : outputs;
    const IntArrayRef shape = walk ? IntArrayRef(walk->shape) : program_->shape();
    if (fn != nullptr) {
      run_generated(*program_, fn, ins, outs, shape);
    } else {
      run_planned(*program_, fns_, ins, outs, shape);
    }
  }
  void run_block(TensorList inputs, TensorList outputs, const MatrixBlock& block, int64_t width) const override {
    check_operands(*program_, inputs, outputs);
    OPSPEC_CHECK(outputs.empty() || outputs[0].is_contiguous(), "FusedKernel::run_block: the outputs (strides ",
                 format_sizes(outputs[0].strides()), ") must be row-major: a block is rows of a row-major matrix");
    const int64_t numel = program_->numel();
    OPSPEC_CHECK(width > 0 && numel % width == 0 && block.row0 >= 0 && block.rows >= 0 && block.col0 >= 0 &&
                     block.cols >= 0 && block.row0 + block.rows <= numel / width && block.col0 + block.cols <= width,
                 "FusedKernel::run_block: rows [", block.row0, ", ", block.row0 + block.rows, ") x columns [",
                 block.col0, ", ", block.col0 + block.cols, ") is not a block of ", numel, " elements in rows of ",
                 width);
    // The blocks of one product are one run for tiering up: counted at its first block.
    FusedTileFn fn = generated_.load(std::memory_order_acquire);
    if (fn == nullptr && policy_ == CpuFusedCodegen::kAuto) {
      fn = tier_up(numel, block.row0 == 0 && block.col0 == 0 ? numel : 0);
    }
    if (fn != nullptr) {
      run_generated(*program_, fn, inputs, outputs, program_->shape(), &block, width);
    } else {
      run_planned(*program_, fns_, inputs, outputs, program_->shape(), &block, width);
    }
  }

 private:
  // tier_up: the generated kernel when this run's `numel` elements reach
  // kCodegenRunElements or the runs so far (`counted` more now)
  // kCodegenTotalElements, else null.
  FusedTileFn tier_up(int64_t numel, int64_t counted) const {
    const int64_t seen = elements_.fetch_add(counted, std::memory_order_relaxed) + counted;
    if ((numel < kCodegenRunElements && seen < kCodegenTotalElements) || gave_up_.load(std::memory_order_relaxed)) {
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (FusedTileFn fn = generated_.load(std::memory_order_acquire)) return fn;
    const std::string cxx = cpu_jit_compiler();
    if (gave_up_.load() || codegen_failed(cxx)) {
      gave_up_.store(true);
      return nullptr;
    }
    try {
      const FusedTileFn fn = compile_fused_cpu(*program_, name_);
      generated_.store(fn, std::memory_order_release);
      return fn;
    } catch (const Error& e) {
      gave_up_.store(true);
      note_codegen_failure(cxx, e.what());
      return nullptr;
    }
  }

  std::shared_ptr<const FusedProgram> program_;
  std::string name_;
  std::vector<FusedLoopFn> fns_;
  CpuFusedCodegen policy_;
  mutable std::atomic<FusedTileFn> generated_{nullptr};
  mutable std::atomic<int64_t> elements_{0};
  mutable std::atomic<bool> gave_up_{false};  // a compile failed: interpret for good
  mutable std::mutex mu_;  // one tier-up at a time
};

std::unique_ptr<FusedKernel> make_cpu_fused_kernel(std::shared_ptr<const FusedProgram> program, std::string_view name) {
  return std::make_unique<CpuFusedKernel>(std::move(program), name);
}

}  // namespace

void run_fused(const FusedProgram& p, TensorList inputs, TensorList outputs) {
  check_operands(p, inputs, outputs);
  const std::optional<Walk> walk = permuted_walk(p, inputs, outputs);
  if (walk) return run_planned(p, select_kernels(p), walk->inputs, walk->outputs, walk->shape);
  run_planned(p, select_kernels(p), inputs, outputs, p.shape());
}

void register_cpu_fused_kernels() { register_fused_kernel_factory(DeviceType::kCPU, &make_cpu_fused_kernel); }

}  // namespace opspec::internal
