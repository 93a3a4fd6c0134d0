// bench.cc: run_bench and its table, JSON and baseline check. See Note [opspec bench].
#include "harness/spec/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include <unistd.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/debug_mode.h"
#include "harness/expect/equivalence.h"
#include "harness/spec/case_inputs.h"
#include "nlohmann/json.hpp"
#include "runtime/compile/compile.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/grad_mode.h"

namespace opspec::spec {
namespace {

using Clock = std::chrono::steady_clock;
using Call = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// quantile: the q-quantile of sorted values, linearly interpolated.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// variant_label: "x=[1024], y=[8, 8]" for the inputs a variant sizes.
std::string variant_label(const std::vector<InputSpec>& inputs) {
  std::vector<std::string> parts;
  for (const InputSpec& in : inputs) parts.push_back(str_cat(in.name, "=", format_sizes(in.shape)));
  return absl::StrJoin(parts, ", ");
}

// peak_bytes: the allocator's high-water mark over one call on device (cpu or
// cuda), above what was in use before it.
int64_t peak_bytes(const Call& call, const std::vector<Tensor>& inputs, Device device) {
  Allocator* a = get_allocator(device.type);
  a->reset_peak_stats();
  const int64_t before = a->stats().bytes_in_use;
  call(inputs);
  return std::max<int64_t>(0, a->stats().peak_bytes - before);
}

// first_lines: the first n lines of s.
std::string first_lines(const std::string& s, int n) {
  size_t at = 0;
  for (int i = 0; i < n && at != std::string::npos; ++i) at = s.find('\n', at + 1);
  return at == std::string::npos ? s : s.substr(0, at) + "\n  ...";
}

// on_host: whether device's ops run on the host (cpu, and meta's shape functions).
bool on_host(Device device) { return device.is_cpu() || device.is_meta(); }

// synced: call, then a wait for device's queued work (cuda), so a host clock
// around it sees the device's time too, not the launch alone.
Call synced(Call call, Device device) {
  if (on_host(device)) return call;
  return [call = std::move(call), device](const std::vector<Tensor>& in) {
    std::vector<Tensor> out = call(in);
    get_device_hooks(device.type).synchronize(device);
    return out;
  };
}

BenchVariant run_variant(const CaseSpec& c, const CaseFunction& fn, Device device,
                         const std::vector<InputSpec>& overrides, const std::vector<std::string>& backends,
                         double min_time, int repetitions, std::mt19937& rng, std::vector<std::string>* warnings) {
  BenchVariant v;
  v.label = overrides.empty() ? "" : variant_label(overrides);
  const std::vector<Tensor> inputs = fn.make_inputs(overrides);
  // On a device with timing events (cuda), rounds are timed by a pair of
  // events around their calls, with no wait between calls.
  std::unique_ptr<DeviceEventTimer> timer =
      on_host(device) ? nullptr : get_device_hooks(device.type).make_event_timer(device);
  v.device_time = timer != nullptr;
  std::vector<Call> calls;  // unsynced: rounds sync once (events) or per call (host clock)
  std::vector<std::shared_ptr<CompiledFunction>> compiled;
  v.timings.push_back({.target = "eager"});
  calls.push_back(fn.fn);
  for (const std::string& backend : backends) {
    BenchTiming t{.target = str_cat("compile:", backend)};
    CompileOptions options{.backend = backend, .name = c.name};
    options.input_names = fn.input_names;
    EquivalenceOptions eo;
    eo.compile = options;
    EquivalenceResult eq = check_eager_compiled_equivalent(fn.fn, inputs, eo);
    if (!eq.result.ok) {
      t.refused = true;
      t.refusal = first_lines(eq.result.message, 6);
      v.timings.push_back(std::move(t));
      calls.push_back(nullptr);
      continue;
    }
    auto cf = std::make_shared<CompiledFunction>(fn.fn, options);
    const Clock::time_point cold = Clock::now();
    synced([cf](const std::vector<Tensor>& in) { return (*cf)(in); }, device)(inputs);
    t.compile_s = seconds_since(cold);
    // Graphs and breaks of one call, the cold one (the DebugMode call below is a second).
    const CompileCounters once = cf->counters();
    t.graphs = once.graphs_run;
    t.graph_breaks = once.breaks;
    DebugMode dm;
    {
      auto scope = dm.enter();
      (*cf)(inputs);
    }
    for (const DebugCall& e : dm.logs()) t.fused_kernels += e.kind == DebugCall::Kind::kKernel && e.kernel_prefix == "fused";
    v.timings.push_back(std::move(t));
    calls.push_back([cf](const std::vector<Tensor>& in) { return (*cf)(in); });
    compiled.push_back(cf);
  }
  // Warm every target once, then time them round by round in shuffled order.
  const size_t n = calls.size();
  for (size_t k = 0; k < n; ++k) {
    if (calls[k]) v.timings[k].peak_bytes = peak_bytes(synced(calls[k], device), inputs, device);
  }
  if (!timer) {
    for (Call& call : calls) {
      if (call) call = synced(std::move(call), device);
    }
  }
  std::vector<std::vector<double>> means(n);
  const double budget = min_time / std::max(1, repetitions);
  std::vector<size_t> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = k;
  for (int r = 0; r < repetitions; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (const size_t k : order) {
      if (!calls[k]) continue;
      int64_t count = 0;
      if (timer) timer->start();
      const Clock::time_point start = Clock::now();
      double elapsed = 0;
      do {
        calls[k](inputs);
        ++count;
        elapsed = seconds_since(start);
      } while (elapsed < budget);
      if (timer) {
        // The host stops at the budget; the device's queue (bounded) drains into the stop event.
        timer->stop();
        elapsed = timer->elapsed_s();
      }
      means[k].push_back(elapsed / static_cast<double>(count));
      v.timings[k].calls += count;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (!calls[k]) continue;
    std::sort(means[k].begin(), means[k].end());
    BenchTiming& t = v.timings[k];
    t.median_s = quantile(means[k], 0.5);
    t.iqr_s = quantile(means[k], 0.75) - quantile(means[k], 0.25);
    if (repetitions >= 3 && t.median_s > 0 && t.iqr_s / t.median_s > 0.10) {
      warnings->push_back(absl::StrFormat("%s%s %s: spread (IQR) %.0f%% of the median: noisy", c.name,
                                          v.label.empty() ? "" : str_cat(" [", v.label, "]"), t.target,
                                          100 * t.iqr_s / t.median_s));
    }
  }
  return v;
}

// scaling_warning: a warning when the CPU's frequency governor may change
// clock speeds under the timings (as Google Benchmark warns).
std::optional<std::string> scaling_warning() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  std::string governor;
  if (!(in >> governor) || governor == "performance") return std::nullopt;
  return str_cat("CPU frequency scaling is on (governor '", governor, "'): timings may move with the clock");
}

// load_warning: a warning when the machine looks busy (load average above its cores).
std::optional<std::string> load_warning() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (!(in >> load)) return std::nullopt;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (load <= static_cast<double>(cores)) return std::nullopt;
  return absl::StrFormat("load average %.2f on %u cores: other work competes with the timings", load, cores);
}

std::string format_time(double s) {
  if (s >= 1) return absl::StrFormat("%.2f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.2f ms", s * 1e3);
  if (s >= 1e-6) return absl::StrFormat("%.1f us", s * 1e6);
  return absl::StrFormat("%.0f ns", s * 1e9);
}

std::string entry_name(const BenchResult& r, const BenchVariant& v, const BenchTiming& t) {
  return str_cat(r.id, v.label.empty() ? "" : str_cat("/", v.label), "/", t.target);
}

}  // namespace

