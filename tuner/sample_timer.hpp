#pragma once
// The one sample loop for everything cutune times on the GPU: a config's plan (evaluate.cpp), the
// device's copy bandwidth (GpuEvaluator::measure_copy_bandwidth) and the bench programs' library
// baselines (bench/bench_common). In the spirit of nvbench's cold-launch timer: warm-up runs, then
// samples, each one run between two marks with the L2 flushed before it, until a StoppingRule
// (measure.hpp) has enough or cuts the set short.
//
// The loop is plain C++ over two parts, so that its order and its stopping are tested without a
// GPU (test_sample_timer): a SampleClock (the marks and the wait; CudaEventClock on a GPU) and a
// SampleWork (what is run, and what its caller does around each run).
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "device.hpp"
#include "measure.hpp"

namespace cutune {

// The marks around a timed run, and the host's wait for them.
class SampleClock {
 public:
  virtual ~SampleClock() = default;
  virtual void start() = 0;  // enqueues the mark a sample starts at
  virtual void stop() = 0;   // enqueues the mark it ends at
  // Until everything enqueued has ended. Where the clock's owner says so, throws when that takes
  // too long (a hung kernel): the loop stops there, and the exception is the caller's.
  virtual void wait() = 0;
  virtual double elapsed_ms() = 0;  // between the last start and stop marks, once waited for
};

// A pair of CUDA events on `stream` (in the current context). `wait` is how the host waits for
// the stream: the evaluator polls with its hang timeout; left empty, cuStreamSynchronize.
class CudaEventClock final : public SampleClock {
 public:
  explicit CudaEventClock(CUstream stream, std::function<void()> wait = {});
  CudaEventClock(const CudaEventClock&) = delete;  // owns its events
  CudaEventClock& operator=(const CudaEventClock&) = delete;

  void start() override;
  void stop() override;
  void wait() override;
  double elapsed_ms() override;

 private:
  CUstream stream_;
  Event start_, stop_;
  std::function<void()> wait_;
};

// What a sample loop runs, and what its caller does around each run. Every member but `run` may
// be left empty.
struct SampleWork {
  std::function<void()> run;  // enqueues one run of what is timed
  // Before every run, warm-up or timed, ahead of the flush and so outside the timed span (the
  // evaluator copies initialised outputs back here, so every run starts from the same contents).
  std::function<void()> before_run;
  // Enqueues the L2 flush before the sample of this index (0, 1, … within a set). Empty: no flush.
  std::function<void(std::size_t index)> flush;
  // After each sample has been waited for and recorded (the evaluator reads the GPU's clock here).
  std::function<void()> after_sample;
};

struct SampleSet {
  std::vector<double> samples_ms;
  bool cut_short = false;  // the rule stopped it early (StoppingRule::cut_short)
};

// Size of a flush buffer that evicts everything from an L2 of `l2_bytes`: twice it, at least 16 MiB
// (for a device that reports no L2).
std::size_t l2_flush_bytes(std::int64_t l2_bytes);

class SampleTimer {
 public:
  SampleTimer(SampleClock& clock, SampleWork work);

  // `runs` runs, each after before_run, then one wait (also for none: whatever the caller enqueued
  // before has ended when sampling starts). Module load, caches and clocks settle here.
  void warm_up(int runs);
  // One set of samples. Each: before_run → flush(index) → start → run → stop → wait → its time →
  // after_sample, and then the rule's cut_short; `rule.enough` is asked before each. A later call
  // takes a new set (the evaluator's re-measure after throttling), its flush indices from 0 again.
  SampleSet sample(const StoppingRule& rule);
  // warm_up, then sample: for callers that take one set.
  SampleSet measure(int warmup_runs, const StoppingRule& rule);

 private:
  void enqueue_run();

  SampleClock& clock_;
  SampleWork work_;
};

}  // namespace cutune
