#pragma once
// What the evaluator observes besides time, through NVML (nvml.hpp, read only): the SM clock and
// the GPU's slowdown reasons after each timed sample, and the energy of a config's plan run back to
// back. Measured on NVIDIA H200, 2026-11-26 (bench/nvml_probe): the SM clock and the reasons cost
// under 1 µs a reading, so every sample gets one; the total-energy counter costs 3.3 ms a reading
// and changes only every 100 ms, so energy needs a window of its own, hundreds of milliseconds
// long, and is measured only when asked (--energy).
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nvml.hpp"
#include "observations.hpp"

namespace cutune {

// The clock readings of one set of timed samples.
class ClockWatch {
 public:
  explicit ClockWatch(const nvml::Gpu* gpu) : gpu_(gpu) {}
  // After a sample has ended: reads the SM clock and the slowdown reasons.
  void after_sample();
  // One reading (what after_sample reads from NVML): the SM clock and the reason:: bits.
  void record(double sm_clock_mhz, std::uint64_t reasons);
  // Forgets the readings (the samples are taken again).
  void restart();
  std::int64_t throttled() const { return throttled_; }
  // More than half of the readings named a reason that slows the work down (nvml::reason::slowing).
  bool mostly_throttled() const {
    return !clocks_mhz_.empty() && 2 * throttled_ > static_cast<std::int64_t>(clocks_mhz_.size());
  }
  // sm_clock_mhz, throttled_samples and throttle_reasons; nothing when there was no NVML.
  void fill(db::Observations& observations) const;

 private:
  const nvml::Gpu* gpu_;
  std::vector<double> clocks_mhz_;
  std::int64_t throttled_ = 0;
  std::uint64_t reasons_seen_ = 0;
};

// How to run the plan for the energy window.
struct EnergyRuns {
  CUstream stream = nullptr;
  std::function<void()> enqueue_run;  // one run of the plan on `stream`, nothing else
  double run_ms = 0;                  // the config's median time: sizes the batches
  double seconds = 0.2;               // the least span of busy time the energy is read over
  std::function<void()> wait;         // until the stream has drained (the evaluator's, with its hang timeout)
};

struct EnergyWindow {
  double energy_j = 0;  // per run
  double power_w = 0;   // the board's average over the window
  std::string method;   // "energy_counter" or "power_samples"
  std::int64_t runs = 0;
};

// Runs the plan back to back, keeping the GPU busy throughout, and reads the board's energy
// between two updates of NVML's total-energy counter at least `seconds` apart, both inside the busy
// period; the average power times the time a run takes back to back (CUDA events over the whole
// window) is the energy of a run. Without the counter (GPUs before Volta), the power reading is
// averaged over the window instead. nullopt, with the reason in `why`, when NVML gives neither
// or the counter does not move.
std::optional<EnergyWindow> measure_energy(const nvml::Gpu& gpu, const EnergyRuns& runs, std::string* why = nullptr);

}  // namespace cutune
