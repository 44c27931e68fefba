#include "config_choice.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cutune::db {

std::int64_t quantised_log(double ms) { return std::llround(std::log(ms) * 4294967296.0); }

void sort_measurements(std::vector<Measurement>& measurements) {
  const auto order = [](const Measurement& a, const Measurement& b) {
    if (a.config != b.config) return a.config < b.config;
    if (a.log_ms != b.log_ms) return a.log_ms < b.log_ms;
    return a.result_id < b.result_id;
  };
  // A pair read in config order usually is in order already.
  if (!std::is_sorted(measurements.begin(), measurements.end(), order))
    std::sort(measurements.begin(), measurements.end(), order);
}

std::string_view ConfigList::text(std::uint32_t index) const {
  return index < dictionary_.size() ? dictionary_[index] : std::string_view(extras_[index - dictionary_.size()]);
}

std::optional<std::uint32_t> ConfigList::find(std::string_view text) const {
  const auto it = std::lower_bound(dictionary_.begin(), dictionary_.end(), text);
  if (it != dictionary_.end() && *it == text) return static_cast<std::uint32_t>(it - dictionary_.begin());
  if (const auto extra = extra_index_.find(text); extra != extra_index_.end()) return extra->second;
  return std::nullopt;
}

std::uint32_t ConfigList::index_of(std::string_view text) {
  // Texts in ascending order (a pair's rows by config) hit at the cursor or just after it.
  for (std::size_t i = cursor_; i < std::min(cursor_ + 2, dictionary_.size()); ++i)
    if (dictionary_[i] == text) return static_cast<std::uint32_t>(cursor_ = i);
  const auto it = std::lower_bound(dictionary_.begin(), dictionary_.end(), text);
  if (it != dictionary_.end() && *it == text) return static_cast<std::uint32_t>(cursor_ = it - dictionary_.begin());
  if (const auto extra = extra_index_.find(text); extra != extra_index_.end()) return extra->second;
  const auto index = static_cast<std::uint32_t>(size());
  extra_index_.emplace(extras_.emplace_back(text), index);
  return index;
}

bool ConfigList::less(std::uint32_t a, std::uint32_t b) const {
  if (a < dictionary_.size() && b < dictionary_.size()) return a < b;
  return text(a) < text(b);
}

void Scores::resize(std::size_t configs) {
  if (configs <= coverage.size()) return;
  coverage.resize(configs, 0);
  log_ratio_sum.resize(configs, 0);
}

void Scores::apply(const Pair& pair, int sign) {
  if (pair.measurements.empty()) return;
  std::int64_t best = pair.measurements.front().log_ms;
  std::uint32_t last_config = pair.measurements.front().config;
  for (const Measurement& m : pair.measurements) {
    best = std::min(best, m.log_ms);
    last_config = std::max(last_config, m.config);
  }
  resize(static_cast<std::size_t>(last_config) + 1);
  // Sorted by config, then time: the first of each config's run is its fastest on the pair.
  for (std::size_t i = 0; i < pair.measurements.size(); ++i) {
    const Measurement& m = pair.measurements[i];
    if (i > 0 && pair.measurements[i - 1].config == m.config) continue;
    coverage[m.config] += sign;
    log_ratio_sum[m.config] += sign * (m.log_ms - best);
  }
}

std::optional<Choice> choose(const Scores& scores, const ConfigList& configs) {
  std::optional<std::uint32_t> chosen;
  for (std::uint32_t c = 0; c < scores.coverage.size(); ++c) {
    if (scores.coverage[c] <= 0) continue;
    if (!chosen) {
      chosen = c;
      continue;
    }
    const std::uint32_t b = *chosen;
    // Among equal coverage, the smaller sum is the smaller mean.
    const bool better = scores.coverage[c] != scores.coverage[b] ? scores.coverage[c] > scores.coverage[b]
                        : scores.log_ratio_sum[c] != scores.log_ratio_sum[b]
                            ? scores.log_ratio_sum[c] < scores.log_ratio_sum[b]
                            : configs.less(c, b);
    if (better) chosen = c;
  }
  if (!chosen) return std::nullopt;
  return Choice{*chosen, static_cast<std::uint32_t>(scores.coverage[*chosen])};
}

namespace {

// The first (fastest) measurement of `config` in a pair, or nullptr.
const Measurement* first_of(const Pair& pair, std::uint32_t config) {
  const auto it = std::lower_bound(pair.measurements.begin(), pair.measurements.end(), config,
                                   [](const Measurement& m, std::uint32_t c) { return m.config < c; });
  return it != pair.measurements.end() && it->config == config ? &*it : nullptr;
}

}  // namespace

const Measurement* fastest(const std::vector<const Pair*>& pairs, std::uint32_t config) {
  const Measurement* best = nullptr;
  for (const Pair* pair : pairs)
    if (const Measurement* m = first_of(*pair, config); m && (!best || m->log_ms < best->log_ms)) best = m;
  return best;
}

double geomean_ratio(const std::vector<const Pair*>& pairs, std::uint32_t config) {
  double log_sum = 0;
  int count = 0;
  for (const Pair* pair : pairs) {
    const Measurement* m = first_of(*pair, config);
    if (!m || pair->measurements.empty()) continue;
    double best = pair->measurements.front().ms, own = m->ms;
    for (const Measurement& other : pair->measurements) {
      best = std::min(best, other.ms);
      if (other.config == config) own = std::min(own, other.ms);
    }
    log_sum += std::log(own / best);
    ++count;
  }
  return count ? std::exp(log_sum / count) : 1.0;
}

bool valid_within_fraction(double within_fraction) { return std::isfinite(within_fraction) && within_fraction >= 0; }

double fastest_ms(const std::vector<EnergyCandidate>& candidates) {
  double fastest = 0;
  for (const EnergyCandidate& c : candidates)
    if (fastest == 0 || c.ms < fastest) fastest = c.ms;
  return fastest;
}

const EnergyCandidate* lowest_energy(const std::vector<EnergyCandidate>& candidates, double within_fraction) {
  const double limit = fastest_ms(candidates) * (1 + within_fraction);
  const EnergyCandidate* chosen = nullptr;
  for (const EnergyCandidate& c : candidates) {
    if (!c.energy_j || c.ms > limit) continue;
    if (!chosen || std::tie(*c.energy_j, c.ms, c.config) < std::tie(*chosen->energy_j, chosen->ms, chosen->config))
      chosen = &c;
  }
  return chosen;
}

std::vector<const EnergyCandidate*> energy_front(const std::vector<EnergyCandidate>& candidates) {
  // A window admits a prefix of the candidates by time; the rule takes the least (energy, time,
  // config) of the prefix. Walking the times upwards, each change of that least is a front member.
  std::vector<const EnergyCandidate*> measured;
  for (const EnergyCandidate& c : candidates)
    if (c.energy_j) measured.push_back(&c);
  std::sort(measured.begin(), measured.end(),
            [](const EnergyCandidate* a, const EnergyCandidate* b) { return a->ms < b->ms; });
  std::vector<const EnergyCandidate*> front;
  const EnergyCandidate* least = nullptr;
  for (std::size_t i = 0; i < measured.size();) {
    const double ms = measured[i]->ms;
    for (; i < measured.size() && measured[i]->ms == ms; ++i) {
      const EnergyCandidate& c = *measured[i];
      if (!least || std::tie(*c.energy_j, c.ms, c.config) < std::tie(*least->energy_j, least->ms, least->config))
        least = &c;
    }
    if (front.empty() || front.back() != least) front.push_back(least);
  }
  return front;
}

}  // namespace cutune::db
