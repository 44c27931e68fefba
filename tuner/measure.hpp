#pragma once
// Timing statistics and the stopping rule. Pure functions, so they are tested without a GPU;
// the sample loop that applies them on the GPU is SampleTimer (sample_timer.hpp).
#include <cstddef>
#include <optional>
#include <vector>

namespace cutune {

struct MeasureOptions {
  int warmup_runs = 2;  // untimed runs after verification: module load, caches, clocks
  int min_samples = 10;
  int max_samples = 200;
  double max_sample_seconds = 1.0;  // cap on summed sample time per config
  // Stop once the relative standard error of the mean is below this (0.5 %).
  double target_relative_error = 0.005;
  bool flush_l2 = true;         // overwrite a buffer of 2× L2 before every sample
  double timeout_seconds = 10;  // one run longer than this counts as a hang
  // A config whose fastest of its first cut_after_samples samples is more than cut_ratio times the
  // best median so far stops sampling: it loses whatever more samples would say. 0 disables.
  double cut_ratio = 2.0;
  int cut_after_samples = 3;
  // Above 0: after its samples, each config's plan runs back to back for an energy window this
  // long (observers.hpp); 0, the default, leaves energy unmeasured (a window costs ~0.3 s a config).
  double energy_seconds = 0;
};

struct Measurement {
  std::vector<double> samples_ms;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0, stdev_ms = 0;
};

Measurement summarize(std::vector<double> samples_ms);

// True once enough samples were taken: the minimum count is reached and the mean is known to
// the target relative error, or a cap on count or summed time is hit.
bool enough_samples(const std::vector<double>& samples_ms, const MeasureOptions& options);

// True when the samples so far put the config clearly behind the best median measured before it
// for the same problem: at least cut_after_samples of them, and even the fastest is more than
// cut_ratio times the best. Its result is then stored as cut short, never as a full measurement.
bool clearly_behind(const std::vector<double>& samples_ms, std::optional<double> best_ms,
                    const MeasureOptions& options);

// When a set of samples ends, as a value the sample loop asks after each sample: either the rule
// above (enough_samples under MeasureOptions, and clearly_behind when a best median is known), or
// a fixed count that is never cut short (the copy bandwidth's 20 samples).
class StoppingRule {
 public:
  static StoppingRule from(const MeasureOptions& options, std::optional<double> best_ms = std::nullopt);
  static StoppingRule fixed_count(int samples);

  // The set is complete (asked before every sample, so a set can hold no sample).
  bool enough(const std::vector<double>& samples_ms) const;
  // The set stops here, behind the best: its samples are a cut-short result's.
  bool cut_short(const std::vector<double>& samples_ms) const;

 private:
  StoppingRule() = default;
  std::optional<MeasureOptions> options_;  // none: a fixed count
  std::optional<double> best_ms_;
  int count_ = 0;
};

}  // namespace cutune
