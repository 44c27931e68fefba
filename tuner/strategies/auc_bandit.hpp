#pragma once
#include <memory>

#include "search_state.hpp"

namespace cutune {

// A meta-strategy sharing the budget among other strategies (its arms), after OpenTuner's
// AUC bandit: each turn goes to the arm with the best credit (the area under its recent curve
// of "found a new best", favouring recent hits) plus an exploration bonus for arms used less.
// A config an arm proposes that another arm already tried is answered from memory, free.
class AucBandit : public Strategy {
 public:
  AucBandit(const Space& space, std::uint64_t seed, const std::vector<std::string>& arms);
  std::string name() const override { return "auc_bandit"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;

 private:
  struct Arm {
    std::unique_ptr<Strategy> strategy;
    std::vector<bool> hits;  // one per result it produced: did it improve the best so far
    bool exhausted = false;
  };
  std::size_t choose() const;
  double credit(const Arm& arm) const;

  SearchState state_;
  std::vector<Arm> arms_;
  std::size_t turn_arm_ = 0;  // the arm whose batch is out
  std::size_t uses_ = 0;
};

}  // namespace cutune
