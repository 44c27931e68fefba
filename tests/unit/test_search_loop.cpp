// One problem's search over simulated GPUs (run_problem_search): a strategy that proposes ahead is
// asked while the GPUs still have work, one that does not is asked only with nothing outstanding,
// no config is evaluated twice or lost, the budget holds, stored configs are not evaluated, and a
// stop drops what is queued but records what was running.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "copy.hpp"
#include "ready_cubin.hpp"
#include "search_loop.hpp"
#include "strategies/strategy.hpp"

using namespace cutune;
using cutune::testing::compiled_now;

namespace {

// A GPU taking a fixed time per config.
class TimedLane : public Lane {
 public:
  explicit TimedLane(std::chrono::microseconds per_config) : per_config_(per_config) {}
  void set_problem(const Problem&, std::uint64_t) override {}
  void prepare(const Problem&, std::uint64_t) override {}
  Outcome evaluate(const Space& space, const Config& config, const Compiled&, std::optional<double>) override {
    ++started;
    std::this_thread::sleep_for(per_config_);
    Outcome o;
    // Times that differ by config, so that a model-based strategy has something to learn.
    o.measurement = summarize({1.0 + static_cast<double>(std::hash<std::string>{}(space.key(config)) % 1000) / 100.0});
    return o;
  }
  double setup_seconds() const override { return 0; }

  std::atomic<std::size_t> started = 0;  // evaluations this GPU began

