// Spreading a run: the scheduler over lanes of unequal speed (simulated GPUs: no config evaluated
// twice, none lost, every lane kept busy, a slow or broken lane holding no other back), and what
// --devices and --shard take.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "copy.hpp"
#include "core/error.hpp"
#include "scale_out.hpp"
#include "ready_cubin.hpp"
#include "scheduler.hpp"

using namespace cutune;
using cutune::testing::compiled_now;
using Clock = std::chrono::steady_clock;

namespace {

// A GPU that takes `per_config` for every evaluation and remembers what it evaluated and when it
// was idle while work was waiting.
class SimulatedLane : public Lane {
 public:
  explicit SimulatedLane(std::chrono::microseconds per_config, bool breaks = false)
      : per_config_(per_config), breaks_(breaks) {}
  void set_problem(const Problem& problem, std::uint64_t) override {
    std::lock_guard lock(mutex_);
    problem_ = problem.key();
  }
  std::string problem() const {
    std::lock_guard lock(mutex_);
    return problem_;
  }
  void prepare(const Problem& next, std::uint64_t) override { prepared_ = next.key(); }
  Outcome evaluate(const Space& space, const Config& config, const Compiled&, std::optional<double> best_ms) override {
    if (breaks_) throw Error("GPU worker: the problem cannot be set up");
    std::this_thread::sleep_for(per_config_);
    std::lock_guard lock(mutex_);
    evaluated_.push_back(space.key(config));
    evaluated_under_.push_back(problem_);
    saw_best_ = saw_best_ || best_ms.has_value();
    Outcome o;
    o.measurement = summarize({1.0 + static_cast<double>(evaluated_.size())});
    return o;
  }
  double setup_seconds() const override { return 0; }

  std::vector<std::string> evaluated() const {
    std::lock_guard lock(mutex_);
    return evaluated_;
  }
  // The problem the lane was set up for at each evaluation, in order.
  std::vector<std::string> evaluated_under() const {
    std::lock_guard lock(mutex_);
    return evaluated_under_;
  }
  std::string problem_, prepared_;
  bool saw_best_ = false;

 private:
  std::chrono::microseconds per_config_;
  bool breaks_;
  mutable std::mutex mutex_;
  std::vector<std::string> evaluated_, evaluated_under_;
};

// The copy family's space for sm_90: the configs the scheduler tests hand out.
struct CopySpace {
  CopyFamily copy;
  Space space = copy.space(limits_for_arch("sm_90"));
  std::vector<Config> configs = space.enumerate();
};

// The first `count` configs as one batch, their cubins ready.
void submit_ready(Scheduler& scheduler, const std::vector<Config>& configs, std::size_t count) {
  std::vector<Scheduler::Job> jobs;
  for (std::size_t i = 0; i < count; ++i) jobs.push_back({i, configs[i], compiled_now()});
  scheduler.submit(std::move(jobs));
}

}  // namespace

TEST(Scheduler, UnequalLanesEvaluateEveryConfigOnceAndStayBusy) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  ASSERT_GE(configs.size(), 40u);
  // One lane 10× slower than the other two.
  SimulatedLane fast1(std::chrono::microseconds(2000)), fast2(std::chrono::microseconds(2000)),
      slow(std::chrono::microseconds(20000));
  Scheduler scheduler({&fast1, &slow, &fast2}, space);
  const auto problems = copy.problems({});
  scheduler.begin_problem(problems[0], 1, problems[1]);
  const auto started = Clock::now();
  submit_ready(scheduler, configs, configs.size());
  std::set<std::size_t> finished;
  std::map<std::size_t, int> per_lane;
  while (auto f = scheduler.next_finished()) {
    EXPECT_TRUE(finished.insert(f->index).second) << "config " << f->index << " came back twice";
    EXPECT_EQ(space.key(f->config), space.key(configs[f->index]));
    ++per_lane[f->lane];
    scheduler.improve_best(0, 1.0);
  }
  EXPECT_EQ(fast1.problem(), problems[0].key());
  const double wall = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_EQ(finished.size(), configs.size()) << "a config was lost";
  std::set<std::string> everything;
  for (const auto* lane : {&fast1, &slow, &fast2})
    for (const auto& key : lane->evaluated()) EXPECT_TRUE(everything.insert(key).second) << key << " evaluated twice";
  EXPECT_EQ(everything.size(), configs.size());
  // By queue, not in thirds: the slow lane takes about a 21st (10 : 1 : 10 speeds), the fast ones the rest.
  EXPECT_LT(per_lane[1], static_cast<int>(configs.size()) / 5)
      << "the slow lane held work the fast ones could have done";
  EXPECT_GT(per_lane[0], static_cast<int>(configs.size()) / 3);
  EXPECT_GT(per_lane[2], static_cast<int>(configs.size()) / 3);
  // Busy: the whole ran in about the fast lanes' time (each does ~10/21 of the configs at 2 ms),
  // far under the slow lane's third at 20 ms each, which fixed shares would have waited for.
  const double thirds = static_cast<double>(configs.size()) / 3 * 0.020;
  EXPECT_LT(wall, 0.5 * thirds) << "fixed shares would take " << thirds << " s";
  // Every lane was told to prepare the next problem after its first evaluation; lanes saw the best.
  EXPECT_EQ(fast1.prepared_, problems[1].key());
  EXPECT_EQ(slow.prepared_, problems[1].key());
  EXPECT_TRUE(fast2.saw_best_ || fast1.saw_best_);
}

