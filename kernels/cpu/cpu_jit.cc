// cpu_jit.cc: compiling C++ at run time with the system compiler, the
// in-memory and on-disk caches, and loading the results. See Note [Run-time
// CPU compilation].
#include "kernels/cpu/cpu_jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "kernels/common/cache_files.h"
#include "kernels/common/functor_headers.h"
#include "runtime/core/error.h"

extern char** environ;

namespace opspec::internal {
namespace {

namespace fs = std::filesystem;

// Note [Run-time CPU compilation]
// cpu_jit_compile runs the system C++ compiler as
//   <cxx> -std=c++20 -O3 -march=native -ffp-contract=off -fno-math-errno
//         -fno-builtin-pow -fno-builtin-powf -fopenmp-simd -fPIC -shared
//         -fvisibility=hidden -I<headers> ...
// -ffp-contract=off and -fno-math-errno are the library's own flags: an FMA
// formed from a functor's a * b + c would round differently from the eager
// kernels (See Note [Shared elementwise functors]); -march=native because the
// code runs on the machine that compiles it, so it uses the widest vectors
// this CPU has, as the library's wide clones do (See Note [Wide vector
// clones]), without changing any value; -fno-builtin-pow(f) because clang
// otherwise rewrites pow(x, 0.5) as sqrt, whose NaNs differ in sign from
// libm's pow (with it, clang's kernels keep the library's bits too, and
// run the cheap chain ~1.6x faster than GCC's on one thread: OPSPEC_CXX=clang++);
// -fopenmp-simd honours `omp simd`
// without OpenMP's runtime. The compiler is $OPSPEC_CXX, else the one this
// library was built with (OPSPEC_BUILD_CXX) when it still exists, else c++:
// spawned with posix_spawn (no shell, so no quoting), its output captured
// for errors. The cache key hashes the compiler's path and --version, the
// flags, the functor headers, the extra headers and the source. Results are
// cached in memory for the process and on disk as <name>-<key>.so beside
// the source <name>-<key>.cc (kept, so a generated kernel can be read),
// compiled to a temporary name and renamed so concurrent processes never
// load a partial file; an unwritable cache directory only costs a compile in
// a temporary directory. Libraries are never unloaded. Compiles run one at a
// time (a second thread wanting the same kernel waits, then hits the cache).
constexpr const char* kFlags[] = {"-std=c++20",        "-O3",
                                  "-march=native",     "-ffp-contract=off",
                                  "-fno-math-errno",   "-fno-builtin-pow",
                                  "-fno-builtin-powf", "-fopenmp-simd",
                                  "-fPIC",             "-shared",
                                  "-fvisibility=hidden"};

#ifndef OPSPEC_BUILD_CXX
#define OPSPEC_BUILD_CXX ""
#endif

struct Cache {
  std::mutex mu;  // guards libraries
  absl::flat_hash_map<std::string, std::shared_ptr<const CpuJitLibrary>> libraries;
  std::mutex compile_mu;  // one compile at a time
  absl::flat_hash_map<std::string, std::string> compiler_ids;  // guarded by compile_mu
  std::atomic<int64_t> memory_hits{0}, disk_hits{0}, compiles{0};
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may run during static destruction
  return *c;
}

// kNul: the separator of hashed fields.
constexpr std::string_view kNul("\0", 1);

// read_text: path's bytes, empty when it cannot be read.
std::string read_text(const fs::path& path) {
  std::string text;
  return read_file(path, &text) ? text : std::string();
}

// run_command: runs argv (no shell) with stdout and stderr into log; returns
// its exit status, or -1 with *error set when it could not start.
int run_command(const std::vector<std::string>& argv, const fs::path& log, std::string* error) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *error = str_cat("cannot run '", argv[0], "': ", std::strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *error = str_cat("waiting for '", argv[0], "' failed: ", std::strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  *error = str_cat("'", argv[0], "' was killed by signal ", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

// TempDir: a fresh private directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = str_cat(base != nullptr && *base != '\0' ? base : "/tmp", "/opspec-cpu-jit-XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// compiler_id: the first line of `cxx --version` (cached per command; called
// under compile_mu). Throws when the compiler does not run.
const std::string& compiler_id(const std::string& cxx) {
  Cache& c = cache();
  if (auto it = c.compiler_ids.find(cxx); it != c.compiler_ids.end()) return it->second;
  TempDir tmp;
  OPSPEC_CHECK(!tmp.path().empty(), "cpu_jit: cannot create a temporary directory: ", std::strerror(errno));
  std::string error;
  const int status = run_command({cxx, "--version"}, tmp.path() / "version.txt", &error);
  OPSPEC_CHECK(status == 0, "cpu_jit: the C++ compiler '", cxx, "' does not run (",
               error.empty() ? str_cat("exit status ", status) : error, "); set OPSPEC_CXX to a C++20 compiler");
  std::string id = read_text(tmp.path() / "version.txt");
  id = id.substr(0, id.find('\n'));
  return c.compiler_ids.emplace(cxx, str_cat(cxx, " (", id, ")")).first->second;
}

// file_stem: name's file-name part (an identifier, at most 64 characters).
std::string file_stem(std::string_view name) { return cpu_jit_identifier(name).substr(0, 64); }

// load: dlopen path; nullptr with *error set on failure.
void* load(const fs::path& path, std::string* error) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) *error = dlerror();
  return handle;
}

std::shared_ptr<CpuJitLibrary> make_library(std::string_view name, const std::string& key, void* handle,
                                            std::string log) {
  auto lib = std::make_shared<CpuJitLibrary>();
  lib->name = std::string(name);
  lib->key = key;
  lib->log = std::move(log);
  lib->handle = handle;
  return lib;
}

// compile_into: writes headers and source under dir, compiles <stem>.so
// there and loads it; null when dir cannot be written. Throws with the
// compiler's output when it fails.
std::shared_ptr<CpuJitLibrary> compile_into(const fs::path& dir, std::string_view name, const std::string& key,
                                            std::string_view source, const std::vector<CpuJitHeader>& headers,
                                            const std::string& headers_key, const std::string& cxx) {
  const std::string stem = str_cat(file_stem(name), "-", key);
  const fs::path include = dir / str_cat("include-", headers_key);
  bool wrote = true;
  auto write_header = [&](const CpuJitHeader& h) {
    const fs::path path = include / h.first;
    std::error_code ec;
    if (fs::exists(path, ec) && read_text(path) == h.second) return;
    wrote = wrote && write_file_atomically(path, h.second);
  };
  for (const CpuJitHeader& h : functor_headers()) write_header(h);
  for (const CpuJitHeader& h : headers) write_header(h);
  const fs::path src = dir / str_cat(stem, ".cc"), so = dir / str_cat(stem, ".so");
  if (!wrote || !write_file_atomically(src, source)) return nullptr;
  static std::atomic<uint64_t> counter{0};
  const fs::path tmp_so = str_cat(so.string(), ".tmp-", static_cast<int64_t>(getpid()), "-", counter.fetch_add(1));
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), std::begin(kFlags), std::end(kFlags));
  argv.insert(argv.end(), {str_cat("-I", include.string()), "-o", tmp_so.string(), src.string()});
  const fs::path log_path = dir / str_cat(stem, ".log.tmp-", static_cast<int64_t>(getpid()), "-", counter.fetch_add(1));
  std::string error;
  const int status = run_command(argv, log_path, &error);
  std::string log = read_text(log_path);
  std::error_code ec;
  fs::remove(log_path, ec);
  if (status != 0) {
    fs::remove(tmp_so, ec);
    constexpr size_t kMaxLog = 8000;
    if (log.size() > kMaxLog) log = str_cat(log.substr(0, kMaxLog), "\n[... ", log.size() - kMaxLog, " more bytes]");
    OPSPEC_FAIL("cpu_jit: compiling kernel ", name, " failed (", error.empty() ? str_cat("exit status ", status) : error,
                "); command: ", absl::StrJoin(argv, " "), "\n", log);
  }
  fs::rename(tmp_so, so, ec);
  OPSPEC_CHECK(!ec, "cpu_jit: cannot rename ", tmp_so.string(), " to ", so.string(), ": ", ec.message());
  std::string load_error;
  void* handle = load(so, &load_error);
  OPSPEC_CHECK(handle != nullptr, "cpu_jit: loading kernel ", name, " from ", so.string(), " failed: ", load_error);
  return make_library(name, key, handle, std::move(log));
}

}  // namespace

