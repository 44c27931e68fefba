#pragma once
// Shared by the bench programs: time a baseline with the same method the tuner uses (warm-up,
// L2 flush before every sample, CUDA events, the stopping rule of measure.hpp), and run a
// stored config through the engine's evaluator (which also verifies it).
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>

#include "device.hpp"
#include "evaluate.hpp"
#include "family.hpp"
#include "measure.hpp"
#include "store.hpp"

namespace cutune::bench {

#define CUTUNE_CUDART(call)                                                                               \
  do {                                                                                                  \
    const cudaError_t bench_error_ = (call);                                                            \
    if (bench_error_ != cudaSuccess)                                                                    \
      throw ::cutune::Error(std::string(#call) + ": " + cudaGetErrorString(bench_error_) + " at " + __FILE__ + ":" + \
                            std::to_string(__LINE__));                                                  \
  } while (0)

MeasureOptions bench_measure_options();

// The seed of the inputs a stored config is re-measured on (run_config), so baselines get the same data.
constexpr std::uint64_t kInputSeed = 0x5eedULL;

// bench_X [--db PATH] [--device N]
struct BenchArgs {
  std::string db_path;
  int device = 0;
};
BenchArgs parse_bench_args(int argc, char** argv);

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
  T* as() const { return static_cast<T*>(pointer_); }
  std::size_t bytes() const { return bytes_; }
  std::vector<std::byte> download() const;

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

// Median time of `launch` (enqueued on `stream`), measured like the tuner measures configs.
Measurement time_baseline(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                          const MeasureOptions& options, std::size_t l2_bytes);

// Device-to-device copy of `bytes` (cudaMemcpyAsync), timed the same way.
Measurement time_copy(std::size_t bytes, cudaStream_t stream, const MeasureOptions& options, std::size_t l2_bytes);

// The best stored ok config of `family` on this device for the stored problem of the same dtype
// whose size is nearest to `size` (log distance); also says which problem it was tuned on.
struct StoredBest {
  std::string config, tuned_on;
};
std::optional<StoredBest> best_stored_config(db::Store& store, const std::string& family, const std::string& device_uuid,
                                             const std::string& dtype, std::int64_t size);

// The best stored ok config for `problem` on this device: its own if it was tuned, else that of the
// nearest tuned size among problems whose key differs only in n (same operator, offset, …).
std::optional<StoredBest> best_stored_config_for(db::Store& store, const Family& family, const std::string& device_uuid,
                                                 const Problem& problem);

// The problem's generated inputs (as the evaluator makes them from `seed`), for a baseline to run on.
HostBuffers generate_inputs(const Family& family, const Problem& problem, std::uint64_t seed);

// Downloads a baseline's output (`bytes` at `device_output`) and checks it like a tuned config's:
// a comparison means nothing if the baseline computes something else.
Verdict check_baseline(const Family& family, const Problem& problem, const HostBuffers& inputs,
                       const std::string& output_name, const void* device_output, std::size_t bytes);

// What every bench program of a family sets up: the device (driver and runtime), the results
// database, a stream and the measurement options; and the steps each comparison row takes.
class BenchContext {
 public:
  explicit BenchContext(const BenchArgs& args);
  ~BenchContext() { cudaStreamDestroy(stream_); }
  BenchContext(const BenchContext&) = delete;  // owns the stream
  BenchContext& operator=(const BenchContext&) = delete;

  // "# <title> — <device> (<uuid>), commit <commit>"
  void print_title(const std::string& title) const;

  // The best stored config for `problem` (best_stored_config_for) re-measured and verified here;
  // nullopt when nothing was tuned. Throws when the config fails.
  struct Tuned {
    std::string config, label;  // label: the config, and the problem it was tuned on if another
    double median_ms = 0;
  };
  std::optional<Tuned> measure_best(const Family& family, const Problem& problem);

  Measurement time(const std::function<void(cudaStream_t)>& launch) const;
  // A device-to-device copy whose reads and writes together move `bytes`.
  Measurement time_copy_moving(double bytes) const;

  Device& device() { return device_; }

 private:
  Device device_;
  db::Store store_;
  MeasureOptions options_ = bench_measure_options();
  cudaStream_t stream_ = nullptr;
};

// Runs `body` and turns an exception into one line on stderr and exit status 1.
int bench_main(const char* program, const std::function<void()>& body);

// Compiles `config_key` with NVRTC and measures it on `problem` through GpuEvaluator.
Outcome run_config(Device& device, const Family& family, const Problem& problem, const std::string& config_key,
                   const MeasureOptions& options);

std::string bench_git_commit();

// What every bench program sets up: the device (current for the runtime API too), a stream,
// the database and the measurement method.
class BenchSession {
 public:
  explicit BenchSession(const BenchArgs& args);
  ~BenchSession();
  BenchSession(const BenchSession&) = delete;  // owns the stream
  BenchSession& operator=(const BenchSession&) = delete;
  // "# TITLE — device (uuid), commit abc1234": the first line of every table.
  std::string heading(const std::string& title) const;

  Device device;
  db::Store store;
  MeasureOptions options = bench_measure_options();
  std::size_t l2_bytes = 0;
  cudaStream_t stream = nullptr;
};

// The best stored config of `family` for `problem` (or the nearest tuned size of its element
// type), measured through the engine, which verifies it. Throws when nothing is stored or it fails.
struct StoredRun {
  std::string label;  // the config, and the problem it was tuned on when that is another one
  Measurement measurement;
};
StoredRun run_best_stored(BenchSession& session, const Family& family, const Problem& problem);

// The inputs run_config measures a family on (same generator, same seed), for baselines.
HostBuffers bench_inputs(const Family& family, const Problem& problem);


}  // namespace cutune::bench
