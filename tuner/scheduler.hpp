#pragma once
// Evaluations spread over several GPUs of one model. Each GPU is a lane (a GPU worker process,
// tuner/worker); the session queues a batch's configs with their compiles, and each lane takes, as
// soon as it is free, the first queued config whose cubin is ready (the first queued one when none
// is). Work goes by queue, never in fixed shares, so a slow or stalled GPU holds no other back,
// and a lane whose worker faults or hangs replaces its worker and goes on while the others run.
// Finished evaluations come back to the session's thread, the single writer, which stores them
// and tells the strategy.
//
// Consecutive problems overlap: once a problem's search has proposed its last configs, the next
// problem begins while they run. Jobs carry their problem's number; a lane keeps to its problem
// while that one has jobs queued, then moves on to the next on its own thread (setting it up
// there), so no GPU waits for the slowest GPU's last config of a problem, nor for the others to
// set the next one up.
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "compile.hpp"
#include "evaluate.hpp"

namespace cutune {

// One GPU's evaluations, driven by one scheduler thread at a time.
class Lane {
 public:
  virtual ~Lane() = default;
  virtual void set_problem(const Problem& problem, std::uint64_t seed) = 0;
  // The next problem's host side may be computed while this one is measured.
  virtual void prepare(const Problem& next, std::uint64_t seed) = 0;
  virtual Outcome evaluate(const Space& space, const Config& config, const Compiled& compiled,
                           std::optional<double> best_ms) = 0;
  // Seconds the GPU waited for problems to be set up, so far.
  virtual double setup_seconds() const = 0;
  // Of the set-up, seconds spent on problems' host side (inputs, CPU references) or waiting for it.
  virtual double setup_host_seconds() const { return 0; }
  // Of the set-up, seconds the GPU's side took: freeing the last problem's buffers, allocating and
  // filling this one's (uploads, expected outputs computed on the GPU).
  virtual double setup_device_seconds() const { return 0; }
};

// What the session's thread is doing. GPUs with nothing queued are waiting for that thread or for
// the strategy; the scheduler files their idle time under what the thread did meanwhile, so that
// the time line says which of them the GPUs waited for.
enum class SessionActivity : std::size_t {
  starting,          // before the first problem's search began
  proposing,         // the strategy choosing configs
  taking_in,         // the strategy taking results in (bayes_opt fits its model)
  storing,           // finished evaluations recorded and committed
  held_back,         // waiting for results: the strategy declined to propose more before them
  waiting,           // waiting for results, with as many in flight as the loop keeps
  between_problems,  // one problem's search returned; the next one's strategy is being made
  draining,          // every problem proposed; the last configs run
};
inline constexpr std::size_t session_activity_count = 8;
std::string_view session_activity_name(SessionActivity activity);

// Where a search's configs are evaluated, as the tuning loop (search_loop.hpp) sees it: jobs go
// in, finished evaluations come out. The Scheduler evaluates on GPUs; a landscape replay
// (simulate/simulator.cpp) looks recorded results up. One loop serves both.
class EvaluationQueue {
 public:
  struct Job {
    std::size_t index = 0;  // the caller's: where the config stands in its batch
    Config config;
    std::shared_future<Compiled> compiled;  // none for a replay
    std::size_t problem = 0;                // the scheduler's problem number (begin_problem)
  };
  struct Finished {
    std::size_t index = 0;
    Config config;
    std::size_t problem = 0;
    double compile_seconds = 0;  // what its cubin cost (a cache hit: the look-up)
    Outcome outcome;
    std::size_t lane = 0;
    double compile_wait_seconds = 0;  // the lane idle, waiting for the cubin
    double lane_seconds = 0;          // the lane's time on it, waiting included
    std::exception_ptr failure;       // the worker could not evaluate at all (its problem set-up failed)
  };

  virtual ~EvaluationQueue() = default;
  // A batch's jobs at once.
  virtual void submit(std::vector<Job> jobs) = 0;
  // The next finished evaluation; nullopt once nothing is queued or running.
  virtual std::optional<Finished> next_finished() = 0;
  // A finished evaluation already waiting to be read, without waiting for one; nullopt when none
  // is. A replay has none: it hands results out one at a time, in the order a sequential tuner
  // would have seen them.
  virtual std::optional<Finished> finished_if_any() { return std::nullopt; }
  // Drops the queued jobs nothing has started; returns how many.
  virtual std::size_t drop_queued() = 0;
  // The session's thread says what it does now (a replay ignores it).
  virtual void note_activity(SessionActivity) {}
};

class Scheduler : public EvaluationQueue {
 public:
  Scheduler(std::vector<Lane*> lanes, const Space& space);
  ~Scheduler() override;                 // drops what is queued, waits for what runs
  Scheduler(const Scheduler&) = delete;  // owns threads
  Scheduler& operator=(const Scheduler&) = delete;

