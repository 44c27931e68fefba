#include "sample_timer.hpp"

#include <algorithm>
#include <utility>

namespace cutune {

CudaEventClock::CudaEventClock(CUstream stream, std::function<void()> wait) : stream_(stream), wait_(std::move(wait)) {}

void CudaEventClock::start() { start_.record(stream_); }

void CudaEventClock::stop() { stop_.record(stream_); }

void CudaEventClock::wait() {
  if (wait_)
    wait_();
  else
    CUTUNE_CU(cuStreamSynchronize, stream_);
}

double CudaEventClock::elapsed_ms() { return stop_.elapsed_ms_since(start_); }

std::size_t l2_flush_bytes(std::int64_t l2_bytes) {
  return static_cast<std::size_t>(std::max<std::int64_t>(2 * l2_bytes, std::int64_t{16} << 20));
}

SampleTimer::SampleTimer(SampleClock& clock, SampleWork work) : clock_(clock), work_(std::move(work)) {
  if (!work_.run) throw Error("a sample timer needs something to run");
}

void SampleTimer::enqueue_run() {
  if (work_.before_run) work_.before_run();
  work_.run();
}

void SampleTimer::warm_up(int runs) {
  for (int i = 0; i < runs; ++i) enqueue_run();
  clock_.wait();
}

SampleSet SampleTimer::sample(const StoppingRule& rule) {
  SampleSet set;
  while (!rule.enough(set.samples_ms)) {
    // The flush comes after before_run: whatever that touches is evicted too.
    if (work_.before_run) work_.before_run();
    if (work_.flush) work_.flush(set.samples_ms.size());
    clock_.start();
    work_.run();
    clock_.stop();
    clock_.wait();
    set.samples_ms.push_back(clock_.elapsed_ms());
    if (work_.after_sample) work_.after_sample();
    if (rule.cut_short(set.samples_ms)) {
      set.cut_short = true;
      break;
    }
  }
  return set;
}

SampleSet SampleTimer::measure(int warmup_runs, const StoppingRule& rule) {
  warm_up(warmup_runs);
  return sample(rule);
}

}  // namespace cutune
