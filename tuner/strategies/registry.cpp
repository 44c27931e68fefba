#include "brute_force.hpp"
#include "core/error.hpp"
#include "strategy.hpp"

namespace cutune {

std::vector<std::string> strategy_names() { return {"brute_force"}; }

std::string default_strategy_name() { return "brute_force"; }

void check_strategy_name(const std::string& name) {
  for (const auto& n : strategy_names())
    if (n == name) return;
  std::string known;
  for (const auto& n : strategy_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("unknown --strategy '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& space, std::uint64_t /*seed*/) {
  check_strategy_name(name);
  return std::make_unique<BruteForce>(space);
}

}  // namespace cutune