BenchResult run_bench(const CaseRef& ref, const BenchOptions& options) {
  const CaseSpec& c = *ref.spec;
  BenchResult r;
  r.id = ref.id();
  r.file = c.where.file;
  r.line = c.where.line;
  if (c.load_error || c.spec_error) {
    r.error = c.spec_error ? *c.spec_error : *c.load_error;
    return r;
  }
  OPSPEC_CHECK(c.bench.has_value(), "run_bench: case '", c.name, "' has no bench section");
  r.repetitions = options.repetitions;
  // As `opspec run` skips it: a CUDA case on a machine without a GPU is not an error.
  if (std::optional<std::string> why = skip_reason(ref)) {
    r.skipped = *std::move(why);
    return r;
  }
  const double min_time = c.bench->min_time.value_or(options.min_time);
  if (options.repetitions < 1 || options.repetitions > kMaxBenchRepetitions) {
    r.error = str_cat("repetitions must be at ", options.repetitions < 1 ? "least 1" : str_cat("most ", kMaxBenchRepetitions),
                      ", got ", options.repetitions);
    return r;
  }
  if (!(min_time > 0) || min_time > kMaxBenchMinTime) {  // !(x > 0): nan too
    r.error = str_cat("min_time must be a number of seconds above 0 and at most ", kMaxBenchMinTime, ", got ", min_time);
    return r;
  }
  if (auto w = load_warning()) r.warnings.push_back(*w);
  if (auto w = scaling_warning()) r.warnings.push_back(*w);
  try {
    std::optional<autograd::NoGradGuard> no_grad;  // as run_case: around the calls, not inside them
    if (c.no_grad) no_grad.emplace();
    const CaseFunction fn = make_case_function(c, ref.device);
    const Device device = Device::parse(ref.device);  // the case's: a program may make its tensors itself
    const std::vector<std::string>& backends = c.bench->backends.empty() ? options.backends : c.bench->backends;
    std::mt19937 rng(static_cast<uint32_t>(options.shuffle_seed));
    if (c.bench->variants.empty()) {
      r.variants.push_back(run_variant(c, fn, device, {}, backends, min_time, options.repetitions, rng, &r.warnings));
    }
    for (const std::vector<InputSpec>& variant : c.bench->variants) {
      // Label by the inputs the variant sizes differently from the case's own.
      std::vector<InputSpec> changed;
      for (const InputSpec& in : variant) {
        auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const InputSpec& b) { return b.name == in.name; });
        if (it == c.inputs.end() || it->shape != in.shape) changed.push_back(in);
      }
      // One size that fails (a shape the program rejects) is that size's
      // error; the other sizes' timings stay.
      BenchVariant v;
      try {
        v = run_variant(c, fn, device, variant, backends, min_time, options.repetitions, rng, &r.warnings);
      } catch (const std::exception& e) {
        v.error = e.what();
      }
      v.label = variant_label(changed.empty() ? variant : changed);
      r.variants.push_back(std::move(v));
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::string bench_table(const std::vector<BenchResult>& results, bool color) {
  std::vector<std::string> targets;  // columns, in first-seen order
  for (const BenchResult& r : results) {
    for (const BenchVariant& v : r.variants) {
      for (const BenchTiming& t : v.timings) {
        if (std::find(targets.begin(), targets.end(), t.target) == targets.end()) targets.push_back(t.target);
      }
    }
  }
  std::vector<std::vector<std::string>> rows = {{"case"}};
  std::vector<std::vector<int>> tints = {{0}};  // 0 plain, 1 faster, 2 slower
  for (const std::string& t : targets) rows[0].push_back(t), tints[0].push_back(0);
  for (const BenchResult& r : results) {
    if (!r.error.empty()) {
      rows.push_back({r.id, str_cat("error: ", r.error.substr(0, r.error.find('\n')))});
      tints.push_back({0, 2});
      continue;
    }
    if (!r.skipped.empty()) {
      rows.push_back({r.id, str_cat("skipped: ", r.skipped)});
      tints.push_back({0, 0});
      continue;
    }
    for (const BenchVariant& v : r.variants) {
      std::vector<std::string> row = {str_cat(r.id, v.label.empty() ? "" : str_cat(" [", v.label, "]"))};
      std::vector<int> tint = {0};
      if (!v.error.empty()) {
        rows.push_back({row[0], str_cat("error: ", v.error.substr(0, v.error.find('\n')))});
        tints.push_back({0, 2});
        continue;
      }
      const BenchTiming* eager = v.timings.empty() ? nullptr : &v.timings[0];
      for (const std::string& target : targets) {
        auto it = std::find_if(v.timings.begin(), v.timings.end(), [&](const BenchTiming& t) { return t.target == target; });
        if (it == v.timings.end()) {
          row.push_back("");
          tint.push_back(0);
        } else if (it->refused) {
          row.push_back("refused: differs from eager");
          tint.push_back(2);
        } else {
          std::string cell = format_time(it->median_s);
          if (it->median_s > 0) str_append(&cell, absl::StrFormat(" ±%.0f%%", 100 * it->iqr_s / it->median_s));
          int t = 0;
          if (&*it != eager && eager != nullptr && it->median_s > 0) {
            const double speedup = eager->median_s / it->median_s;
            str_append(&cell, absl::StrFormat(" (%.2fx, compile %s, %d graph%s, %d break%s)", speedup,
                                              format_time(it->compile_s), it->graphs, it->graphs == 1 ? "" : "s",
                                              it->graph_breaks, it->graph_breaks == 1 ? "" : "s"));
            t = speedup >= 1.05 ? 1 : speedup <= 0.95 ? 2 : 0;
          }
          row.push_back(cell);
          tint.push_back(t);
        }
      }
      rows.push_back(std::move(row));
      tints.push_back(std::move(tint));
    }
  }
  // As wide as the widest row: an error row has two cells where nothing was
  // timed and the header has one (reading past width[] crashed the table).
  size_t columns = 0;
  for (const auto& row : rows) columns = std::max(columns, row.size());
  std::vector<size_t> width(columns, 0);
  for (const auto& row : rows) {
    for (size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t k = 0; k < rows[i].size(); ++k) {
      const std::string cell = rows[i][k] + std::string(width[k] > rows[i][k].size() ? width[k] - rows[i][k].size() : 0, ' ');
      const int t = k < tints[i].size() ? tints[i][k] : 0;
      str_append(&out, k ? "  " : "", color && t == 1 ? "\x1b[32m" : color && t == 2 ? "\x1b[31m" : "", cell,
                 color && t != 0 ? "\x1b[0m" : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  bool device_time = false;
  for (const BenchResult& r : results) {
    for (const BenchVariant& v : r.variants) {
      device_time |= v.device_time;
      for (const BenchTiming& t : v.timings) {
        if (t.refused) str_append(&out, "\n", entry_name(r, v, t), " was not timed: its result differs from eager's:\n  ",
                                  t.refusal, "\n");
      }
    }
  }
  if (device_time) out += "\ncases on cuda: time per call on the device, between CUDA events; compile time on the host\n";
  return out;
}

std::string bench_json(const std::vector<BenchResult>& results) {
  nlohmann::json benchmarks = nlohmann::json::array();
  // What could not be timed is an entry too, as Google Benchmark writes a
  // benchmark that called SkipWithError ("error_occurred").
  auto error_entry = [&](const std::string& name, const std::string& message) {
    nlohmann::json b;
    b["name"] = b["run_name"] = name;
    b["run_type"] = "iteration";
    b["error_occurred"] = true;
    b["error_message"] = message;
    benchmarks.push_back(std::move(b));
  };
  for (const BenchResult& r : results) {
    if (!r.error.empty()) error_entry(r.id, r.error);
    for (const BenchVariant& v : r.variants) {
      if (!v.error.empty()) error_entry(str_cat(r.id, v.label.empty() ? "" : str_cat("/", v.label)), v.error);
      const BenchTiming* eager = v.timings.empty() ? nullptr : &v.timings[0];
      for (const BenchTiming& t : v.timings) {
        if (t.refused) {
          error_entry(entry_name(r, v, t), str_cat("not timed: its result differs from eager's: ", t.refusal));
          continue;
        }
        nlohmann::json b;
        b["name"] = b["run_name"] = entry_name(r, v, t);
        b["run_type"] = "iteration";
        b["repetitions"] = r.repetitions;
        b["iterations"] = t.calls;
        b["real_time"] = b["cpu_time"] = t.median_s * 1e9;
        b["time_unit"] = "ns";
        b["timer"] = v.device_time ? "device_events" : "host";
        b["iqr_ns"] = t.iqr_s * 1e9;
        b["peak_bytes"] = t.peak_bytes;
        if (&t != eager) {
          b["speedup"] = eager != nullptr && t.median_s > 0 ? eager->median_s / t.median_s : 0.0;
          b["compile_time_ms"] = t.compile_s * 1e3;
          b["graphs"] = t.graphs;
          b["graph_breaks"] = t.graph_breaks;
          b["fused_kernels"] = t.fused_kernels;
        }
        benchmarks.push_back(std::move(b));
      }
    }
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  nlohmann::json doc;
  doc["context"] = {{"executable", "opspec bench"},
                    {"host_name", host},
                    {"num_cpus", std::thread::hardware_concurrency()},
                    {"library_build_type", "opspec"}};
  doc["benchmarks"] = std::move(benchmarks);
  return doc.dump(2) + "\n";
}

absl::StatusOr<BaselineComparison> find_regressions(const std::vector<BenchResult>& results,
                                                    const std::string& baseline_json, double max_regression) {
  std::map<std::string, double> baseline;
  try {
    const nlohmann::json doc = nlohmann::json::parse(baseline_json);
    for (const nlohmann::json& b : doc.at("benchmarks")) {
      if (b.value("run_type", "iteration") != "iteration" || b.value("error_occurred", false)) continue;
      double ns = b.at("real_time").get<double>();
      const std::string unit = b.value("time_unit", "ns");
      ns *= unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "us" ? 1e3 : 1;
      baseline[b.at("name").get<std::string>()] = ns;
    }
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(str_cat("the baseline is not benchmark JSON: ", e.what()));
  }
  BaselineComparison out;
  size_t matched = 0;
  for (const BenchResult& r : results) {
    for (const BenchVariant& v : r.variants) {
      for (const BenchTiming& t : v.timings) {
        if (t.refused) continue;
        const auto it = baseline.find(entry_name(r, v, t));
        if (it == baseline.end()) {
          ++out.new_timings;
          continue;
        }
        ++out.compared;
        ++matched;
        const double now = t.median_s * 1e9;
        if (now > it->second * (1 + max_regression)) out.regressions.push_back({it->first, it->second, now});
      }
    }
  }
  out.baseline_only = static_cast<int>(baseline.size() - std::min(matched, baseline.size()));
  return out;
}

}  // namespace opspec::spec
