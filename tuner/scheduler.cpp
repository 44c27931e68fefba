#include "scheduler.hpp"

#include <algorithm>
#include <chrono>

#include "core/error.hpp"

namespace cutune {

using Clock = std::chrono::steady_clock;

Scheduler::Scheduler(std::vector<Lane*> lanes, const Space& space) : lanes_(std::move(lanes)), space_(space) {
  if (lanes_.empty()) throw Error("a scheduler needs at least one lane");
  prepared_.assign(lanes_.size(), true);
  starved_since_.assign(lanes_.size(), std::nullopt);
  for (std::size_t lane = 0; lane < lanes_.size(); ++lane) threads_.emplace_back([this, lane] { serve(lane); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void Scheduler::set_problem(const Problem& problem, std::uint64_t seed, const std::optional<Problem>& next) {
  std::lock_guard lock(mutex_);
  if (!queue_.empty() || running_ > 0) throw Error("Scheduler::set_problem while configs are queued or running");
  for (Lane* lane : lanes_) lane->set_problem(problem, seed);  // the lanes' threads are idle
  best_ms_.reset();
  next_problem_ = next;
  seed_ = seed;
  prepared_.assign(lanes_.size(), !next.has_value());
}

void Scheduler::submit(std::vector<Job> jobs) {
  {
    std::lock_guard lock(mutex_);
    for (Job& job : jobs) queue_.push_back(std::move(job));
  }
  work_ready_.notify_all();
}

std::optional<Scheduler::Finished> Scheduler::next_finished() {
  std::unique_lock lock(mutex_);
  finished_ready_.wait(lock, [this] { return !finished_.empty() || (queue_.empty() && running_ == 0); });
  return take_finished();
}

std::optional<Scheduler::Finished> Scheduler::finished_if_any() {
  std::lock_guard lock(mutex_);
  return take_finished();
}

std::optional<Scheduler::Finished> Scheduler::take_finished() {
  if (finished_.empty()) return std::nullopt;
  Finished done = std::move(finished_.front());
  finished_.pop_front();
  if (done.failure) {
    queue_.clear();
    std::rethrow_exception(done.failure);
  }
  return done;
}

std::size_t Scheduler::drop_queued() {
  std::lock_guard lock(mutex_);
  const std::size_t dropped = queue_.size();
  queue_.clear();
  finished_ready_.notify_all();
  return dropped;
}

double Scheduler::starved_seconds() const {
  std::lock_guard lock(mutex_);
  double seconds = starved_seconds_;
  const auto now = Clock::now();
  for (const auto& since : starved_since_)
    if (since) seconds += std::chrono::duration<double>(now - *since).count();
  return seconds;
}

void Scheduler::improve_best(double ms) {
  std::lock_guard lock(mutex_);
  if (!best_ms_ || ms < *best_ms_) best_ms_ = ms;
}

void Scheduler::serve(std::size_t lane) {
  while (true) {
    Job job;
    std::optional<double> best;
    {
      std::unique_lock lock(mutex_);
      if (queue_.empty()) starved_since_[lane] = Clock::now();
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      if (starved_since_[lane]) {
        starved_seconds_ += std::chrono::duration<double>(Clock::now() - *starved_since_[lane]).count();
        starved_since_[lane].reset();
      }
      // The first job whose cubin is ready; else the first in line.
      auto it = std::find_if(queue_.begin(), queue_.end(), [](const Job& j) {
        return j.compiled.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      });
      if (it == queue_.end()) it = queue_.begin();
      job = std::move(*it);
      queue_.erase(it);
      ++running_;
    }
    Finished done;
    done.index = job.index;
    done.lane = lane;
    const auto started = Clock::now();
    try {
      const Compiled& compiled = job.compiled.get();
      done.compile_seconds = compiled.seconds;
      done.compile_wait_seconds = std::chrono::duration<double>(Clock::now() - started).count();
      {
        std::lock_guard lock(mutex_);
        best = best_ms_;
      }
      done.outcome = lanes_[lane]->evaluate(space_, job.config, compiled, best);
      bool prepare_now = false;
      std::optional<Problem> next;
      {
        std::lock_guard lock(mutex_);
        prepare_now = !prepared_[lane];
        prepared_[lane] = true;
        next = next_problem_;
      }
      if (prepare_now && next) lanes_[lane]->prepare(*next, seed_);
    } catch (...) {
      // Broken outside what an outcome reports (the worker answered with a fatal error, the compile
      // pool stopped): the session ends with the reason.
      done.failure = std::current_exception();
    }
    done.config = std::move(job.config);
    done.lane_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    {
      std::lock_guard lock(mutex_);
      finished_.push_back(std::move(done));
      --running_;
    }
    finished_ready_.notify_all();
  }
}

}  // namespace cutune
