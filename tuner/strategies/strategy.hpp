#pragma once
// Search strategies: given what has been observed, propose the next configs to evaluate.
// A strategy remembers what it has seen, never proposes an invalid config or one it proposed
// before, and is deterministic for a given seed.
//
// The caller observes every config of a batch before asking for the next batch (it may stop
// early and drop the strategy at any point), unless the strategy proposes ahead (below). A strategy
// may return fewer configs than asked for (sequential ones return one); an empty batch means it
// has nothing left to propose.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/space.hpp"
#include "strategy_options.hpp"

namespace cutune {

struct Observation {
  Config config;
  std::optional<double> objective;  // time in ms; nullopt when the config failed
  double cost_seconds = 0;          // what evaluating it cost (compile + verify + benchmark)
};

// Results of the same kernel measured elsewhere (on another device, or for another problem size),
// already parsed into this search's space. A strategy may open with their best configs and use
// their ranking as a prior. Each source is normalised on its own, since devices differ in speed.
struct WarmStartSource {
  std::string name;  // where the results come from, for messages: "GPU-… n=1048576", a landscape
  std::vector<Observation> results;
};
using WarmStart = std::vector<WarmStartSource>;

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Up to `max_batch` configs to evaluate next; empty when the strategy has nothing left.
  virtual std::vector<Config> propose(std::size_t max_batch) = 0;
  virtual void observe(const Observation& observation) = 0;
  // Whether the strategy may be asked for more while configs it proposed are still unobserved
  // (the session then keeps the GPUs fed while it chooses). Such a strategy returns an empty batch
  // for "not before those results" while configs are outstanding; empty with none outstanding
  // still means nothing is left.
  virtual bool proposes_ahead() const { return false; }
  // The caller evaluates on GPUs that a slow proposal leaves idle (a session, not a replay): the
  // strategy may keep its model up to date on another thread and use the result once it is
  // ready (bayes_opt's hyperparameter fits), at the cost of a proposal order that depends on
  // timing. A replay never calls it, so replays stay reproducible under a seed.
  virtual void allow_background_work() {}
  // How many GPUs evaluate its configs at once. A strategy that proposes ahead keeps at least
  // that many outstanding, so that no GPU waits for the model while others have work. A replay
  // evaluates one at a time and never calls it.
  virtual void set_gpus(std::size_t) {}
};

// A strategy and the options the user gave it (tune --strategy NAME --strategy-option k=v).
struct StrategySpec {
  std::string name;
  StrategyOptionValues options;
};

// "bayes_opt", or "bayes_opt initial=4 window=80" with options: how runs and tables name it.
std::string label_of(const StrategySpec& spec);

// Names accepted by make_strategy, default first.
std::vector<std::string> strategy_names();
std::string default_strategy_name();
// Throws UsageError listing the known names for an unknown one.
void check_strategy_name(const std::string& name);
// Throws UsageError for an unknown strategy, an option it does not have, or a value it refuses.
void check_strategy(const StrategySpec& spec);
// The options a strategy reads, with defaults, ranges and help.
std::vector<StrategyOptionInfo> strategy_options(const std::string& name);
// Whether the strategy makes use of a warm start (the others ignore one).
bool strategy_uses_warm_start(const std::string& name);
std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, const Space& space, std::uint64_t seed,
                                        const WarmStart& warm_start = {});
std::unique_ptr<Strategy> make_strategy(const std::string& name, const Space& space, std::uint64_t seed);

}  // namespace cutune
