#include "budget.hpp"

#include <fmt/format.h>

namespace cutune {

std::optional<std::string> Budget::exhausted(std::int64_t evaluations, double seconds) const {
  if (max_evals && evaluations >= *max_evals) return fmt::format("max evals ({}) reached", *max_evals);
  if (time_limit_seconds && seconds >= *time_limit_seconds)
    return fmt::format("time limit ({} s) reached", *time_limit_seconds);
  return std::nullopt;
}

std::string Budget::describe() const {
  std::string text;
  if (max_evals) text += fmt::format("max_evals={}", *max_evals);
  if (time_limit_seconds) text += fmt::format("{}time_limit={}s", text.empty() ? "" : ",", *time_limit_seconds);
  return text.empty() ? "unlimited" : text;
}

}  // namespace cutune
