#pragma once
// nlopt's algorithms over the constrained discrete space: each axis becomes a coordinate in
// [0, 1] (core/neighbours.hpp), and a point nlopt asks about is evaluated as the nearest valid
// config. Points landing on configs already observed are answered from memory at no cost; a
// run that keeps landing on known configs is stopped and the search restarts from a random
// config not tried yet (global algorithms then search a box around it), so every restart makes
// progress and the search ends only when the space is exhausted.
//
// Inversion of control: nlopt's optimize() owns the loop and calls the objective, while a
// Strategy is called: propose() and observe(). nlopt therefore runs on its own thread, whose
// objective hands the config to propose() and blocks until observe() hands the result back.
// Exactly one side runs at a time (a strict hand-over under one mutex), so the search is as
// deterministic as a single thread; nlopt's random generator is thread-local, seeded on that
// thread. The alternative, re-running nlopt from the start with recorded answers at every
// step, would cost quadratic time and rely on every algorithm replaying bit-identically.
// Destroying the strategy stops the optimiser by throwing nlopt::forced_stop from the objective.
#include <nlopt.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "search_state.hpp"

namespace cutune {

class NloptSearch : public Strategy {
 public:
  NloptSearch(const Space& space, std::uint64_t seed, nlopt::algorithm algorithm, std::string name);
  ~NloptSearch() override;
  NloptSearch(const NloptSearch&) = delete;  // owns a thread parked inside nlopt
  NloptSearch& operator=(const NloptSearch&) = delete;

  std::string name() const override { return name_; }
  std::vector<Config> propose(std::size_t max_batch) override;
  void observe(const Observation& observation) override;

 private:
  // ---- the optimiser thread's side -------------------------------------------------------------
  void run_optimiser();
  void run_once(const Config& start, bool whole_space);
  double objective(const std::vector<double>& point);
  double evaluate(const Config& config);  // hands it over, blocks for the result
  double scaled(double fitness);          // what nlopt minimises: log time, failures penalised
  void list_the_space();                  // listed_ and listed_points_, for nearest_of

  SearchState state_;  // used by the optimiser thread only
  UnitEncoding encoding_;
  nlopt::algorithm algorithm_;
  std::string name_;
  std::uint64_t seed_;
  int known_in_a_row_ = 0;
  std::optional<double> worst_scaled_;
  // The valid configs and their points, once nearest_valid found none near a point (see objective).
  std::optional<std::vector<Config>> listed_;
  std::vector<std::vector<double>> listed_points_;

  // ---- the hand-over, guarded by mutex_ ---------------------------------------------------------
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Config> request_;      // posted by the optimiser, taken by propose()
  std::optional<Observation> answer_;  // posted by observe(), taken by the optimiser
  bool awaiting_answer_ = false;       // propose() handed out a config not yet observed
  bool exhausted_ = false;             // the optimiser found nothing left to try
  bool stopping_ = false;              // the strategy is being destroyed
  std::thread optimiser_;              // last: starts once everything above exists
};

}  // namespace cutune