void* CpuJitLibrary::symbol(std::string_view symbol) const {
  const std::string s(symbol);
  void* p = dlsym(handle, s.c_str());
  OPSPEC_CHECK(p != nullptr, "cpu_jit: kernel ", name, " defines no symbol '", symbol, "'");
  return p;
}

std::string cpu_jit_identifier(std::string_view name) {
  std::string out(name.empty() ? "kernel" : name);
  for (char& ch : out) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) ch = '_';
  }
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out = str_cat("k", out);
  return out;
}

std::string cpu_jit_compiler() {
  if (const char* cxx = std::getenv("OPSPEC_CXX"); cxx != nullptr && *cxx != '\0') return cxx;
  std::error_code ec;
  if (std::string_view(OPSPEC_BUILD_CXX).size() > 0 && fs::exists(OPSPEC_BUILD_CXX, ec)) return OPSPEC_BUILD_CXX;
  return "c++";
}

const std::vector<std::string>& cpu_jit_flags() {
  static const auto* flags = new std::vector<std::string>(std::begin(kFlags), std::end(kFlags));
  return *flags;
}

bool cpu_jit_available(std::string* why) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.compile_mu);
  try {
    compiler_id(cpu_jit_compiler());
    return true;
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

std::string cpu_jit_cache_dir() {
  if (const char* dir = std::getenv("OPSPEC_CPU_CACHE_DIR")) {
    const std::string_view d = dir;
    return d.empty() || d == "off" ? std::string() : std::string(d);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return str_cat(xdg, "/opspec/cpu");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return str_cat(home, "/.cache/opspec/cpu");
  return {};
}

std::shared_ptr<const CpuJitLibrary> cpu_jit_compile(std::string_view name, std::string_view source,
                                                     const std::vector<CpuJitHeader>& headers) {
  Cache& c = cache();
  const std::string cxx = cpu_jit_compiler();
  std::lock_guard<std::mutex> compile_lock(c.compile_mu);
  // The key: compiler, flags, headers, source (See Note [Run-time CPU compilation]).
  std::string headers_text = functor_headers_digest();
  for (const auto& [path, text] : headers) str_append(&headers_text, kNul, path, kNul, text);
  const std::string headers_key = hex_digest128(headers_text);
  const std::string key_text = str_cat(compiler_id(cxx), kNul, absl::StrJoin(cpu_jit_flags(), " "), kNul, headers_key,
                                       kNul, file_stem(name), kNul, source);
  const std::string key = hex_digest128(key_text);
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.libraries.find(key); it != c.libraries.end()) {
      c.memory_hits.fetch_add(1);
      return it->second;
    }
  }
  std::shared_ptr<CpuJitLibrary> lib;
  const std::string dir = cpu_jit_cache_dir();
  if (!dir.empty()) {
    const fs::path so = fs::path(dir) / str_cat(file_stem(name), "-", key, ".so");
    std::error_code ec;
    std::string load_error;
    if (fs::exists(so, ec)) {
      if (void* handle = load(so, &load_error)) {
        lib = make_library(name, key, handle, "");
        c.disk_hits.fetch_add(1);
      }
    }
    if (lib == nullptr) {
      lib = compile_into(dir, name, key, source, headers, headers_key, cxx);
      if (lib != nullptr) c.compiles.fetch_add(1);
    }
  }
  if (lib == nullptr) {  // no disk cache, or it cannot be written: a private directory, removed after loading
    TempDir tmp;
    OPSPEC_CHECK(!tmp.path().empty(), "cpu_jit: cannot create a temporary directory for kernel ", name, ": ",
                 std::strerror(errno));
    lib = compile_into(tmp.path(), name, key, source, headers, headers_key, cxx);
    OPSPEC_CHECK(lib != nullptr, "cpu_jit: cannot write kernel ", name, "'s source under ", tmp.path().string());
    c.compiles.fetch_add(1);
  }
  std::lock_guard<std::mutex> lock(c.mu);
  return c.libraries.try_emplace(key, std::move(lib)).first->second;
}

CpuJitStats cpu_jit_stats() {
  const Cache& c = cache();
  return {c.memory_hits.load(), c.disk_hits.load(), c.compiles.load()};
}

void cpu_jit_reset_memory_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.libraries.clear();
  c.memory_hits = 0;
  c.disk_hits = 0;
  c.compiles = 0;
}

}  // namespace opspec::internal
