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

// Compiles `config_key` with NVRTC and measures it on `problem` through GpuEvaluator.
Outcome run_config(Device& device, const Family& family, const Problem& problem, const std::string& config_key,
                   const MeasureOptions& options);

std::string bench_git_commit();

}  // namespace cutune::bench
