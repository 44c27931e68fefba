#pragma once
// When a tuning run must stop: after a number of new evaluations, after an amount of time, or
// whichever comes first. Shared by the GPU session (wall time) and the simulator (recorded time).
#include <cstdint>
#include <optional>
#include <string>

namespace cutune {

struct Budget {
  std::optional<std::int64_t> max_evals;     // new evaluations (per problem, in a session)
  std::optional<double> time_limit_seconds;  // time spent, compiles included

  // Why no further evaluation may start after `evaluations` evaluations and `seconds` spent,
  // or nullopt while both limits allow one. An evaluation that starts in time may end past it.
  std::optional<std::string> exhausted(std::int64_t evaluations, double seconds) const;
  std::string describe() const;  // "max_evals=50,time_limit=120s", or "unlimited"
};

}  // namespace cutune
