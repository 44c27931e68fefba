#include "rematch.hpp"

#include <algorithm>
#include <future>
#include <optional>

namespace cutune {
namespace {

// One pass of the rematch over a problem begun again on the scheduler as `number`: each leader
// evaluated rule.rounds times, in rotated order. Each leader's finished rounds; fewer than
// rule.rounds where the run was stopped meanwhile.
std::vector<std::vector<EvaluationQueue::Finished>> evaluate_rounds(const RematchScope& scope, const Problem& problem,
                                                                    std::size_t number,
                                                                    const std::vector<std::string>& leaders) {
  std::vector<std::shared_future<Compiled>> cubins;
  for (const std::string& key : leaders)  // compile-cache hits: compiled during the search
    cubins.push_back(scope.pool.submit(
        compile_request(scope.family, scope.source, scope.space, scope.space.parse(key), problem, scope.arch),
        /*urgent=*/true));
  for (const auto& cubin : cubins) cubin.wait();  // all ready, so the lanes take them in the order given
  std::vector<EvaluationQueue::Job> jobs;
  for (const std::size_t i : rematch_order(leaders.size(), scope.rule.rounds))
    jobs.push_back({i, scope.space.parse(leaders[i]), cubins[i], number});
  const std::size_t submitted = jobs.size();
  scope.scheduler.submit(std::move(jobs));

  std::vector<std::vector<EvaluationQueue::Finished>> rounds(leaders.size());
  for (std::size_t got = 0; got < submitted; ++got) {
    if (scope.must_stop()) scope.scheduler.drop_queued();  // Ctrl-C: what runs finishes, the rows stay
    auto finished = scope.scheduler.next_finished();
    if (!finished) break;  // the rest was dropped
    rounds[finished->index].push_back(std::move(*finished));
  }
  return rounds;
}

}  // namespace

std::vector<std::string> rematch_candidates(const std::vector<db::ResultRecord>& ranked, const RematchRule& rule,
                                            const std::set<std::string>& rematched) {
  std::vector<std::string> candidates;
  if (rule.rounds == 0 || rule.most == 0 || ranked.empty() || !ranked.front().time_ms_median) return candidates;
  const double limit = *ranked.front().time_ms_median * (1 + rule.within);
  std::size_t in_window = 0;
  for (const db::ResultRecord& r : ranked) {
    // Cut-short results hold a rough median of a few samples; they are far behind by definition.
    if (!r.time_ms_median || *r.time_ms_median > limit) break;
    if (r.cut_short) continue;
    ++in_window;
    if (!rematched.count(r.config) && candidates.size() < rule.most) candidates.push_back(r.config);
  }
  if (in_window < 2) candidates.clear();
  return candidates;
}

std::vector<std::size_t> rematch_order(std::size_t leaders, std::size_t rounds) {
  std::vector<std::size_t> order;
  order.reserve(leaders * rounds);
  for (std::size_t round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < leaders; ++i) order.push_back((round + i) % leaders);
  return order;
}

Measurement pooled_measurement(const std::vector<Measurement>& rounds) {
  std::vector<double> samples;
  for (const Measurement& m : rounds) samples.insert(samples.end(), m.samples_ms.begin(), m.samples_ms.end());
  return summarize(std::move(samples));
}

EvaluationQueue::Finished merged_rounds(const std::vector<EvaluationQueue::Finished>& rounds) {
  const auto failed = std::find_if(rounds.begin(), rounds.end(), [](const EvaluationQueue::Finished& f) {
    return f.outcome.status != Status::ok || !f.outcome.measurement;
  });
  if (failed != rounds.end()) return *failed;
  EvaluationQueue::Finished merged = rounds.back();
  std::vector<Measurement> measurements;
  merged.outcome.verify_seconds = merged.outcome.benchmark_seconds = 0;
  for (const EvaluationQueue::Finished& f : rounds) {
    measurements.push_back(*f.outcome.measurement);
    merged.outcome.verify_seconds += f.outcome.verify_seconds;
    merged.outcome.benchmark_seconds += f.outcome.benchmark_seconds;
  }
  merged.outcome.measurement = pooled_measurement(measurements);
  return merged;
}

RematchTally rematch_leaders(const RematchScope& scope, const std::vector<RematchProblem>& problems) {
  RematchTally tally;
  const std::int64_t device_id = scope.context.device_id, template_id = scope.context.template_id;
  for (std::size_t at = 0; at < problems.size() && !scope.must_stop(); ++at) {
    const auto& [problem, problem_id] = problems[at];
    std::string best_before;  // the search's best: the first ranking's head
    RowContext context = scope.context;
    context.problem_id = problem_id;
    context.work = scope.family.work(*problem);
    std::set<std::string> rematched;
    std::optional<std::size_t> number;  // the problem, begun again on the scheduler: fresh buffers
    for (std::size_t pass = 0; pass < scope.rule.passes && !scope.must_stop(); ++pass) {
      const std::vector<db::ResultRecord> ranked = scope.store.ranked_results(device_id, template_id, problem_id);
      const std::vector<std::string> leaders = rematch_candidates(ranked, scope.rule, rematched);
      if (leaders.empty()) break;
      if (pass == 0) best_before = ranked.front().config;
      if (!number)  // the next one's host side is made meanwhile, in case it has leaders too
        number = scope.scheduler.begin_problem(
            *problem, scope.input_seed,
            at + 1 < problems.size() ? std::optional<Problem>(*problems[at + 1].problem) : std::nullopt);
      const auto rounds = evaluate_rounds(scope, *problem, *number, leaders);
      std::vector<db::ResultRecord> rows;
      for (std::size_t i = 0; i < leaders.size(); ++i) {
        if (rounds[i].size() < scope.rule.rounds) continue;  // a round was dropped: the row stays as it was
        EvaluationQueue::Finished merged = merged_rounds(rounds[i]);
        const auto first = std::find_if(ranked.begin(), ranked.end(),
                                        [&](const db::ResultRecord& r) { return r.config == leaders[i]; });
        merged.compile_seconds = first->compile_s;  // what its cubin cost when it was first compiled
        context.elapsed_s = scope.elapsed();
        rows.push_back(result_row(scope.space, merged, context, scope.lane_uuids.at(merged.lane)));
        rematched.insert(leaders[i]);
        tally.evaluations += rounds[i].size();
      }
      scope.store.add_results(rows);  // each replaces the leader's row (Store::insert_result)
      if (rows.size() < leaders.size()) break;
    }
    if (rematched.empty()) continue;
    ++tally.problems;
    const auto best_after = scope.store.best_result(device_id, template_id, problem_id);
    if (best_after && best_after->config != best_before) ++tally.changed;
  }
  return tally;
}

}  // namespace cutune