 private:
  std::chrono::microseconds per_config_;
};

// Wraps a strategy and records, at every call of propose, how many configs it had proposed and
// not yet seen observed.
class Watched : public Strategy {
 public:
  explicit Watched(std::unique_ptr<Strategy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::vector<Config> propose(std::size_t max_batch) override {
    asked_with_outstanding.push_back(proposed - observed);
    auto batch = inner_->propose(max_batch);
    proposed += batch.size();
    if (!batch.empty()) outstanding_after_batch.push_back({proposed - observed, observed});
    return batch;
  }
  void observe(const Observation& o) override {
    ++observed;
    inner_->observe(o);
  }
  bool proposes_ahead() const override { return inner_->proposes_ahead(); }

  std::size_t proposed = 0, observed = 0;
  std::vector<std::size_t> asked_with_outstanding;
  std::vector<std::pair<std::size_t, std::size_t>> outstanding_after_batch;  // (outstanding, observed)

 private:
  std::unique_ptr<Strategy> inner_;
};

struct Searched {
  SearchTally tally;
  std::multiset<std::string> evaluated, observed;
  std::size_t started = 0;               // evaluations the GPUs began, in all
  std::size_t started_at_stop = 0;       // of which before must_stop first said true
  std::size_t commits = 0;               // calls of hooks.commit
  std::size_t observed_uncommitted = 0;  // evaluations the strategy heard of before their commit
};

// One search of copy's sm_90 space on `lanes` simulated GPUs; configs in `stored` count as
// measured before; `stop_after` evaluations, must_stop turns true.
Searched search(Strategy& strategy, std::size_t lanes, const SearchLimits& limits,
                const std::set<std::string>& stored = {}, std::size_t stop_after = SIZE_MAX) {
  static CopyFamily copy;
  static const Space space = copy.space(limits_for_arch("sm_90"));
  std::vector<std::unique_ptr<TimedLane>> owned;
  std::vector<Lane*> pointers;
  for (std::size_t i = 0; i < lanes; ++i) {
    owned.push_back(std::make_unique<TimedLane>(std::chrono::microseconds(300 + 200 * i)));
    pointers.push_back(owned.back().get());
  }
  Scheduler scheduler(pointers, space);
  scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
  Searched out;
  SearchHooks hooks;
  hooks.dispatch = [&](const Config& config) -> std::variant<Scheduler::Job, Observation> {
    if (stored.count(space.key(config))) return Observation{config, 5.0, 0};
    return Scheduler::Job{0, config, compiled_now()};
  };
  std::set<std::string> uncommitted;
  hooks.record = [&](const Scheduler::Finished& finished) {
    out.evaluated.insert(space.key(finished.config));
    uncommitted.insert(space.key(finished.config));
    return Observation{finished.config, finished.outcome.measurement->median_ms, 0.001};
  };
  hooks.commit = [&] {
    ++out.commits;
    uncommitted.clear();
  };
  hooks.observed = [&](const Observation& o) {
    out.observed.insert(space.key(o.config));
    out.observed_uncommitted += uncommitted.count(space.key(o.config));
  };
  const auto started = [&] {
    std::size_t n = 0;
    for (const auto& lane : owned) n += lane->started;
    return n;
  };
  hooks.must_stop = [&] {
    const bool stop = out.evaluated.size() >= stop_after;
    if (stop && !out.started_at_stop) out.started_at_stop = started();
    return stop;
  };
  out.tally = run_problem_search(strategy, scheduler, limits, hooks);
  out.started = started();
  return out;
}

const Space& copy_space() {
  static CopyFamily copy;
  static const Space space = copy.space(limits_for_arch("sm_90"));
  return space;
}

bool no_repeats(const std::multiset<std::string>& keys) {
  return std::set<std::string>(keys.begin(), keys.end()).size() == keys.size();
}

}  // namespace

TEST(SearchLoop, AStrategyThatProposesAheadIsAskedWhileTheGpusStillHaveWork) {
  const std::size_t space_size = copy_space().enumerate().size();
  ASSERT_GT(space_size, 40u);
  Watched strategy(make_strategy("brute_force", copy_space(), 1));
  const Searched s = search(strategy, 2, {space_size, 8, 4});
  EXPECT_EQ(s.tally.evaluated, space_size);
  EXPECT_EQ(s.evaluated.size(), space_size);
  EXPECT_TRUE(no_repeats(s.evaluated));
  EXPECT_EQ(s.observed.size(), space_size);  // every result went back to the strategy
  // Asked again with configs still out (at most the low-water mark), not only after a drain.
  std::size_t ahead = 0;
  for (std::size_t outstanding : strategy.asked_with_outstanding) {
    EXPECT_LE(outstanding, 4u);
    ahead += outstanding > 0;
  }
  EXPECT_GT(ahead, 0u);
}

TEST(SearchLoop, AStrategyThatDoesNotProposeAheadIsAskedOnlyWithNothingOutstanding) {
  Watched strategy(make_strategy("genetic_algorithm", copy_space(), 1));
  ASSERT_FALSE(strategy.proposes_ahead());
  const Searched s = search(strategy, 2, {60, 16, 4});
  for (std::size_t outstanding : strategy.asked_with_outstanding) EXPECT_EQ(outstanding, 0u);
  EXPECT_LE(s.tally.proposed, 60u);
  EXPECT_EQ(s.tally.evaluated, s.evaluated.size());
  EXPECT_TRUE(no_repeats(s.evaluated));
}

TEST(SearchLoop, BayesOptAskedAheadKeepsAtMostHalfAsManyOutstandingAsObserved) {
  Watched strategy(make_strategy("bayes_opt", copy_space(), 3));
  ASSERT_TRUE(strategy.proposes_ahead());
  const Searched s = search(strategy, 2, {40, 16, 8});
  EXPECT_EQ(s.tally.evaluated, 40u);
  EXPECT_TRUE(no_repeats(s.evaluated));
  // After the opening design, a batch never leaves more outstanding than max(2, observed / 2).
  ASSERT_GT(strategy.outstanding_after_batch.size(), 2u);
  for (std::size_t i = 1; i < strategy.outstanding_after_batch.size(); ++i) {
    const auto [outstanding, observed] = strategy.outstanding_after_batch[i];
    EXPECT_LE(outstanding, std::max<std::size_t>(2, observed / 2))
        << "batch " << i << " after " << observed << " observed";
  }
}

// A strategy slower to propose than the GPUs are to evaluate, which, like bayes_opt, keeps at
// most four configs outstanding (an empty batch until results come back).
class SlowToPropose : public Watched {
 public:
  using Watched::Watched;
  std::vector<Config> propose(std::size_t max_batch) override {
    observed_when_asked.push_back(observed);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const std::size_t outstanding = proposed - observed;
    if (outstanding >= 4) return {};
    return Watched::propose(std::min(max_batch, 4 - outstanding));
  }
  std::vector<std::size_t> observed_when_asked;
};

TEST(SearchLoop, ResultsThatFinishedWhileTheStrategyChoseAreAllTakenInBeforeItIsAskedAgain) {
  const std::size_t space_size = copy_space().enumerate().size();
  SlowToPropose strategy(make_strategy("random_sampling", copy_space(), 1));
  ASSERT_TRUE(strategy.proposes_ahead());
  // Four GPUs finish a config every 0.3-0.9 ms; the strategy takes 3 ms to propose.
  const Searched s = search(strategy, 4, {space_size, 4, 8});
  EXPECT_EQ(s.tally.evaluated, space_size);
  EXPECT_TRUE(no_repeats(s.evaluated));
  std::size_t several = 0;  // asks that came after more than one new result
  for (std::size_t i = 1; i < strategy.observed_when_asked.size(); ++i)
    several += strategy.observed_when_asked[i] > strategy.observed_when_asked[i - 1] + 1;
  EXPECT_GT(several, 0u) << "each result was followed by its own proposal";
  EXPECT_LT(strategy.observed_when_asked.size(), space_size) << "fewer proposals than results";
}

// The session stores the results taken in together in one transaction (hooks.commit), before the
// strategy hears of them: fewer commits than results, and nothing observed that is not stored.
TEST(SearchLoop, ResultsTakenInTogetherAreCommittedOnceBeforeTheStrategyHearsOfThem) {
  const std::size_t space_size = copy_space().enumerate().size();
  SlowToPropose strategy(make_strategy("random_sampling", copy_space(), 1));
  const Searched s = search(strategy, 4, {space_size, 4, 8});
  EXPECT_EQ(s.tally.evaluated, space_size);
  EXPECT_EQ(s.observed_uncommitted, 0u);
  EXPECT_GT(s.commits, 0u);
  EXPECT_LT(s.commits, s.tally.evaluated) << "a commit per result";
}

// The scheduler's queue as the loop sees it, remembering what the loop said it was doing.
class NotingQueue : public EvaluationQueue {
 public:
  explicit NotingQueue(Scheduler& scheduler) : scheduler_(scheduler) {}
  void submit(std::vector<Job> jobs) override { scheduler_.submit(std::move(jobs)); }
  std::optional<Finished> next_finished() override { return scheduler_.next_finished(); }
  std::optional<Finished> finished_if_any() override { return scheduler_.finished_if_any(); }
  std::size_t drop_queued() override { return scheduler_.drop_queued(); }
  void note_activity(SessionActivity activity) override { noted.push_back(activity); }
  std::vector<SessionActivity> noted;

