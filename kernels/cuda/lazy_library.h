// lazy_library.h: CUDA toolkit libraries opened on first use.
// See Note [Loading CUDA libraries lazily].
#pragma once

#include <string>

namespace opspec::internal::cuda {

// Note [Loading CUDA libraries lazily]
// Linking a toolkit library makes every opspec process (the command, each
// test binary, each --isolate worker) pay for it before main, GPU or not:
// libcublas brought libcublasLt, whose initializers took 0.35 s and 250 MB;
// libnvrtc (109 MB) costs 46 ms of relocations per start. Only libcudart is
// linked. cuBLAS is needed by a product on a CUDA tensor and NVRTC by a fused
// CUDA kernel, so each is dlopened then: from the directory libcudart was
// loaded from (the toolkit's lib folder, which an installed opspec has no
// rpath to), else by its soname. Their few entry points are looked up by name
// into a table of function pointers (cublas_loader.h, nvrtc_loader.h).

// ToolkitLibrary: one dlopened toolkit library; it stays loaded for the life of the process.
class ToolkitLibrary {
 public:
  // ToolkitLibrary: opens soname (e.g. "libnvrtc.so.13"), beside libcudart
  // first. Throws naming the library and the loader's reasons when it cannot.
  explicit ToolkitLibrary(std::string soname);

  // symbol: the address of name, cast to F. Throws when the library lacks it
  // (a library older than the toolkit opspec was built with).
  template <typename F>
  F symbol(const char* name) const {
    return reinterpret_cast<F>(raw_symbol(name));
  }

  // soname: the name it was opened by.
  const std::string& soname() const { return soname_; }

 private:
  void* raw_symbol(const char* name) const;

  std::string soname_;
  void* handle_ = nullptr;
};

}  // namespace opspec::internal::cuda