TEST(Scheduler, ConfigsWhoseCubinIsReadyGoFirst) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  SimulatedLane lane(std::chrono::microseconds(100));
  Scheduler scheduler({&lane}, space);
  scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
  std::promise<Compiled> slow_compile;
  std::vector<Scheduler::Job> jobs;
  jobs.push_back({0, configs[0], slow_compile.get_future().share()});
  jobs.push_back({1, configs[1], compiled_now()});
  jobs.push_back({2, configs[2], compiled_now()});
  scheduler.submit(std::move(jobs));
  std::vector<std::size_t> order;
  for (int i = 0; i < 2; ++i) order.push_back(scheduler.next_finished()->index);
  Compiled c;
  c.ok = true;
  slow_compile.set_value(c);
  order.push_back(scheduler.next_finished()->index);
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_FALSE(scheduler.next_finished());
}

TEST(Scheduler, CountsTheTimeLanesWaitWithNothingQueued) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  SimulatedLane fast(std::chrono::microseconds(100)), slow(std::chrono::milliseconds(200));
  Scheduler scheduler({&fast, &slow}, space);
  scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
  // Both lanes free and nothing queued for 100 ms: 0.2 lane-seconds.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double before = scheduler.starved_seconds();
  EXPECT_GE(before, 0.19);
  EXPECT_LT(before, 1.0);
  // Two configs: one lane takes each; the fast one then waits ~0.2 s for the slow one.
  submit_ready(scheduler, configs, 2);
  while (scheduler.next_finished()) {
  }
  const double after = scheduler.starved_seconds();
  EXPECT_GE(after - before, 0.15) << "the fast lane's wait for the slow one's config";
  EXPECT_LT(after - before, 1.0);
}

// The idle time is filed under what the session's thread said it was doing, and under the newest
// problem begun: the time line's account of what the GPUs waited for.
TEST(Scheduler, FilesTheTimeLanesWaitUnderTheSessionsActivityAndProblem) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  SimulatedLane first(std::chrono::microseconds(100)), second(std::chrono::microseconds(100));
  Scheduler scheduler({&first, &second}, space);
  const auto problems = copy.problems({});
  ASSERT_GE(problems.size(), 2u);
  // A problem begun wakes the idle lanes to set it up; they wait again (starve) only once that is
  // done, which on a loaded machine took a few ms (0.112 lane-seconds in a 0.12 window, CI). So
  // each problem is given 30 ms to settle before the window that is checked.
  const auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); };
  scheduler.begin_problem(problems[0], 1, std::nullopt);
  settle();
  scheduler.note_activity(SessionActivity::proposing);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  scheduler.note_activity(SessionActivity::held_back);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  scheduler.begin_problem(problems[1], 1, std::nullopt);
  settle();  // filed under held_back still
  scheduler.note_activity(SessionActivity::between_problems);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const auto by_activity = scheduler.starved_seconds_by_activity();
  const auto by_problem = scheduler.starved_seconds_by_problem();
  const auto at = [&](SessionActivity a) { return by_activity[static_cast<std::size_t>(a)]; };
  // Two idle lanes, 60 ms each: 0.12 lane-seconds per activity (sleeps may run long, never short).
  EXPECT_GE(at(SessionActivity::proposing), 0.115);
  EXPECT_GE(at(SessionActivity::held_back), 0.115);
  EXPECT_GE(at(SessionActivity::between_problems), 0.115);
  EXPECT_LT(at(SessionActivity::storing), 1e-9) << "never noted";
  ASSERT_EQ(by_problem.size(), 2u);
  EXPECT_GE(by_problem[0], 0.23);
  EXPECT_GE(by_problem[1], 0.115);
  // The parts add up to the whole.
  double activities = 0, problems_sum = 0;
  for (double s : by_activity) activities += s;
  for (double s : by_problem) problems_sum += s;
  const double total = scheduler.starved_seconds();
  EXPECT_NEAR(activities, total, 0.01);
  EXPECT_NEAR(problems_sum, total, 0.01);
}