 private:
  Scheduler& scheduler_;
};

// The loop tells the queue what it does, so that GPUs with nothing queued are filed under the
// right cause: "held back" only after the strategy declined with configs in flight, "waiting"
// when the loop itself keeps enough in flight.
std::vector<SessionActivity> noted_during(Strategy& strategy, const SearchLimits& limits) {
  TimedLane lane(std::chrono::microseconds(500));
  Scheduler scheduler({&lane}, copy_space());
  static CopyFamily copy;
  scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
  NotingQueue queue(scheduler);
  SearchHooks hooks;
  hooks.dispatch = [&](const Config& config) -> std::variant<Scheduler::Job, Observation> {
    return Scheduler::Job{0, config, compiled_now()};
  };
  hooks.record = [&](const Scheduler::Finished& finished) {
    return Observation{finished.config, finished.outcome.measurement->median_ms, 0.001};
  };
  hooks.must_stop = [] { return false; };
  run_problem_search(strategy, queue, limits, hooks);
  return queue.noted;
}

// Proposes one config at a time and declines while it is out (a sequential strategy asked ahead).
class OneAtATime : public Watched {
 public:
  using Watched::Watched;
  std::vector<Config> propose(std::size_t) override {
    return proposed > observed ? std::vector<Config>{} : Watched::propose(1);
  }
};

TEST(SearchLoop, TellsTheQueueWhetherTheStrategyHeldBackOrTheLoopWaits) {
  const auto count = [](const std::vector<SessionActivity>& noted, SessionActivity a) {
    return std::count(noted.begin(), noted.end(), a);
  };
  OneAtATime declining(make_strategy("brute_force", copy_space(), 1));
  const auto held = noted_during(declining, {10, 8, 4});
  EXPECT_GT(count(held, SessionActivity::held_back), 0);
  // It never had more than one in flight: the loop waits unasked only once the budget is proposed.
  const auto last_proposal = std::find(held.rbegin(), held.rend(), SessionActivity::proposing).base();
  EXPECT_EQ(std::count(held.begin(), last_proposal, SessionActivity::waiting), 0);
  for (std::size_t i = 1; i < held.size(); ++i)
    if (held[i] == SessionActivity::held_back) EXPECT_EQ(held[i - 1], SessionActivity::proposing);
  // Results are stored, then the strategy takes them in.
  const auto storing = std::find(held.begin(), held.end(), SessionActivity::storing);
  ASSERT_NE(storing, held.end());
  ASSERT_NE(storing + 1, held.end());
  EXPECT_EQ(*(storing + 1), SessionActivity::taking_in);

  // Batches of 8 and a low-water mark of 2: the loop waits with more than 2 in flight, unasked.
  Watched eager(make_strategy("brute_force", copy_space(), 1));
  const auto waited = noted_during(eager, {24, 8, 2});
  EXPECT_GT(count(waited, SessionActivity::waiting), 0);
  EXPECT_EQ(count(waited, SessionActivity::held_back), 0) << "brute force never declines";
}

TEST(SearchLoop, StoredConfigsAreObservedNotEvaluatedAndTheBudgetCountsThem) {
  const auto configs = copy_space().enumerate();
  std::set<std::string> stored;
  for (std::size_t i = 0; i < 10; ++i) stored.insert(copy_space().key(configs[i]));
  Watched strategy(make_strategy("brute_force", copy_space(), 1));
  const Searched s = search(strategy, 2, {30, 8, 4}, stored);
  EXPECT_EQ(s.tally.skipped, 10u);
  EXPECT_EQ(s.tally.evaluated, 20u);
  EXPECT_EQ(s.tally.proposed, 30u);
  for (const auto& key : stored) EXPECT_EQ(s.evaluated.count(key), 0u) << key;
  EXPECT_EQ(s.observed.size(), 30u);
}

TEST(SearchLoop, AStopDropsWhatIsQueuedAndRecordsWhatWasRunning) {
  const std::size_t space_size = copy_space().enumerate().size();
  Watched strategy(make_strategy("brute_force", copy_space(), 1));
  const Searched s = search(strategy, 2, {space_size, 32, 4}, {}, 5);
  EXPECT_TRUE(s.tally.stopped);
  EXPECT_GE(s.tally.evaluated, 5u);
  // Everything a GPU began is recorded, and after the stop at most one more per GPU began (taken
  // between must_stop and the drop). How many had finished unread by then depends on how busy
  // the machine is, so the count of evaluations is bounded by what had begun, not by 5 + 2.
  EXPECT_EQ(s.tally.evaluated, s.started);
  EXPECT_LE(s.started, s.started_at_stop + 2u);
  EXPECT_EQ(s.tally.evaluated + s.tally.dropped, s.tally.proposed);  // none lost in between
  EXPECT_EQ(strategy.observed, s.tally.evaluated);
}

// With leave_running, a search returns once it has proposed its budget; what still runs is taken
// in by the next problem's queue (its handler) or by the caller at the end: nothing lost, nothing
// twice, and the first problem's slow last config does not hold the second problem back.
TEST(SearchLoop, LeftRunningConfigsAreTakenInByTheNextProblemsQueue) {
  static CopyFamily copy;
  const Space& space = copy_space();
  const auto problems = copy.problems({});
  ASSERT_GE(problems.size(), 2u);
  TimedLane fast(std::chrono::microseconds(300)), slow(std::chrono::milliseconds(100));
  Scheduler scheduler({&fast, &slow}, space);
  SearchLimits limits{8, 8, 4};
  limits.leave_running = true;

  std::map<std::size_t, std::multiset<std::string>> recorded;  // per problem
  const auto hooks_for = [&](std::size_t problem) {
    SearchHooks hooks;
    hooks.dispatch = [](const Config& config) -> std::variant<Scheduler::Job, Observation> {
      return Scheduler::Job{0, config, compiled_now()};
    };
    hooks.record = [&, problem](const Scheduler::Finished& f) {
      EXPECT_EQ(f.problem, problem);
      recorded[problem].insert(space.key(f.config));
      return Observation{f.config, f.outcome.measurement->median_ms, 0.001};
    };
    hooks.must_stop = [] { return false; };
    return hooks;
  };
  const auto handed_over = [&](Scheduler::Finished&& f) { recorded[f.problem].insert(space.key(f.config)); };

  auto first_strategy = make_strategy("brute_force", space, 1);
  const std::size_t first = scheduler.begin_problem(problems[0], 1, problems[1]);
  ProblemQueue first_queue(scheduler, first, handed_over);
  const SearchTally one = run_problem_search(*first_strategy, first_queue, limits, hooks_for(first));
  EXPECT_EQ(one.proposed, 8u);
  EXPECT_GT(one.left_running, 0u) << "the slow lane's config was waited for";
  EXPECT_EQ(one.evaluated + one.left_running, 8u);

  auto second_strategy = make_strategy("brute_force", space, 2);
  const std::size_t second = scheduler.begin_problem(problems[1], 1, std::nullopt);
  ProblemQueue second_queue(scheduler, second, handed_over);
  const SearchTally two = run_problem_search(*second_strategy, second_queue, limits, hooks_for(second));
  while (auto f = scheduler.next_finished()) handed_over(std::move(*f));

  EXPECT_EQ(two.proposed, 8u);
  for (std::size_t problem : {first, second}) {
    EXPECT_EQ(recorded[problem].size(), 8u) << "problem " << problem;
    EXPECT_TRUE(no_repeats(recorded[problem])) << "problem " << problem;
  }
}
