#include "session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "compile_pool.hpp"
#include "evaluate.hpp"
#include "worker.hpp"
#include "strategies/strategy.hpp"

namespace cutune {
namespace {

using Clock = std::chrono::steady_clock;

// Spaces up to this size are compiled ahead in full when a run evaluates all of them.
constexpr std::size_t kMaxPrefetch = 8192;

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

// Ctrl-C finishes the config in flight, stores it, and ends the run cleanly.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    previous_ = std::signal(SIGINT, on_interrupt);
  }
  ~InterruptGuard() { std::signal(SIGINT, previous_); }
  InterruptGuard(const InterruptGuard&) = delete;  // restores one handler once
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*previous_)(int) = SIG_DFL;
};

std::string format_duration(double seconds) {
  if (seconds < 0) return "?";
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

// One line, rewritten in place on a terminal; on a pipe, a line every few seconds.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled), tty_(isatty(STDERR_FILENO)) {}
  void update(const std::string& text, bool force = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (!force && now - last_ < (tty_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5))) return;
    last_ = now;
    if (tty_)
      std::cerr << "\r\033[K" << text << std::flush;
    else
      std::cerr << text << '\n';
  }
  void finish() {
    if (enabled_ && tty_) std::cerr << '\n';
  }

 private:
  bool enabled_, tty_;
  Clock::time_point last_{};
};

// The time a run has left, from what configs of each problem cost as measured: large problems cost
// far more per config than small ones (their samples and verification move more bytes), so one
// rate for the whole run says "9 s" with minutes to go. A problem not measured yet is costed from
// the measured one nearest in size, scaled up by the size ratio when it is larger.
class Eta {
 public:
  Eta(const std::vector<Problem>& problems, std::size_t per_problem) : problems_(problems), per_problem_(per_problem) {}

  void record(const Problem& problem, double seconds) {
    auto& [total, count] = cost_[problem.key()];
    total += seconds;
    ++count;
  }

  // Seconds for `left_here` more configs of `current` and every config of the problems after it;
  // -1 before anything was measured.
  double seconds_left(const Problem& current, std::size_t left_here) const {
    double seconds = 0;
    bool after = false;
    for (const Problem& p : problems_) {
      if (p.key() == current.key()) {
        after = true;
        const auto rate = per_config(p);
        if (!rate) return -1;
        seconds += *rate * static_cast<double>(left_here);
      } else if (after) {
        const auto rate = per_config(p);
        if (!rate) return -1;
        seconds += *rate * static_cast<double>(per_problem_);
      }
    }
    return seconds;
  }

 private:
  std::optional<double> per_config(const Problem& p) const {
    if (auto it = cost_.find(p.key()); it != cost_.end()) return it->second.first / static_cast<double>(it->second.second);
    std::optional<double> rate;
    double nearest = 0;
    for (const Problem& q : problems_) {
      const auto it = cost_.find(q.key());
      if (it == cost_.end()) continue;
      const double distance = std::fabs(std::log(static_cast<double>(std::max<std::int64_t>(1, p.size()))) -
                                        std::log(static_cast<double>(std::max<std::int64_t>(1, q.size()))));
      if (rate && distance >= nearest) continue;
      nearest = distance;
      rate = it->second.first / static_cast<double>(it->second.second) *
             std::max(1.0, static_cast<double>(p.size()) / static_cast<double>(std::max<std::int64_t>(1, q.size())));
    }
    return rate;
  }

  const std::vector<Problem>& problems_;
  std::size_t per_problem_;
  std::map<std::string, std::pair<double, std::int64_t>> cost_;  // problem key → seconds, configs
};

struct TunedProblem {
  const Problem* problem;
  std::int64_t problem_id;
};

