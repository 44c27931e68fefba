#include "scheduler.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/error.hpp"

namespace cutune {

using Clock = std::chrono::steady_clock;

std::string_view session_activity_name(SessionActivity activity) {
  switch (activity) {
    case SessionActivity::starting:
      return "before the first search";
    case SessionActivity::proposing:
      return "the strategy proposing";
    case SessionActivity::taking_in:
      return "the strategy taking results in";
    case SessionActivity::storing:
      return "storing results";
    case SessionActivity::held_back:
      return "the strategy holding back for results";
    case SessionActivity::waiting:
      return "waiting for results";
    case SessionActivity::between_problems:
      return "between problems";
    case SessionActivity::draining:
      return "after the last proposal";
  }
  return "?";
}

Scheduler::Scheduler(std::vector<Lane*> lanes, const Space& space) : lanes_(std::move(lanes)), space_(space) {
  if (lanes_.empty()) throw Error("a scheduler needs at least one lane");
  current_.assign(lanes_.size(), std::nullopt);
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

std::size_t Scheduler::begin_problem(const Problem& problem, std::uint64_t seed, const std::optional<Problem>& next) {
  std::size_t number = 0;
  {
    std::lock_guard lock(mutex_);
    account_starved();
    problems_.push_back({problem, next, std::nullopt});
    starved_by_problem_.push_back(0);
    seed_ = seed;
    number = problems_.size() - 1;
  }
  work_ready_.notify_all();  // idle lanes set it up now, while its first configs compile
  return number;
}

void Scheduler::submit(std::vector<Job> jobs) {
  {
    std::lock_guard lock(mutex_);
    for (const Job& job : jobs) {
      if (job.problem >= problems_.size())
        throw Error(fmt::format("Scheduler::submit: problem {} was not begun", job.problem));
      // Lanes never go back: a job behind every lane would wait for ever.
      const bool reachable = std::any_of(current_.begin(), current_.end(),
                                         [&](const auto& current) { return !current || *current <= job.problem; });
      if (!reachable) throw Error(fmt::format("Scheduler::submit: every lane has moved past problem {}", job.problem));
    }
    for (Job& job : jobs) queue_.push_back(std::move(job));
  }
  work_ready_.notify_all();
}

std::deque<Scheduler::Job>::iterator Scheduler::choose(std::size_t lane) {
  const std::size_t from = current_[lane].value_or(0);
  std::optional<std::size_t> earliest;
  for (const Job& job : queue_)
    if (job.problem >= from && (!earliest || job.problem < *earliest)) earliest = job.problem;
  if (!earliest) return queue_.end();
  const auto of_earliest = [&](const Job& job) { return job.problem == *earliest; };
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Job& job) {
    return of_earliest(job) && job.compiled.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  return it != queue_.end() ? it : std::find_if(queue_.begin(), queue_.end(), of_earliest);
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

std::size_t Scheduler::drop_queued(std::size_t problem) {
  std::lock_guard lock(mutex_);
  const std::size_t dropped = std::erase_if(queue_, [&](const Job& job) { return job.problem == problem; });
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

void Scheduler::account_starved() {
  const auto now = Clock::now();
  const double lane_seconds =
      static_cast<double>(starved_lanes_) * std::chrono::duration<double>(now - accounted_at_).count();
  starved_by_activity_[static_cast<std::size_t>(activity_)] += lane_seconds;
  if (!starved_by_problem_.empty()) starved_by_problem_.back() += lane_seconds;
  accounted_at_ = now;
}

void Scheduler::start_starving(std::size_t lane) {
  account_starved();
  starved_since_[lane] = Clock::now();
  ++starved_lanes_;
}

void Scheduler::stop_starving(std::size_t lane) {
  if (!starved_since_[lane]) return;
  account_starved();
  starved_seconds_ += std::chrono::duration<double>(Clock::now() - *starved_since_[lane]).count();
  starved_since_[lane].reset();
  --starved_lanes_;
}

void Scheduler::note_activity(SessionActivity activity) {
  std::lock_guard lock(mutex_);
  if (activity == activity_) return;
  account_starved();
  activity_ = activity;
}

double Scheduler::unaccounted_starved() const {
  return static_cast<double>(starved_lanes_) * std::chrono::duration<double>(Clock::now() - accounted_at_).count();
}

std::array<double, session_activity_count> Scheduler::starved_seconds_by_activity() const {
  std::lock_guard lock(mutex_);
  auto seconds = starved_by_activity_;
  seconds[static_cast<std::size_t>(activity_)] += unaccounted_starved();  // the waits running now
  return seconds;
}

std::vector<double> Scheduler::starved_seconds_by_problem() const {
  std::lock_guard lock(mutex_);
  auto seconds = starved_by_problem_;
  if (!seconds.empty()) seconds.back() += unaccounted_starved();
  return seconds;
}

void Scheduler::improve_best(std::size_t problem, double ms) {
  std::lock_guard lock(mutex_);
  if (problem >= problems_.size()) return;
  auto& best = problems_[problem].best_ms;
  if (!best || ms < *best) best = ms;
}

void Scheduler::serve(std::size_t lane) {
  while (true) {
    Job job;
    bool have_job = false;
    std::optional<double> best;
    const ProblemSlot* switch_to = nullptr;  // a problem this lane takes up now
    std::uint64_t seed = 0;
    {
      std::unique_lock lock(mutex_);
      auto it = choose(lane);
      // Nothing of its problem is left to run and a later one has begun (so, by begin_problem's
      // contract, none of its problem will come): set the newest up while idle, as its first
      // configs compile.
      const auto behind = [&] {
        return it == queue_.end() && !problems_.empty() && current_[lane] != problems_.size() - 1;
      };
      if (it == queue_.end() && !behind()) {
        start_starving(lane);
        work_ready_.wait(lock, [&] { return stopping_ || (it = choose(lane)) != queue_.end() || behind(); });
      }
      if (stopping_) return;
      stop_starving(lane);
      std::size_t target = problems_.size() - 1;
      if (it != queue_.end()) {
        job = std::move(*it);
        queue_.erase(it);
        ++running_;
        have_job = true;
        target = job.problem;
      }
      if (current_[lane] != target) {
        current_[lane] = target;
        switch_to = &problems_[target];
        prepared_[lane] = false;
      }
      seed = seed_;
    }
    if (!have_job) {
      try {
        lanes_[lane]->set_problem(switch_to->problem, seed);
      } catch (...) {
        // Tried again with this problem's first job, whose outcome then says why.
        std::lock_guard lock(mutex_);
        current_[lane].reset();
      }
      continue;
    }
    Finished done;
    done.index = job.index;
    done.problem = job.problem;
    done.lane = lane;
    const auto started = Clock::now();
    try {
      // Set up here, on this lane's thread, while the other lanes go on with what they run.
      if (switch_to) lanes_[lane]->set_problem(switch_to->problem, seed);
      const Compiled& compiled = job.compiled.get();
      done.compile_seconds = compiled.seconds;
      done.compile_wait_seconds = std::chrono::duration<double>(Clock::now() - started).count();
      {
        std::lock_guard lock(mutex_);
        best = problems_[job.problem].best_ms;
      }
      done.outcome = lanes_[lane]->evaluate(space_, job.config, compiled, best);
      bool prepare_now = false;
      std::optional<Problem> next;
      {
        std::lock_guard lock(mutex_);
        prepare_now = !prepared_[lane];
        prepared_[lane] = true;
        next = problems_[job.problem].next;
      }
      if (prepare_now && next) lanes_[lane]->prepare(*next, seed);
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

void ProblemQueue::submit(std::vector<Job> jobs) {
  for (Job& job : jobs) job.problem = problem_;
  scheduler_.submit(std::move(jobs));
}

std::optional<EvaluationQueue::Finished> ProblemQueue::next_finished() {
  while (auto finished = scheduler_.next_finished()) {
    if (finished->problem == problem_) return finished;
    earlier_(std::move(*finished));
  }
  return std::nullopt;
}

std::optional<EvaluationQueue::Finished> ProblemQueue::finished_if_any() {
  while (auto finished = scheduler_.finished_if_any()) {
    if (finished->problem == problem_) return finished;
    earlier_(std::move(*finished));
  }
  return std::nullopt;
}

}  // namespace cutune
