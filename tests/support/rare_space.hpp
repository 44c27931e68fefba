// A space whose valid configs are too rare for rejection sampling, for tests of the paths that
// handle such spaces (Space::sample's depth-first search, strategies that list the space).
#pragma once

#include <string>

#include "core/space.hpp"

namespace cutune::testing {

// `axes` axes of ten values each, every axis equal to the one before: 10 valid configs of 10^axes.
inline Space rare_space(int axes) {
  Space space;
  std::string previous;
  for (int axis = 0; axis < axes; ++axis) {
    const std::string name = "x" + std::to_string(axis);
    space.axis(name, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    if (!previous.empty()) space.require(name + " == " + previous);
    previous = name;
  }
  return space;
}

}  // namespace cutune::testing
