#include "rematch.hpp"

#include <algorithm>

namespace cutune {

std::vector<std::string> rematch_candidates(const std::vector<db::ResultRecord>& ranked, const RematchRule& rule,
                                            const std::set<std::string>& rematched) {
  std::vector<std::string> candidates;
  if (rule.rounds == 0 || rule.most == 0 || ranked.empty() || !ranked.front().time_ms_median) return candidates;
  const double limit = *ranked.front().time_ms_median * (1 + rule.within);
  std::size_t in_window = 0;
  for (const db::ResultRecord& r : ranked) {
    // Cut-short results hold a rough median of a few samples; they are far behind by definition.
    if (!r.time_ms_median || *r.time_ms_median > limit) break;
    if (r.cut_short) continue;
    ++in_window;
    if (!rematched.count(r.config) && candidates.size() < rule.most) candidates.push_back(r.config);
  }
  if (in_window < 2) candidates.clear();
  return candidates;
}

std::vector<std::size_t> rematch_order(std::size_t leaders, std::size_t rounds) {
  std::vector<std::size_t> order;
  order.reserve(leaders * rounds);
  for (std::size_t round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < leaders; ++i) order.push_back((round + i) % leaders);
  return order;
}

Measurement pooled_measurement(const std::vector<Measurement>& rounds) {
  std::vector<double> samples;
  for (const Measurement& m : rounds) samples.insert(samples.end(), m.samples_ms.begin(), m.samples_ms.end());
  return summarize(std::move(samples));
}

EvaluationQueue::Finished merged_rounds(const std::vector<EvaluationQueue::Finished>& rounds) {
  const auto failed = std::find_if(rounds.begin(), rounds.end(), [](const EvaluationQueue::Finished& f) {
    return f.outcome.status != Status::ok || !f.outcome.measurement;
  });
  if (failed != rounds.end()) return *failed;
  EvaluationQueue::Finished merged = rounds.back();
  std::vector<Measurement> measurements;
  merged.outcome.verify_seconds = merged.outcome.benchmark_seconds = 0;
  for (const EvaluationQueue::Finished& f : rounds) {
    measurements.push_back(*f.outcome.measurement);
    merged.outcome.verify_seconds += f.outcome.verify_seconds;
    merged.outcome.benchmark_seconds += f.outcome.benchmark_seconds;
  }
  merged.outcome.measurement = pooled_measurement(measurements);
  return merged;
}

}  // namespace cutune
