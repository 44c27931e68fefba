#include "search_loop.hpp"

#include <algorithm>
#include <chrono>

namespace cutune {

SearchTally run_problem_search(Strategy& strategy, EvaluationQueue& queue, const SearchLimits& limits,
                               const SearchHooks& hooks) {
  using Clock = std::chrono::steady_clock;
  SearchTally tally;
  std::size_t in_flight = 0;  // handed to the queue and not yet back
  bool exhausted = false;     // the strategy has nothing left to propose
  const bool ahead = strategy.proposes_ahead();

  const auto stop = [&] {
    tally.stopped = true;
    const std::size_t dropped = queue.drop_queued();
    tally.dropped += dropped;
    in_flight -= dropped;
  };
  const auto observe = [&](const Observation& observation) {
    const auto started = Clock::now();
    strategy.observe(observation);
    tally.observe_seconds += std::chrono::duration<double>(Clock::now() - started).count();
    if (hooks.observed) hooks.observed(observation);
  };

  while (true) {
    bool declined = false;  // the strategy was asked and gave nothing, with configs in flight
    const bool may_ask = !exhausted && !tally.stopped && tally.proposed < limits.evaluations &&
                         (ahead ? in_flight <= limits.low_water : in_flight == 0);
    if (may_ask && hooks.must_stop()) {
      stop();
    } else if (may_ask) {
      queue.note_activity(SessionActivity::proposing);
      const auto choosing = Clock::now();
      std::vector<Config> batch = strategy.propose(std::min(limits.batch_size, limits.evaluations - tally.proposed));
      const double seconds = std::chrono::duration<double>(Clock::now() - choosing).count();
      tally.strategy_seconds += seconds;
      if (in_flight == 0) tally.strategy_wait_seconds += seconds;
      if (batch.empty()) {
        // With configs in flight an empty batch means "not before their results" (a strategy
        // keeps its proposals from outrunning what it knows); with none, nothing is left.
        if (in_flight == 0) exhausted = true;
        declined = in_flight > 0;
      } else {
        tally.proposed += batch.size();
        std::vector<EvaluationQueue::Job> jobs;
        for (const Config& config : batch) {
          auto dispatched = hooks.dispatch(config);
          if (auto* job = std::get_if<EvaluationQueue::Job>(&dispatched)) {
            job->index = jobs.size();
            jobs.push_back(std::move(*job));
          } else {
            ++tally.skipped;
            observe(std::get<Observation>(dispatched));
          }
        }
        in_flight += jobs.size();
        if (!jobs.empty()) queue.submit(std::move(jobs));
        continue;  // below the low-water mark still (a small batch, stored configs): ask again
      }
    }
    if (in_flight == 0) break;  // done, stopped, exhausted or out of budget, with nothing to wait for
    if (limits.leave_running && (tally.stopped || tally.proposed >= limits.evaluations)) {
      tally.left_running = in_flight;  // nothing more to propose: the caller takes these in
      break;
    }
    queue.note_activity(declined ? SessionActivity::held_back : SessionActivity::waiting);
    auto finished = queue.next_finished();
    if (!finished) {  // everything left was dropped
      in_flight = 0;
      continue;
    }
    // This one, and every other that finished meanwhile, before the strategy is asked again: one
    // proposal (a model fit, for bayes_opt) for all of them. Asked after each, a strategy that
    // takes longer to propose than the GPUs take to finish a config falls behind, and the GPUs
    // run dry: on 4 GPUs that was most of their idle time.
    // They are all recorded (and committed together) before the strategy hears of any.
    std::vector<Observation> taken_in;
    queue.note_activity(SessionActivity::storing);
    const auto recording = Clock::now();
    do {
      --in_flight;
      if (!tally.stopped && hooks.must_stop()) stop();  // what runs finishes and is recorded
      ++tally.evaluated;
      taken_in.push_back(hooks.record(*finished));
    } while (in_flight > 0 && (finished = queue.finished_if_any()));
    if (hooks.commit) hooks.commit();
    tally.record_seconds += std::chrono::duration<double>(Clock::now() - recording).count();
    queue.note_activity(SessionActivity::taking_in);
    for (const Observation& observation : taken_in) observe(observation);
  }
  return tally;
}

}  // namespace cutune
