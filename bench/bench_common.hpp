#pragma once
// Shared by the bench programs: time a baseline with the tuner's own sample loop (SampleTimer:
// warm-up, L2 flush before every sample, CUDA events, the stopping rule of measure.hpp), and run a
// stored config through the engine's evaluator (which also verifies it).
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>

#include "bench_args.hpp"
#include "device.hpp"
#include "evaluate.hpp"
#include "family.hpp"
#include "measure.hpp"
#include "store.hpp"

namespace cutune::bench {

#define CUTUNE_CUDART(call)                                                                                          \
  do {                                                                                                               \
    const cudaError_t bench_error_ = (call);                                                                         \
    if (bench_error_ != cudaSuccess)                                                                                 \
      throw ::cutune::Error(std::string(#call) + ": " + cudaGetErrorString(bench_error_) + " at " + __FILE__ + ":" + \
                            std::to_string(__LINE__));                                                               \
  } while (0)

// The seed of the inputs a stored config is re-measured on, so baselines get the same data.
constexpr std::uint64_t kInputSeed = 0x5eedULL;

// Runs `body` and turns an exception into one line on stderr and exit status 1.
int bench_main(const char* program, const std::function<void()>& body);

// The build tree's commit, "+dirty" when it had uncommitted changes (cmake/git_commit.cmake).
std::string bench_git_commit();

// A cudaMalloc'ed buffer, zeroed or filled from the host.
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes);
  DeviceBytes(const std::vector<std::byte>& host);
  ~DeviceBytes() { cudaFree(pointer_); }
  DeviceBytes(const DeviceBytes&) = delete;  // owns the allocation
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return pointer_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }
  std::size_t bytes() const { return bytes_; }
  std::vector<std::byte> download() const;

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

// The problem's inputs as a stored config is re-measured on (same generator, kInputSeed), for a
// baseline to run on.
HostBuffers bench_inputs(const Family& family, const Problem& problem);

// Downloads a baseline's output (`bytes` at `device_output`) and checks it like a tuned config's:
// a comparison means nothing if the baseline computes something else. Outputs the family checks
// that the baseline has no counterpart of (scan's bad-input index: CUB validates nothing, and the
// bench's inputs are valid) are taken from the reference, so only what the baseline computes is
// compared.
Verdict check_baseline(const Family& family, const Problem& problem, const HostBuffers& inputs,
                       const std::string& output_name, const void* device_output, std::size_t bytes);

// What every bench program sets up — the device (current for the runtime API too), the results
// database, a stream and the measurement method — and the steps its comparison rows take. Every
// time is measured by the tuner's SampleTimer: warm-up, an L2 flush before every sample, CUDA
// events, the stopping rule of measure.hpp (with more samples than a tuning run takes).
class BenchSession {
 public:
  explicit BenchSession(const BenchArgs& args);
  ~BenchSession();
  BenchSession(const BenchSession&) = delete;  // owns the stream
  BenchSession& operator=(const BenchSession&) = delete;

  // Whether --problem asked for `problem` (every problem when it was not given).
  bool wants(const Problem& problem) const { return args_.wants(problem); }

  // "# TITLE — device (uuid), commit abc1234": the first line of every table.
  void print_title(const std::string& title) const;

  // The best stored config for `problem` re-measured and verified here: the problem's own if it
  // was tuned, else that of the nearest tuned size among problems whose key differs only in n
  // (same operator, offset, …), else that of the nearest tuned size of the same element type.
  // nullopt when nothing was tuned; throws when the config fails.
  struct Tuned {
    std::string config, label;  // label: the config, and the problem it was tuned on if another
    double median_ms = 0;
  };
  std::optional<Tuned> measure_best(const Family& family, const Problem& problem);

  // Compiles `config_key` with NVRTC and measures it on `problem` through the engine's evaluator,
  // which also verifies it.
  Outcome run_config(const Family& family, const Problem& problem, const std::string& config_key);

  // Median time of `launch`, enqueued on the session's stream. The L2 flush before each sample is
  // the tuner's (a memset of 2x L2, leaving dirty lines) unless a probe asks for a clean one.
  enum class L2Flush { write, read };
  Measurement time(const std::function<void(cudaStream_t)>& launch, L2Flush flush = L2Flush::write) const;
  // A device-to-device copy whose reads and writes together move `bytes`.
  Measurement time_copy_moving(double bytes) const;

  Device& device() { return device_; }
  db::Store& store() { return store_; }

 private:
  BenchArgs args_;
  Device device_;
  db::Store store_;
  MeasureOptions options_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace cutune::bench
