#include "kernels/common/linalg_meta.h"

#include "kernels/common/reduce_meta.h"

namespace opspec::internal {

namespace {

// check_rank: "aten::mm: self must be a matrix, got a 3-D tensor of shape [2, 3, 4]".
void check_rank(const Tensor& t, int64_t rank, std::string_view op, std::string_view name) {
  if (t.dim() == rank) return;
  const std::string_view what = rank == 1 ? "a 1-D tensor" : rank == 2 ? "a matrix" : "a 3-D tensor";
  OPSPEC_FAIL(op, ": ", name, " must be ", what, ", got a ", t.dim(), "-D tensor of shape ", format_sizes(t.sizes()));
}

// check_operands: same device, same dtype, and a dtype the products support (not bool).
void check_operands(const Tensor& a, const Tensor& b, std::string_view op, std::string_view a_name,
                    std::string_view b_name) {
  const Tensor both[] = {a, b};
  check_same_device(both, op);
  OPSPEC_CHECK(a.dtype() == b.dtype(), op, ": expected ", a_name, " and ", b_name,
               " to have the same dtype, but got ", dtype_short_name(a.dtype()), " != ", dtype_short_name(b.dtype()));
  OPSPEC_CHECK(a.dtype() != DType::kBool, op, ": \"addmm_impl_cpu_\" not implemented for '",
               scalar_type_name(a.dtype()), "'");
}

}  // namespace

SizeVec mm_shape(const Tensor& self, const Tensor& mat2, std::string_view op, std::string_view self_name,
                 std::string_view mat2_name) {
  check_rank(self, 2, op, self_name);
  check_rank(mat2, 2, op, mat2_name);
  check_operands(self, mat2, op, self_name, mat2_name);
  // PyTorch's words, whatever the operands are called in the schema.
  OPSPEC_CHECK(mat2.sizes()[0] == self.sizes()[1], op, ": mat1 and mat2 shapes cannot be multiplied (",
               self.sizes()[0], "x", self.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  return SizeVec{self.sizes()[0], mat2.sizes()[1]};
}

SizeVec bmm_shape(const Tensor& self, const Tensor& mat2) {
  constexpr std::string_view kOp = "aten::bmm";
  check_rank(self, 3, kOp, "self");
  check_rank(mat2, 3, kOp, "mat2");
  check_operands(self, mat2, kOp, "self", "mat2");
  OPSPEC_CHECK(mat2.sizes()[0] == self.sizes()[0], kOp, ": mat2 has shape ", format_sizes(mat2.sizes()),
               "; expected batch size ", self.sizes()[0], " to match self ", format_sizes(self.sizes()));
  OPSPEC_CHECK(mat2.sizes()[1] == self.sizes()[2], kOp, ": mat2 has shape ", format_sizes(mat2.sizes()),
               "; expected ", self.sizes()[2], " rows to match self ", format_sizes(self.sizes()));
  return SizeVec{self.sizes()[0], self.sizes()[1], mat2.sizes()[2]};
}

SizeVec addmm_shape(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  constexpr std::string_view kOp = "aten::addmm";
  SizeVec out = mm_shape(mat1, mat2, kOp, "mat1", "mat2");
  const Tensor all[] = {self, mat1};
  check_same_device(all, kOp);
  OPSPEC_CHECK(self.dtype() == mat1.dtype(), kOp, ": expected self and mat1 to have the same dtype, but got ",
               dtype_short_name(self.dtype()), " != ", dtype_short_name(mat1.dtype()));
  bool ok = self.dim() <= 2;
  for (int64_t i = 0; ok && i < self.dim(); ++i) {
    const int64_t s = self.sizes()[self.dim() - 1 - i];
    ok = s == 1 || s == out[1 - i];
  }
  OPSPEC_CHECK(ok, kOp, ": self has shape ", format_sizes(self.sizes()), "; expected it to broadcast to ",
               format_sizes(out));
  return out;
}

SizeVec dot_shape(const Tensor& self, const Tensor& tensor) {
  constexpr std::string_view kOp = "aten::dot";
  check_rank(self, 1, kOp, "self");
  check_rank(tensor, 1, kOp, "tensor");
  check_operands(self, tensor, kOp, "self", "tensor");
  OPSPEC_CHECK(self.numel() == tensor.numel(), kOp, ": tensor has shape ", format_sizes(tensor.sizes()),
               "; expected ", self.numel(), " elements to match self ", format_sizes(self.sizes()));
  return SizeVec{};
}

SizeVec mv_shape(const Tensor& self, const Tensor& vec) {
  constexpr std::string_view kOp = "aten::mv";
  check_rank(self, 2, kOp, "self");
  check_rank(vec, 1, kOp, "vec");
  check_operands(self, vec, kOp, "self", "vec");
  OPSPEC_CHECK(vec.sizes()[0] == self.sizes()[1], kOp, ": vec has shape ", format_sizes(vec.sizes()), "; expected ",
               self.sizes()[1], " elements to match self ", format_sizes(self.sizes()));
  return SizeVec{self.sizes()[0]};
}

Tensor mm_meta(const Tensor& self, const Tensor& mat2) {
  return make_tensor(mm_shape(self, mat2, "aten::mm"), self.dtype(), kMeta);
}

Tensor bmm_meta(const Tensor& self, const Tensor& mat2) { return make_tensor(bmm_shape(self, mat2), self.dtype(), kMeta); }

Tensor addmm_meta(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  return make_tensor(addmm_shape(self, mat1, mat2), mat1.dtype(), kMeta);
}

Tensor dot_meta(const Tensor& self, const Tensor& tensor) {
  return make_tensor(dot_shape(self, tensor), self.dtype(), kMeta);
}

Tensor mv_meta(const Tensor& self, const Tensor& vec) { return make_tensor(mv_shape(self, vec), self.dtype(), kMeta); }

}  // namespace opspec::internal
