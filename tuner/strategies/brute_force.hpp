#pragma once
#include "strategy.hpp"

namespace cutune {

// Every valid config, in enumeration order.
class BruteForce : public Strategy {
 public:
  explicit BruteForce(const Space& space) : configs_(space.enumerate()) {}
  std::string name() const override { return "brute_force"; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation&) override {}
  // Its order never depends on what it observed.
  bool proposes_ahead() const override { return true; }

 private:
  std::vector<Config> configs_;
  std::size_t next_ = 0;
};

}  // namespace cutune
