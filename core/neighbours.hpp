#pragma once
// Geometry of a Space for search strategies: the integer grid of value positions, the moves
// between neighbouring configs, and a continuous [0, 1]^d view for optimisers such as nlopt.
// None of it lists the space, so it works for spaces too large to enumerate.
#include <cstddef>
#include <optional>
#include <vector>

#include "space.hpp"

namespace cutune {

// Position of each of a config's values on its axis (the config's grid coordinates).
using Positions = std::vector<std::size_t>;
Positions positions_of(const Space& space, const Config& config);  // throws Error for a value off its axis
Config config_at(const Space& space, const Positions& positions);

enum class Neighbourhood {
  adjacent,  // one axis moves to the next or previous value
  hamming,   // one axis takes any other value
};

// Valid configs one move away from `config`, axis by axis, values in axis order.
std::vector<Config> neighbours(const Space& space, const Config& config, Neighbourhood kind);

// Number of axes on which two configs differ.
std::size_t hamming_distance(const Config& a, const Config& b);

// Every axis with more than one value becomes a coordinate in [0, 1]: position / (size - 1).
class UnitEncoding {
 public:
  explicit UnitEncoding(const Space& space);
  std::size_t dimensions() const { return coordinate_axes_.size(); }
  std::vector<double> point_of(const Config& config) const;
  // The valid config closest to `point` (Euclidean, in these coordinates): the rounded grid
  // point when it is valid, else a best-first search outward from it, which pops grid points in
  // order of distance and so returns the exact nearest. nullopt when none lies within
  // `max_visits` grid points (a space whose valid configs are rare or far away).
  std::optional<Config> nearest_valid(const std::vector<double>& point, std::size_t max_visits = 100000) const;
  // The nearest of `valid` (configs of this space; `points`: point_of each) to `point`, by the
  // same distance: for a space whose valid configs are too rare for nearest_valid's search, where
  // a scan of the listed space costs microseconds per thousand configs instead of its 100 000
  // visits. nullopt when `valid` is empty.
  std::optional<Config> nearest_of(const std::vector<double>& point, const std::vector<Config>& valid,
                                   const std::vector<std::vector<double>>& points) const;

 private:
  // Coordinate d of `point` as the distance sees it: in [0, 1], the middle where it is missing or not finite.
  static double coordinate(const std::vector<double>& point, std::size_t d);

  const Space& space_;
  std::vector<std::size_t> coordinate_axes_;  // the axes with more than one value
};

}  // namespace cutune
