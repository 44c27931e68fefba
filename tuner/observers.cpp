#include "observers.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <thread>

#include "device.hpp"
#include "measure.hpp"

namespace cutune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Each batch of runs is this much GPU time, and kBatchesAhead of them are kept queued: a reading of
// the energy counter blocks the host for 3.3 ms (H200), and the GPU must not run dry meanwhile. At
// most kMaxBatchRuns runs a batch, so that a tiny kernel's launches stay within the driver's queue
// (beyond it cuLaunchKernel blocks, and the counter's edges would be seen late).
constexpr double kBatchMs = 10;
constexpr std::int64_t kMaxBatchRuns = 256;
constexpr std::size_t kBatchesAhead = 4;
// The power reading of GPUs without the counter lags the load it reports; readings start after this.
constexpr double kPowerSettleSeconds = 0.1;
// The counter must move within this (it updates every 100 ms where it exists).
constexpr double kCounterStallSeconds = 1.0;

}  // namespace

void ClockWatch::after_sample() {
  if (!gpu_) return;
  const auto mhz = gpu_->sm_clock_mhz();
  if (!mhz) return;  // a GPU that reports no clock reports nothing worth counting
  record(*mhz, gpu_->clock_event_reasons().value_or(0));
}

void ClockWatch::record(double sm_clock_mhz, std::uint64_t reasons) {
  clocks_mhz_.push_back(sm_clock_mhz);
  if (reasons & nvml::reason::slowing) {
    ++throttled_;
    reasons_seen_ |= reasons & nvml::reason::slowing;
  }
}

void ClockWatch::restart() {
  clocks_mhz_.clear();
  throttled_ = 0;
  reasons_seen_ = 0;
}

void ClockWatch::fill(db::Observations& o) const {
  if (clocks_mhz_.empty()) return;
  o.sm_clock_mhz = summarize(clocks_mhz_).median_ms;  // the median of any series
  o.throttled_samples = throttled_;
  o.throttle_reasons = nvml::reason_names(reasons_seen_);
}

std::optional<EnergyWindow> measure_energy(const nvml::Gpu& gpu, const EnergyRuns& r, std::string* why) {
  const auto fail = [&](const char* reason) -> std::optional<EnergyWindow> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const bool counter = gpu.total_energy_mj().has_value();
  if (!counter && !gpu.power_w()) return fail("NVML reports neither the energy counter nor the power");

  const std::int64_t batch_runs = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::ceil(kBatchMs / std::max(r.run_ms, 1e-3))), 1, kMaxBatchRuns);
  Event start, stop;
  std::array<Event, kBatchesAhead + 1> batch_ends;
  std::size_t batches = 0;
  std::int64_t runs = 0;
  const auto enqueue_batch = [&] {
    for (std::int64_t i = 0; i < batch_runs; ++i) r.enqueue_run();
    runs += batch_runs;
    batch_ends[batches % batch_ends.size()].record(r.stream);
    ++batches;
  };
  // Tops the queue up to kBatchesAhead batches not yet finished.
  const auto keep_busy = [&] {
    while (batches < kBatchesAhead ||
           cuda::driver().cuEventQuery(batch_ends[(batches - kBatchesAhead) % batch_ends.size()].get()) == CUDA_SUCCESS)
      enqueue_batch();
  };

  start.record(r.stream);
  keep_busy();
  const auto began = Clock::now();
  std::optional<EnergyWindow> window;
  if (counter) {
    // Two edges of the counter, both while the GPU is busy: the energy between them is the busy
    // board's alone, over the host time between seeing them (seen within a reading, 3.3 ms).
    std::uint64_t last = *gpu.total_energy_mj();
    std::optional<std::pair<Clock::time_point, std::uint64_t>> first_edge;
    while (true) {
      keep_busy();
      const std::uint64_t now_mj = gpu.total_energy_mj().value_or(last);
      const auto now = Clock::now();
      if (now_mj != last) {
        last = now_mj;
        if (!first_edge)
          first_edge.emplace(now, now_mj);
        else if (seconds_between(first_edge->first, now) >= r.seconds) {
          window = EnergyWindow{0, (now_mj - first_edge->second) * 1e-3 / seconds_between(first_edge->first, now),
                                "energy_counter", 0};
          break;
        }
      } else if (seconds_between(first_edge ? first_edge->first : began, now) > r.seconds + kCounterStallSeconds) {
        break;
      }
    }
  } else {
    double sum_w = 0;
    std::int64_t readings = 0;
    while (seconds_between(began, Clock::now()) < kPowerSettleSeconds + r.seconds) {
      keep_busy();
      if (seconds_between(began, Clock::now()) >= kPowerSettleSeconds)
        if (const auto w = gpu.power_w()) sum_w += *w, ++readings;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (readings > 0) window = EnergyWindow{0, sum_w / static_cast<double>(readings), "power_samples", 0};
  }
  stop.record(r.stream);
  r.wait();
  if (!window) return fail("NVML's energy counter did not move while the GPU was busy");
  window->runs = runs;
  window->energy_j = window->power_w * (stop.elapsed_ms_since(start) * 1e-3) / static_cast<double>(runs);
  return window;
}

}  // namespace cutune
