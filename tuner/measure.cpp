#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cutune {

Measurement summarize(std::vector<double> samples_ms) {
  Measurement m;
  m.samples_ms = samples_ms;
  if (samples_ms.empty()) return m;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  m.median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  m.min_ms = samples_ms.front();
  m.max_ms = samples_ms.back();
  m.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  double squares = 0;
  for (double s : samples_ms) squares += (s - m.mean_ms) * (s - m.mean_ms);
  m.stdev_ms = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  return m;
}

bool clearly_behind(const std::vector<double>& samples_ms, std::optional<double> best_ms,
                    const MeasureOptions& options) {
  if (!best_ms || *best_ms <= 0 || options.cut_ratio <= 0) return false;
  if (static_cast<int>(samples_ms.size()) < std::max(1, options.cut_after_samples)) return false;
  return *std::min_element(samples_ms.begin(), samples_ms.end()) > options.cut_ratio * *best_ms;
}

bool enough_samples(const std::vector<double>& samples_ms, const MeasureOptions& options) {
  const auto n = static_cast<int>(samples_ms.size());
  if (n >= options.max_samples) return true;
  const double total_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0);
  if (n > 0 && total_ms >= options.max_sample_seconds * 1e3) return true;
  if (n < options.min_samples) return false;
  const Measurement m = summarize(samples_ms);
  if (m.mean_ms <= 0) return true;
  const double relative_error = m.stdev_ms / std::sqrt(static_cast<double>(n)) / m.mean_ms;
  return relative_error < options.target_relative_error;
}

StoppingRule StoppingRule::from(const MeasureOptions& options, std::optional<double> best_ms) {
  StoppingRule rule;
  rule.options_ = options;
  rule.best_ms_ = best_ms;
  return rule;
}

StoppingRule StoppingRule::fixed_count(int samples) {
  StoppingRule rule;
  rule.count_ = samples;
  return rule;
}

bool StoppingRule::enough(const std::vector<double>& samples_ms) const {
  if (options_) return enough_samples(samples_ms, *options_);
  return static_cast<int>(samples_ms.size()) >= count_;
}

bool StoppingRule::cut_short(const std::vector<double>& samples_ms) const {
  return options_ && clearly_behind(samples_ms, best_ms_, *options_);
}

}  // namespace cutune