// Puts the cubin of each tuned problem's fastest ok config on this architecture into the
// database, so that applications load it without NVRTC. Configs compiled during the run are
// compile-cache hits. A cubin that cannot be stored costs a warning, never the run.
void store_best_cubins(db::Store& store, const Family& family, const Space& space,
                       const std::vector<TunedProblem>& tuned, std::int64_t device_id, std::int64_t template_id,
                       const std::string& source, const std::string& arch, const CompileCache& cache) {
  for (const auto& [problem, problem_id] : tuned) {
    try {
      const auto best = store.best_result(device_id, template_id, problem_id);
      if (!best) continue;
      const Compiled compiled =
          cache.compile_one(compile_request(family, source, space, space.parse(best->config), *problem, arch));
      if (!compiled.ok) throw Error("NVRTC failed on a config that compiled before: " + compiled.log);
      store.put_cubin({0, arch, template_id, problem_id, best->config, {compiled.cubin.begin(), compiled.cubin.end()},
                       best->launch_json, nlohmann::json(compiled.options).dump(), nvrtc_version(), ""});
    } catch (const std::exception& e) {
      std::cerr << fmt::format("tune: warning: no cubin stored for {} {}: {}\n", family.name(), problem->key(), e.what());
    }
  }
}

}  // namespace

Space tuning_space(const Family& family, const DeviceLimits& limits, const std::vector<std::string>& restrictions) {
  Space space = family.space(limits);
  for (const std::string& text : restrictions) {
    try {
      space.require(text);
    } catch (const UsageError& e) {
      throw UsageError("--restrict: " + std::string(e.what()));
    }
  }
  if (!restrictions.empty() && space.enumerate().empty())
    throw UsageError("--restrict leaves no config of " + family.name() + " on " + limits.arch());
  return space;
}

std::string tool_version() { return "cutune 0.1.0"; }

db::ProblemRecord problem_record(const Family& family, const Problem& problem) {
  return {0, family.name(), problem.key(), problem.size(), problem.dtype(), problem.descriptor().dump(), problem.match_key()};
}

Session::Session(const Family& family, Device& device, db::Store& store, SessionOptions options)
    : family_(family), device_(device), store_(store), options_(std::move(options)) {}

