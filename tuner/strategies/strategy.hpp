#pragma once
// Search strategies: given what has been observed, propose the next configs to evaluate.
// A strategy remembers what it has seen, never proposes an invalid config or one it proposed
// before, and is deterministic for a given seed.
//
// The caller observes every config of a batch before asking for the next batch (it may stop
// early and drop the strategy at any point). A strategy may return fewer configs than asked for
// (sequential ones return one); an empty batch means it has nothing left to propose.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/space.hpp"

namespace cutune {

struct Observation {
  Config config;
  std::optional<double> objective;  // time in ms; nullopt when the config failed
  double cost_seconds = 0;          // what evaluating it cost (compile + verify + benchmark)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Up to `max_batch` configs to evaluate next; empty when the strategy has nothing left.
  virtual std::vector<Config> propose(std::size_t max_batch) = 0;
  virtual void observe(const Observation& observation) = 0;
};

// Names accepted by make_strategy, default first.
std::vector<std::string> strategy_names();
std::string default_strategy_name();
// Throws UsageError listing the known names for an unknown one.
void check_strategy_name(const std::string& name);
std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& space, std::uint64_t seed);

}  // namespace cutune
