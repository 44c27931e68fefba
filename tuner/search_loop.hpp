#pragma once
// One problem's search: the strategy proposes, an evaluation queue evaluates (the scheduler's GPUs
// in a session, a recorded landscape in a simulation), and every finished evaluation goes back to
// the strategy as an observation. The one tuning loop of both. The loop
// keeps work queued ahead of the GPUs when the strategy can propose before its last configs are
// observed (Strategy::proposes_ahead), so that no GPU waits while the strategy chooses or while
// the last configs of a batch run on the other GPUs. Other strategies are asked only when nothing
// is in flight, as the Strategy contract has them.
//
// The caller (the session, the simulator) says what a proposed config costs (a scheduler job, or a result it has
// stored already), stores finished evaluations, and decides when to stop; the loop owns the
// order of proposing, handing out and observing.
#include <cstddef>
#include <functional>
#include <variant>

#include "scheduler.hpp"
#include "strategies/strategy.hpp"

namespace cutune {

struct SearchLimits {
  std::size_t evaluations = 0;  // configs this problem may take, those already stored included
  std::size_t batch_size = 16;  // the most configs asked for at once
  // A strategy that proposes ahead is asked for more once no more than this many configs are
  // queued or running: enough to keep every GPU busy while it chooses, few enough that it chooses
  // with what the others taught it.
  // 0 replays a sequential tuner (the simulator): nothing is proposed while anything is in flight.
  std::size_t low_water = 2;
  // Return as soon as every config the budget allows was proposed (or the search was stopped),
  // leaving those still queued or running to the caller, who takes their results in as they
  // finish (the next problem's ProblemQueue hands them over): the next problem then starts
  // while they run. Off: wait for every result, as the strategy and a replay expect.
  bool leave_running = false;
};

struct SearchHooks {
  // A proposed config: the queue's job to evaluate it, or the observation of a result stored
  // before (nothing to evaluate).
  std::function<std::variant<EvaluationQueue::Job, Observation>(const Config&)> dispatch;
  // Takes a finished evaluation in; returns what the strategy learns from it. A caller that
  // stores results may set the row aside for `commit`.
  std::function<Observation(const EvaluationQueue::Finished&)> record;
  // Optional: called once after the records of a group of evaluations that finished together, and
  // before the strategy hears of them, to store the group in one transaction (one commit per
  // group instead of per result: the session's thread is what fast configs on several GPUs wait for).
  std::function<void()> commit;
  // Every observation, once the strategy has it (progress, the best so far).
  std::function<void(const Observation&)> observed;
  // Asked before each proposal and after each finished evaluation; once true, nothing queued is
  // evaluated and nothing more is proposed, but what runs finishes and is recorded.
  std::function<bool()> must_stop;
};

struct SearchTally {
  std::size_t proposed = 0;          // configs the strategy gave, stored ones included
  std::size_t evaluated = 0;         // finished evaluations recorded
  std::size_t skipped = 0;           // proposed configs that were stored already
  std::size_t dropped = 0;           // queued when the search stopped, never evaluated
  std::size_t left_running = 0;      // still queued or running at the return (SearchLimits::leave_running)
  double strategy_seconds = 0;       // the strategy's time proposing, in all
  double observe_seconds = 0;        // the strategy's time taking observations in (its model fits)
  double record_seconds = 0;         // the caller's time storing finished evaluations (record, commit)
  double strategy_wait_seconds = 0;  // of which with nothing queued or running: every GPU waited
  bool stopped = false;              // must_stop said so
};

SearchTally run_problem_search(Strategy& strategy, EvaluationQueue& queue, const SearchLimits& limits,
                               const SearchHooks& hooks);

}  // namespace cutune
