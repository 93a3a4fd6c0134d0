// cache_files.cc: cache keys and atomic file writes for the run-time compilers.
#include "kernels/common/cache_files.h"

#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "runtime/core/error.h"

namespace opspec::internal {

std::string hex_digest128(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

bool read_file(const std::filesystem::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = std::move(ss).str();
  return static_cast<bool>(in) || in.eof();
}

bool write_file_atomically(const std::filesystem::path& path, std::string_view data) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp =
      str_cat(path.string(), ".tmp-", static_cast<int64_t>(getpid()), "-", counter.fetch_add(1));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace opspec::internal