SessionResult Session::run() {
  InterruptGuard interrupt_guard;
  const auto started = Clock::now();
  SessionResult result;

  // ---- device, template, run ---------------------------------------------------------------------
  const std::int64_t device_id = store_.upsert_device(device_.fingerprint());
  const std::string source = family_.source();
  const std::int64_t template_id = store_.upsert_template(family_.name(), content_hash(source), source);
  const Space space = tuning_space(family_, device_.limits(), options_.restrictions);
  const std::size_t space_size = space.enumerate().size();

  db::RunRecord run;
  run.family = family_.name();
  run.device_id = device_id;
  run.template_id = template_id;
  run.strategy = options_.strategy;
  run.seed = static_cast<std::int64_t>(options_.seed);
  run.budget = options_.budget.describe();
  run.command = options_.command;
  run.tool_version = tool_version();
  result.run_id = store_.begin_run(run);

  const CompileCache cache(options_.cache_folder);
  CompilePool pool(cache, options_.compile_jobs);
  EvaluationWorker evaluator(device_.ordinal(), family_, options_.measure);
  Progress progress(options_.progress);
  const std::size_t per_problem = options_.budget.max_evals
                                      ? std::min<std::size_t>(space_size, static_cast<std::size_t>(*options_.budget.max_evals))
                                      : space_size;
  const std::size_t total = per_problem * options_.problems.size();
  std::size_t done = 0;  // evaluated or skipped, over all problems
  Eta eta(options_.problems, per_problem);

  // Checked before each batch is compiled and before each evaluation; the evaluation count per
  // problem is capped by the batch sizes instead. Sets stop_reason, so no further problem starts.
  bool stopped = false;
  auto must_stop = [&] {
    const Budget time_only{std::nullopt, options_.budget.time_limit_seconds};
    if (g_interrupted) {
      result.interrupted = true;
      result.stop_reason = "interrupted";
    } else if (auto reason = time_only.exhausted(0, std::chrono::duration<double>(Clock::now() - started).count())) {
      result.stop_reason = *reason;  // a budget running out is a clean finish, not an interruption
    }
    stopped = !result.stop_reason.empty();
    return stopped;
  };

  store_.put_problem_schema(family_.name(), family_.problem_schema());  // before its problems: they derive from it
  std::vector<TunedProblem> problem_ids;
  std::vector<std::map<std::string, std::optional<double>>> measured;  // per problem: config key → median, stored before
  for (const Problem& problem : options_.problems) {
    problem_ids.push_back({&problem, store_.upsert_problem(problem_record(family_, problem))});
    measured.push_back(store_.measured_configs(device_id, template_id, problem_ids.back().problem_id));
  }

  // A run that will evaluate the whole space queues every compile of every problem at the start, in
  // problem order, so the pool never idles between a strategy's batches (a genetic algorithm's
  // generation is 20 configs) nor between problems; the configs a batch asks for jump the queue.
  // Bounded, since the futures hold the cubins until used.
  std::vector<std::unordered_map<std::string, std::shared_future<Compiled>>> prefetched(options_.problems.size());
  const std::vector<Config> every_config = space.enumerate();
  if (per_problem >= space_size && every_config.size() * options_.problems.size() <= kMaxPrefetch)
    for (std::size_t p = 0; p < options_.problems.size(); ++p)
      for (const Config& config : every_config)
        if (!measured[p].count(space.key(config)))
          prefetched[p].emplace(space.key(config), pool.submit(compile_request(family_, source, space, config,
                                                                               options_.problems[p], device_.limits().arch())));

  // Measured once per device, while the first compiles run.
  auto stored_device = store_.device_by_uuid(device_.fingerprint().uuid);
  double copy_gbs = stored_device && stored_device->copy_bandwidth_gbs ? *stored_device->copy_bandwidth_gbs : 0;
  if (copy_gbs <= 0) {
    copy_gbs = GpuEvaluator::measure_copy_bandwidth(device_);
    store_.set_copy_bandwidth(device_id, copy_gbs);
  }

  const std::uint64_t input_seed = options_.seed ^ 0x5eedULL;  // inputs: the same for every run of a seed
  std::vector<TunedProblem> tuned_problems;
  for (std::size_t p = 0; p < options_.problems.size(); ++p) {
    if (stopped) break;
    const Problem& problem = options_.problems[p];
    const std::int64_t problem_id = problem_ids[p].problem_id;
    tuned_problems.push_back(problem_ids[p]);
    const auto& already = measured[p];
    const Work work = family_.work(problem);
    evaluator.set_problem(problem, input_seed);
    bool next_prepared = p + 1 == options_.problems.size();
    auto& prefetched_here = prefetched[p];

    auto strategy = make_strategy(options_.strategy, space, options_.seed);
    std::optional<double> best_ms;
    std::string best_config;
    std::int64_t new_evaluations = 0;
    std::size_t problem_done = 0;

    while (problem_done < per_problem && !must_stop()) {
      const std::size_t batch_size = std::max<std::size_t>(16, 4 * static_cast<std::size_t>(options_.compile_jobs));
      std::vector<Config> batch = strategy->propose(std::min(batch_size, per_problem - problem_done));
      if (batch.empty()) break;

      // Every unseen config's compile goes to the pool at once; each config is evaluated as soon as
      // its cubin is ready (the first ready one in batch order), while the pool compiles the rest.
      std::vector<std::optional<std::shared_future<Compiled>>> compiling(batch.size());
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const std::string key = space.key(batch[i]);
        if (already.count(key)) continue;
        const CompileRequest request = compile_request(family_, source, space, batch[i], problem, device_.limits().arch());
        if (const auto it = prefetched_here.find(key); it != prefetched_here.end()) {
          pool.hurry(compile_key(request));
          compiling[i] = it->second;
        } else {
          compiling[i] = pool.submit(request, /*urgent=*/true);
        }
      }
      std::vector<std::size_t> remaining(batch.size());
      std::iota(remaining.begin(), remaining.end(), std::size_t{0});

      while (!remaining.empty() && problem_done < per_problem) {
        auto next = std::find_if(remaining.begin(), remaining.end(), [&](std::size_t i) {
          return !compiling[i] || compiling[i]->wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        });
        if (next == remaining.end()) next = remaining.begin();
        const std::size_t i = *next;
        remaining.erase(next);
        const Config& config = batch[i];
        const std::string key = space.key(config);
        Observation observation{config, std::nullopt, 0};
        if (auto it = already.find(key); it != already.end()) {
          observation.objective = it->second;
          ++result.skipped;
        } else {
          if (must_stop()) break;
          const auto waiting_started = Clock::now();
          const Compiled& c = compiling[i]->get();
          const auto evaluate_started = Clock::now();
          result.compile_wait_seconds += std::chrono::duration<double>(evaluate_started - waiting_started).count();
          const Outcome outcome = evaluator.evaluate(space, config, c, best_ms);
          if (!next_prepared) {  // this problem is set up: the worker computes the next one's inputs meanwhile
            evaluator.prepare(options_.problems[p + 1], input_seed);
            next_prepared = true;
          }
          prefetched_here.erase(key);  // its cubin is not needed again
          result.verify_seconds += outcome.verify_seconds;
          result.benchmark_seconds += outcome.benchmark_seconds;

          db::ResultRecord row;
          row.run_id = result.run_id;
          row.device_id = device_id;
          row.template_id = template_id;
          row.problem_id = problem_id;
          row.config = key;
          row.config_json = space.json(config);
          row.status = to_string(outcome.status);
          row.compile_s = c.seconds;
          row.verify_s = outcome.verify_seconds;
          row.benchmark_s = outcome.benchmark_seconds;
          row.error = outcome.error;
          row.error_index = outcome.error_index;
          row.launch_json = outcome.launch_json.empty() ? "[]" : outcome.launch_json;
          row.verified = outcome.verified;
          row.cut_short = outcome.cut_short;
          if (outcome.measurement) {
            const Measurement& m = *outcome.measurement;
            row.time_ms_median = m.median_ms;
            row.time_ms_min = m.min_ms;
            row.time_ms_max = m.max_ms;
            row.time_ms_stdev = m.stdev_ms;
            row.samples = static_cast<int>(m.samples_ms.size());
            if (work.bytes > 0) {
              row.gbs = work.bytes / (m.median_ms * 1e-3) / 1e9;
              row.copy_fraction = *row.gbs / copy_gbs;
            }
            if (work.flops > 0) row.gflops = work.flops / (m.median_ms * 1e-3) / 1e9;
            observation.objective = m.median_ms;
          }
          row.elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();
          store_.add_result(row);
          observation.cost_seconds = c.seconds + outcome.verify_seconds + outcome.benchmark_seconds;
          eta.record(problem, std::chrono::duration<double>(Clock::now() - waiting_started).count());
          ++result.evaluated;
          ++new_evaluations;
        }
        strategy->observe(observation);
        if (observation.objective && (!best_ms || *observation.objective < *best_ms)) {
          best_ms = observation.objective;
          best_config = key;
        }
        ++problem_done;
        ++done;
        progress.update(fmt::format("[{} {}] {}/{} configs  ETA {}  best {}", family_.name(), problem.key(), done, total,
                                    format_duration(eta.seconds_left(problem, per_problem - problem_done)),
                                    best_ms ? fmt::format("{:.4f} ms ({})", *best_ms, best_config) : "none yet"),
                        done == total);
      }
      if (stopped) break;
    }
    done += per_problem - problem_done;  // a strategy that ran out early
  }
  progress.finish();
  result.setup_seconds = evaluator.setup_seconds();
  result.compiles = pool.work().compiles;
  result.compile_seconds = pool.work().seconds;
  result.compile_jobs = pool.jobs();
  const auto finishing_started = Clock::now();
  store_best_cubins(store_, family_, space, tuned_problems, device_id, template_id, source, device_.limits().arch(), cache);
  store_.refresh_family_defaults();
  store_.finish_run(result.run_id, result.interrupted ? "interrupted" : "finished");
  result.finishing_seconds = std::chrono::duration<double>(Clock::now() - finishing_started).count();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

void print_best_table(std::ostream& out, const std::vector<db::BestRow>& rows) {
  if (rows.empty()) {
    out << "no successful results stored\n";
    return;
  }
  std::string device;
  for (const auto& row : rows) {
    if (row.device_name + row.device_uuid != device) {
      device = row.device_name + row.device_uuid;
      out << fmt::format("\n{} ({})\n", row.device_name, row.device_uuid);
      out << fmt::format("  {:<8} {:<40} {:>11} {:>9} {:>7}  {}\n", "family", "problem", "time (ms)", "GB/s", "copy",
                         "best config");
    }
    out << fmt::format("  {:<8} {:<40} {:>11.4f} {:>9} {:>7}  {}\n", row.family, row.problem_key, row.time_ms,
                       row.gbs ? fmt::format("{:.1f}", *row.gbs) : "-",
                       row.copy_fraction ? fmt::format("{:.1f}%", 100 * *row.copy_fraction) : "-", row.config);
  }
}

}  // namespace cutune