  std::size_t lanes() const { return lanes_.size(); }

  // The next problem, numbered 0, 1, … in the order begun; its jobs carry the number. Call it
  // once every job of the problems before has been submitted: earlier problems' jobs may still be
  // queued or running, but no more come. A lane takes up this problem once none of its current
  // problem's jobs are queued (at once, if it is idle), and prepares `next` (if any) after its
  // first evaluation of it. The problems' seed is the same for all.
  std::size_t begin_problem(const Problem& problem, std::uint64_t seed, const std::optional<Problem>& next);
  // A batch's jobs at once, so that a free lane chooses among all of them. Jobs of a problem no
  // lane may go back to (one before every lane's current) are refused with an Error.
  void submit(std::vector<Job> jobs) override;
  // The next finished evaluation, in the order they finish; nullopt once nothing is queued or
  // running. Rethrows what broke a lane outside any outcome (a problem that cannot be set up),
  // after dropping the queue.
  std::optional<Finished> next_finished() override;
  std::optional<Finished> finished_if_any() override;
  // Queued jobs that no lane has taken are dropped (a budget ran out, Ctrl-C); running ones finish.
  // Returns how many were dropped.
  std::size_t drop_queued() override;
  // The same for one problem's jobs.
  std::size_t drop_queued(std::size_t problem);
  // The best median so far for a problem: lanes cut its configs clearly behind it short.
  void improve_best(std::size_t problem, double ms);
  // Lane-seconds so far that lanes were free with no config queued for them: between problems, and
  // while the search had nothing more to give (its proposals wait for results).
  double starved_seconds() const;
  void note_activity(SessionActivity activity) override;
  // The same lane-seconds, by what the session's thread did meanwhile (SessionActivity's order)
  // and by problem (the newest one begun at the time).
  std::array<double, session_activity_count> starved_seconds_by_activity() const;
  std::vector<double> starved_seconds_by_problem() const;

 private:
  void serve(std::size_t lane);
  // The first finished evaluation, mutex_ held; rethrows a broken lane's failure.
  std::optional<Finished> take_finished();
  // The queued job `lane` should take next, mutex_ held: of the earliest problem it may still run
  // (its current one or later), the first whose cubin is ready, else the first; end() if none.
  std::deque<Job>::iterator choose(std::size_t lane);
  // Files the lane-seconds of idle lanes since the last call under the current activity and
  // problem, mutex_ held; called before either, or the number of idle lanes, changes.
  void account_starved();
  double unaccounted_starved() const;  // idle lane-seconds since the last account_starved
  void start_starving(std::size_t lane);
  void stop_starving(std::size_t lane);

  struct ProblemSlot {
    Problem problem;
    std::optional<Problem> next;
    std::optional<double> best_ms;
  };

  std::vector<Lane*> lanes_;
  const Space& space_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, finished_ready_;
  std::deque<Job> queue_;
  std::deque<Finished> finished_;
  std::size_t running_ = 0;
  std::deque<ProblemSlot> problems_;  // by number: deque, so that a lane's reference stays valid
  std::uint64_t seed_ = 0;
  // Per lane: the problem it is set up for (none before its first job), and whether it was told
  // about that problem's successor.
  std::vector<std::optional<std::size_t>> current_;
  std::vector<bool> prepared_;
  // Per lane: since when it has been free with an empty queue (a wait in progress), and the sum
  // of such waits that ended.
  std::vector<std::optional<std::chrono::steady_clock::time_point>> starved_since_;
  double starved_seconds_ = 0;
  std::size_t starved_lanes_ = 0;
  SessionActivity activity_ = SessionActivity::starting;
  std::chrono::steady_clock::time_point accounted_at_ = std::chrono::steady_clock::now();
  std::array<double, session_activity_count> starved_by_activity_{};
  std::vector<double> starved_by_problem_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// One problem's side of a Scheduler shared by consecutive problems, as the tuning loop sees it:
// jobs submitted here carry the problem's number, and what finishes of earlier problems while this
// one's search waits goes to `earlier` (the session stores it) instead of to this search.
class ProblemQueue : public EvaluationQueue {
 public:
  using Earlier = std::function<void(Finished&&)>;
  ProblemQueue(Scheduler& scheduler, std::size_t problem, Earlier earlier)
      : scheduler_(scheduler), problem_(problem), earlier_(std::move(earlier)) {}

  void submit(std::vector<Job> jobs) override;
  // This problem's next finished evaluation; nullopt once nothing at all is queued or running.
  std::optional<Finished> next_finished() override;
  std::optional<Finished> finished_if_any() override;
  std::size_t drop_queued() override { return scheduler_.drop_queued(problem_); }
  void note_activity(SessionActivity activity) override { scheduler_.note_activity(activity); }

 private:
  Scheduler& scheduler_;
  std::size_t problem_;
  Earlier earlier_;
};

}  // namespace cutune
