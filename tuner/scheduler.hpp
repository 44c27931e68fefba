#pragma once
// Evaluations spread over several GPUs of one model. Each GPU is a lane (a GPU worker process,
// tuner/worker); the session queues a batch's configs with their compiles, and each lane takes, as
// soon as it is free, the first queued config whose cubin is ready (the first queued one when none
// is). Work goes by queue, never in fixed shares, so a slow or stalled GPU holds no other back,
// and a lane whose worker faults or hangs replaces its worker and goes on while the others run.
// Finished evaluations come back to the session's thread, the single writer, which stores them
// and tells the strategy.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <string>
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
};

// Where a search's configs are evaluated, as the tuning loop (search_loop.hpp) sees it: jobs go
// in, finished evaluations come out. The Scheduler evaluates on GPUs; a landscape replay
// (simulate/simulator.cpp) looks recorded results up. One loop serves both.
class EvaluationQueue {
 public:
  struct Job {
    std::size_t index = 0;  // the caller's: where the config stands in its batch
    Config config;
    std::shared_future<Compiled> compiled;  // none for a replay
  };
  struct Finished {
    std::size_t index = 0;
    Config config;
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
};

class Scheduler : public EvaluationQueue {
 public:
  Scheduler(std::vector<Lane*> lanes, const Space& space);
  ~Scheduler() override;                 // drops what is queued, waits for what runs
  Scheduler(const Scheduler&) = delete;  // owns threads
  Scheduler& operator=(const Scheduler&) = delete;

  std::size_t lanes() const { return lanes_.size(); }

  // With nothing queued or running: every lane gets the problem, and prepares `next` (if any)
  // after its first evaluation of this one. The best time so far starts over.
  void set_problem(const Problem& problem, std::uint64_t seed, const std::optional<Problem>& next);
  // A batch's jobs at once, so that a free lane chooses among all of them.
  void submit(std::vector<Job> jobs) override;
  // The next finished evaluation, in the order they finish; nullopt once nothing is queued or
  // running. Rethrows what broke a lane outside any outcome (a problem that cannot be set up),
  // after dropping the queue.
  std::optional<Finished> next_finished() override;
  std::optional<Finished> finished_if_any() override;
  // Queued jobs that no lane has taken are dropped (a budget ran out, Ctrl-C); running ones finish.
  // Returns how many were dropped.
  std::size_t drop_queued() override;
  // The best median so far for the current problem: lanes cut configs clearly behind it short.
  void improve_best(double ms);
  // Lane-seconds so far that lanes were free with no config queued for them: between problems, and
  // while the search had nothing more to give (its proposals wait for results).
  double starved_seconds() const;

 private:
  void serve(std::size_t lane);
  // The first finished evaluation, mutex_ held; rethrows a broken lane's failure.
  std::optional<Finished> take_finished();

  std::vector<Lane*> lanes_;
  const Space& space_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, finished_ready_;
  std::deque<Job> queue_;
  std::deque<Finished> finished_;
  std::size_t running_ = 0;
  std::optional<double> best_ms_;
  std::optional<Problem> next_problem_;
  std::uint64_t seed_ = 0;
  std::vector<bool> prepared_;  // per lane: told about the next problem
  // Per lane: since when it has been free with an empty queue (a wait in progress), and the sum
  // of such waits that ended.
  std::vector<std::optional<std::chrono::steady_clock::time_point>> starved_since_;
  double starved_seconds_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cutune
