// cache_files.h: what the run-time compilers' disk caches (kernels/cuda/nvrtc.cc,
// kernels/cpu/cpu_jit.cc) need: 128-bit hex keys and files written whole or
// not at all, so concurrent processes never read a partial entry.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace opspec::internal {

// hex_digest128: XXH3-128 of bytes as 32 hex digits (a cache key).
std::string hex_digest128(std::string_view bytes);

// read_file: *out = path's bytes; false when it cannot be read.
bool read_file(const std::filesystem::path& path, std::string* out);

// write_file_atomically: path gets data or stays as it was (a temporary file
// beside it, renamed over it; parent directories created); false when it
// could not be written.
bool write_file_atomically(const std::filesystem::path& path, std::string_view data);

}  // namespace opspec::internal
