// join.cc: CPU kernels of cat and stack, and _local_scalar_dense (item()).
#include <cstring>
#include <type_traits>

#include "kernels/cpu/copy.h"
#include "kernels/common/factory_meta.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

// Bytes copied per OpenMP region before threads are worth starting.
constexpr int64_t kParallelBytes = 1 << 18;

// cat_into: writes inputs one after another along g.dim of a new tensor.
// Contiguous inputs of the result dtype are block copies (one memcpy per
// outer row); the rest go through copy_into on a view of the result, which
// converts dtype and walks any strides.
Tensor cat_into(TensorList inputs, const CatGeometry& g) {
  Tensor out = g.strides.empty() ? make_tensor(g.sizes, g.dtype, kCPU) : make_strided(g.sizes, g.strides, g.dtype, kCPU);
  if (out.numel() == 0) return out;
  const int64_t d = g.dim;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= g.sizes[k];
  for (size_t k = static_cast<size_t>(d) + 1; k < g.sizes.size(); ++k) inner *= g.sizes[k];
  const int64_t item = out.element_size();
  const int64_t out_row_bytes = g.sizes[d] * inner * item;

  struct Block {
    const char* src;
    int64_t row_bytes;  // bytes of one outer row of the input
    int64_t dst_offset;  // byte offset of the input inside one outer row of out
  };
  absl::InlinedVector<Block, 8> blocks;
  int64_t offset = 0;  // position along d
  for (const Tensor& t : inputs) {
    if (is_skipped_in_cat(t)) continue;
    const int64_t len = t.sizes()[d];
    if (t.numel() > 0) {
      if (g.strides.empty() && t.is_contiguous() && t.dtype() == g.dtype) {
        blocks.push_back({static_cast<const char*>(t.raw_data()), len * inner * item, offset * inner * item});
      } else {
        SizeVec sizes(g.sizes.begin(), g.sizes.end());
        sizes[d] = len;
        const Tensor dst = make_view(out, sizes, out.strides(), offset * out.strides()[d]);
        copy_into(dst, t);
      }
    }
    offset += len;
  }
  const int64_t nblocks = static_cast<int64_t>(blocks.size());
  if (nblocks == 0) return out;
  char* dst = static_cast<char*>(out.raw_data());
  const bool parallel = outer * out_row_bytes >= kParallelBytes && outer * nblocks > 1;
  parallel_rows(outer * nblocks, parallel, [&](int64_t task) {
    const int64_t o = task / nblocks;
    const Block& blk = blocks[task % nblocks];
    std::memcpy(dst + o * out_row_bytes + blk.dst_offset, blk.src + o * blk.row_bytes,
                static_cast<size_t>(blk.row_bytes));
  });
  return out;
}

}  // namespace

Tensor cat_cpu(TensorList tensors, int64_t dim) {
  const CatGeometry g = cat_geometry(tensors, dim, "aten::cat");
  return cat_into(tensors, g);
}

Tensor stack_cpu(TensorList tensors, int64_t dim) {
  // stack is cat of the inputs unsqueezed at dim (views, no copies).
  const std::vector<Tensor> inputs = stack_inputs(tensors, dim, "aten::stack");
  return cat_into(inputs, stack_geometry(tensors, inputs, dim));
}

Scalar local_scalar_dense_cpu(const Tensor& self) {
  OPSPEC_CHECK(self.numel() == 1, "aten::_local_scalar_dense: a Tensor with ", self.numel(),
               " elements cannot be converted to Scalar");
  return read_scalar(self);
}

}  // namespace opspec::internal