TEST(Scheduler, DroppedJobsAreNeverEvaluatedAndABrokenLaneEndsTheRun) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  {
    SimulatedLane lane(std::chrono::microseconds(20000));
    Scheduler scheduler({&lane}, space);
    scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
    submit_ready(scheduler, configs, 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::size_t dropped = scheduler.drop_queued();
    std::size_t came_back = 0;
    while (scheduler.next_finished()) ++came_back;
    EXPECT_EQ(came_back + dropped, 10u);
    EXPECT_EQ(lane.evaluated().size(), came_back);
  }
  SimulatedLane good(std::chrono::microseconds(1000)), broken(std::chrono::microseconds(1000), /*breaks=*/true);
  Scheduler scheduler({&good, &broken}, space);
  scheduler.begin_problem(copy.problems({})[0], 1, std::nullopt);
  submit_ready(scheduler, configs, 10);
  EXPECT_THROW(
      {
        while (scheduler.next_finished()) {
        }
      },
      Error);
}

// Consecutive problems overlap: a lane with nothing of its problem left takes up the next one while
// another still runs the last config of the first; every config runs under its own problem, and a
// ProblemQueue hands the first problem's late result to its handler, not to the second's search.
TEST(Scheduler, TheNextProblemStartsWhileTheLastConfigOfTheOneBeforeRuns) {
  const CopySpace fixture;
  const auto& [copy, space, configs] = fixture;
  const auto problems = copy.problems({});
  ASSERT_GE(problems.size(), 2u);
  SimulatedLane fast(std::chrono::microseconds(1000)), slow(std::chrono::milliseconds(300));
  Scheduler scheduler({&fast, &slow}, space);

  scheduler.begin_problem(problems[0], 1, problems[1]);
  // Idle lanes set a begun problem up at once, before any of its configs is queued.
  for (int i = 0; i < 1000 && (fast.problem() != problems[0].key() || slow.problem() != problems[0].key()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(fast.problem(), problems[0].key());
  EXPECT_EQ(slow.problem(), problems[0].key());
  std::vector<Scheduler::Job> first;
  for (std::size_t i = 0; i < 2; ++i) first.push_back({i, configs[i], compiled_now(), 0});
  scheduler.submit(std::move(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both lanes took one; the fast one is done

  const auto started = Clock::now();
  const std::size_t second = scheduler.begin_problem(problems[1], 1, std::nullopt);
  EXPECT_EQ(second, 1u);
  std::vector<Scheduler::Finished> handed_over;
  ProblemQueue queue(scheduler, second, [&](Scheduler::Finished&& f) { handed_over.push_back(std::move(f)); });
  std::vector<Scheduler::Job> jobs;
  for (std::size_t i = 0; i < 20; ++i) jobs.push_back({i, configs[2 + i], compiled_now()});
  queue.submit(std::move(jobs));
  std::size_t mine = 0;
  double twentieth_at = 0;
  while (auto f = queue.next_finished()) {
    EXPECT_EQ(f->problem, second);
    if (++mine == 20) twentieth_at = std::chrono::duration<double>(Clock::now() - started).count();
  }
  EXPECT_EQ(mine, 20u);
  // The fast lane ran the second problem's configs while the slow one finished the first's (the
  // slow lane takes at most one of them, 0.3 s, after its first-problem config).
  EXPECT_LT(twentieth_at, 0.55) << "the second problem waited for the first's last config";
  ASSERT_GE(handed_over.size(), 1u);
  for (const auto& f : handed_over) EXPECT_EQ(f.problem, 0u);

  // Every evaluation ran under the problem of its job: configs[0..1] under the first.
  std::size_t under_first = 0;
  for (const SimulatedLane* lane : {&fast, &slow}) {
    const auto keys = lane->evaluated();
    const auto under = lane->evaluated_under();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const bool first_problem = keys[i] == space.key(configs[0]) || keys[i] == space.key(configs[1]);
      EXPECT_EQ(under[i], problems[first_problem ? 0 : 1].key()) << keys[i];
      under_first += first_problem;
    }
  }
  EXPECT_EQ(under_first, 2u);
  // A lane left idle takes up the newest problem by itself; then a job of a problem every lane has
  // moved past would never run, so it is refused.
  for (int i = 0; i < 1000 && (fast.problem() != problems[1].key() || slow.problem() != problems[1].key()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(slow.problem(), problems[1].key());
  ASSERT_EQ(fast.problem(), problems[1].key());
  std::vector<Scheduler::Job> stale;
  stale.push_back({0, configs[30], compiled_now(), 0});
  EXPECT_THROW(scheduler.submit(std::move(stale)), Error);
}

TEST(ScaleOut, DevicesAreAListOrAll) {
  EXPECT_EQ(parse_devices("0,2,3", 4), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parse_devices("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_devices("0,0", 1), (std::vector<int>{0, 0}));  // two workers on one GPU
  for (const char* bad : {"", "0,", "a", "-1", "1.5", "0;1"}) EXPECT_THROW(parse_devices(bad, 4), UsageError) << bad;
  EXPECT_THROW(parse_devices("4", 4), UsageError);
  EXPECT_THROW(parse_devices("all", 0), UsageError);
}

TEST(ScaleOut, ShardsFromTextOrTheLaunchersEnvironment) {
  const auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_EQ(parse_shard("1/4", none), (Shard{1, 4}));
  for (const char* bad : {"4/4", "-1/2", "1/0", "1", "a/b", "1/2/3", "auto"})
    EXPECT_THROW(parse_shard(bad, none), UsageError) << bad;
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(parse_shard("auto", env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}})), (Shard{1, 2}));
  EXPECT_EQ(parse_shard("auto", env({{"PMI_RANK", "3"}, {"PMI_SIZE", "8"}})), (Shard{3, 8}));
  EXPECT_EQ(parse_shard("auto", env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})), (Shard{0, 4}));
  EXPECT_EQ(
      parse_shard("auto",
                  env({{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "5"}})),
      (Shard{2, 4}));
  // A job array's batch script also says it is task 0 of 1: the array decides.
  EXPECT_EQ(parse_shard("auto", env({{"SLURM_ARRAY_TASK_ID", "3"},
                                     {"SLURM_ARRAY_TASK_COUNT", "4"},
                                     {"SLURM_PROCID", "0"},
                                     {"SLURM_NTASKS", "1"}})),
            (Shard{3, 4}));
  EXPECT_THROW(parse_shard("auto", env({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}})), UsageError);
  EXPECT_THROW(parse_shard("auto", env({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}})), UsageError);
}

TEST(ScaleOut, ShardsSplitTheProblemsWithoutOverlap) {
  std::vector<int> seen(11, 0);
  for (int i = 0; i < 3; ++i)
    for (const std::size_t p : shard_problems(11, Shard{i, 3})) ++seen[p];
  EXPECT_EQ(seen, std::vector<int>(11, 1));
  EXPECT_EQ(shard_problems(2, Shard{3, 4}), std::vector<std::size_t>{});
  EXPECT_EQ(shard_database_path("/local/r{shard}.db", Shard{2, 4}), "/local/r2.db");
  EXPECT_EQ(shard_database_path("/local/r.db", Shard{2, 4}), "/local/r.db");
}
