#pragma once
// One configuration end to end on the GPU: load its cubin → launch the family's plan on poisoned
// outputs → verify against the CPU reference → warm up → timed samples with L2 flushes →
// verify again. Every failure becomes a status on the outcome, never an exception that ends
// the run; a fault that poisons the context resets it and restores the problem's buffers.
//
// Everything it takes (family, problem, config, cubin) and returns is plain data, so it runs
// behind a worker-process boundary (worker.hpp): after a sticky fault or a hang the driver
// refuses all further work in the process, and only a fresh process recovers.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compile.hpp"
#include "core/status.hpp"
#include "device.hpp"
#include "family.hpp"
#include "measure.hpp"
#include "nvml.hpp"
#include "observations.hpp"

namespace cutune {
class OutputChecker;
}

namespace cutune {

struct Outcome {
  Status status = Status::ok;
  std::optional<Measurement> measurement;  // only when ok
  std::string error;
  std::optional<std::int64_t> error_index;
  double verify_seconds = 0, benchmark_seconds = 0;
  // False when the family has no reference (a spec without [reference] or [expected]): the config
  // ran and was timed, but nothing checked its outputs.
  bool verified = true;
  // Sampling stopped early because the config was clearly behind the best (clearly_behind): its
  // median is of a few samples, never a full measurement.
  bool cut_short = false;
  std::string launch_json;  // the plan in order: per kernel grid, block, shared memory, registers, spills; memsets
                            // (stored_step)
  // Resources and compile warnings once it loaded; clocks and energy once it was measured.
  db::Observations observations;
};

// A problem's host side: its inputs and, where the family's reference runs on the CPU, the
// expected outputs (empty for a GPU reference, computed when the problem is set). Pure CPU work,
// no CUDA: the worker computes the next problem's while the GPU measures the current one.
struct HostProblem {
  Problem problem;
  HostBuffers inputs;
  HostBuffers expected;
};

class GpuEvaluator {
 public:
  GpuEvaluator(Device& device, const Family& family, MeasureOptions options);
  ~GpuEvaluator();
  GpuEvaluator(const GpuEvaluator&) = delete;  // owns device buffers
  GpuEvaluator& operator=(const GpuEvaluator&) = delete;

  // Generates inputs (seeded) and, for CPU references, the expected outputs.
  static HostProblem host_problem(const Family& family, const Problem& problem, std::uint64_t seed);
  // Or with given inputs (tests plant bad indices this way).
  static HostProblem host_problem(const Family& family, const Problem& problem, HostBuffers inputs);

  // Uploads the inputs and expected outputs; a GPU reference plan (compiled here with NVRTC) is run
  // once on the inputs.
  void set_problem(HostProblem host);
  // host_problem, then set_problem.
  void set_problem(const Problem& problem, std::uint64_t seed);
  void set_problem(const Problem& problem, HostBuffers inputs);

  // best_ms: the best median measured so far for this problem, for cutting losers short.
  Outcome evaluate(const Space& space, const Config& config, const Compiled& compiled,
                   std::optional<double> best_ms = std::nullopt);

  // False after a sticky fault or a hang: this process can do no more GPU work.
  bool usable() const { return usable_; }

  // Median device-to-device copy bandwidth in GB/s (bytes read + written).
  static double measure_copy_bandwidth(Device& device);

  struct State;  // device buffers and host copies of the current problem (evaluate.cpp)

 private:
  void compute_expected_on_gpu(State& state, const GpuReference& reference);

  Device& device_;
  const Family& family_;
  MeasureOptions options_;
  std::unique_ptr<State> state_;
  OutputChecker* checker_ = nullptr;  // the process's GPU comparison kernels, once a family has rules
  std::optional<nvml::Gpu> gpu_;      // this device through NVML: clocks and energy; none without NVML
  bool usable_ = true;
};

}  // namespace cutune
