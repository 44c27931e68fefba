#include "neighbours.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_set>

#include "error.hpp"

namespace cutune {

Positions positions_of(const Space& space, const Config& config) {
  const auto& axes = space.axes();
  Positions positions(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto position = axes[i].index_of(config.values.at(i));
    if (!position) throw Error(axes[i].name + " = " + std::to_string(config.values[i]) + " is not one of its values");
    positions[i] = *position;
  }
  return positions;
}

Config config_at(const Space& space, const Positions& positions) {
  Config config{std::vector<std::int64_t>(positions.size())};
  for (std::size_t i = 0; i < positions.size(); ++i) config.values[i] = space.axes().at(i).values.at(positions[i]);
  return config;
}

std::vector<Config> neighbours(const Space& space, const Config& config, Neighbourhood kind) {
  const Positions at = positions_of(space, config);
  std::vector<Config> found;
  Config candidate = config;
  for (std::size_t axis = 0; axis < at.size(); ++axis) {
    const auto& values = space.axes()[axis].values;
    for (std::size_t p = 0; p < values.size(); ++p) {
      const bool one_step = p + 1 == at[axis] || p == at[axis] + 1;
      if (p == at[axis] || (kind == Neighbourhood::adjacent && !one_step)) continue;
      candidate.values[axis] = values[p];
      if (space.valid(candidate)) found.push_back(candidate);
    }
    candidate.values[axis] = config.values[axis];
  }
  return found;
}

std::size_t hamming_distance(const Config& a, const Config& b) {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < std::min(a.values.size(), b.values.size()); ++i) differ += a.values[i] != b.values[i];
  return differ + std::max(a.values.size(), b.values.size()) - std::min(a.values.size(), b.values.size());
}

UnitEncoding::UnitEncoding(const Space& space) : space_(space) {
  for (std::size_t i = 0; i < space.axes().size(); ++i)
    if (space.axes()[i].values.size() > 1) coordinate_axes_.push_back(i);
}

std::vector<double> UnitEncoding::point_of(const Config& config) const {
  const Positions at = positions_of(space_, config);
  std::vector<double> point;
  for (std::size_t axis : coordinate_axes_)
    point.push_back(static_cast<double>(at[axis]) / static_cast<double>(space_.axes()[axis].values.size() - 1));
  return point;
}

std::optional<Config> UnitEncoding::nearest_valid(const std::vector<double>& point, std::size_t max_visits) const {
  const auto& axes = space_.axes();
  // Where the point falls on each coordinate axis, in grid units.
  std::vector<double> target(axes.size(), 0);
  Positions rounded(axes.size(), 0);
  for (std::size_t d = 0; d < coordinate_axes_.size(); ++d) {
    const std::size_t axis = coordinate_axes_[d];
    const double top = static_cast<double>(axes[axis].values.size() - 1);
    target[axis] = coordinate(point, d) * top;
    rounded[axis] = static_cast<std::size_t>(std::lround(target[axis]));
  }
  auto distance = [&](const Positions& p) {
    double sum = 0;
    for (std::size_t axis : coordinate_axes_) {
      const double delta = static_cast<double>(p[axis]) - target[axis];
      sum += delta * delta / std::pow(static_cast<double>(axes[axis].values.size() - 1), 2);
    }
    return sum;
  };

  // Moving any axis further from its rounded position never brings a grid point closer, so a
  // best-first search that only moves outward pops grid points in increasing distance.
  using Entry = std::pair<double, Positions>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  std::unordered_set<Config, ConfigHash> queued;
  frontier.emplace(distance(rounded), rounded);
  queued.insert(config_at(space_, rounded));
  for (std::size_t visits = 0; !frontier.empty() && visits < max_visits; ++visits) {
    const Positions at = frontier.top().second;
    frontier.pop();
    Config config = config_at(space_, at);
    if (space_.valid(config)) return config;
    for (std::size_t axis : coordinate_axes_) {
      for (int step : {-1, 1}) {
        const bool outward = step < 0 ? at[axis] <= rounded[axis] && at[axis] > 0
                                      : at[axis] >= rounded[axis] && at[axis] + 1 < axes[axis].values.size();
        if (!outward) continue;
        Positions next = at;
        next[axis] = step < 0 ? at[axis] - 1 : at[axis] + 1;
        if (queued.insert(config_at(space_, next)).second) frontier.emplace(distance(next), next);
      }
    }
  }
  return std::nullopt;
}

double UnitEncoding::coordinate(const std::vector<double>& point, std::size_t d) {
  return std::clamp(d < point.size() && std::isfinite(point[d]) ? point[d] : 0.5, 0.0, 1.0);
}

std::optional<Config> UnitEncoding::nearest_of(const std::vector<double>& point, const std::vector<Config>& valid,
                                               const std::vector<std::vector<double>>& points) const {
  std::optional<std::size_t> best;
  double best_distance = 0;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    double sum = 0;
    for (std::size_t d = 0; d < coordinate_axes_.size(); ++d) {
      const double delta = points[i][d] - coordinate(point, d);
      sum += delta * delta;
    }
    if (!best || sum < best_distance) best = i, best_distance = sum;
  }
  return best ? std::optional<Config>(valid[*best]) : std::nullopt;
}

}  // namespace cutune
