#include "session.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/phase_trace.hpp"
#include "core/progress.hpp"
#include "compile_pool.hpp"
#include "evaluate.hpp"
#include "nvml.hpp"
#include "rematch.hpp"
#include "scheduler.hpp"
#include "result_row.hpp"
#include "search_loop.hpp"
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
    if (auto it = cost_.find(p.key()); it != cost_.end())
      return it->second.first / static_cast<double>(it->second.second);
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
// database, so that applications load it without NVRTC; where energies were measured, also those
// of the configs a lowest-energy lookup can answer with (the time–energy front, at most
// kFrontCubins besides the fastest). Configs compiled during the run are compile-cache hits. A
// cubin that cannot be stored costs a warning, never the run.
constexpr std::size_t kFrontCubins = 16;

void store_best_cubins(db::Store& store, const Family& family, const Space& space,
                       const std::vector<TunedProblem>& tuned, std::int64_t device_id, std::int64_t template_id,
                       const std::string& source, const std::string& arch, const CompileCache& cache) {
  for (const auto& [problem, problem_id] : tuned) {
    try {
      const auto best = store.best_result(device_id, template_id, problem_id);
      if (!best) continue;
      std::vector<db::ResultRecord> chosen{*best};
      for (db::ResultRecord& r : store.energy_front(device_id, template_id, problem_id))
        if (r.config != best->config && chosen.size() <= kFrontCubins) chosen.push_back(std::move(r));
      for (const db::ResultRecord& r : chosen) {
        const Compiled compiled =
            cache.compile_one(compile_request(family, source, space, space.parse(r.config), *problem, arch));
        if (!compiled.ok) throw Error("NVRTC failed on a config that compiled before: " + compiled.log);
        store.put_cubin({0,
                         arch,
                         template_id,
                         problem_id,
                         r.config,
                         {compiled.cubin.begin(), compiled.cubin.end()},
                         r.launch_json,
                         nlohmann::json(compiled.options).dump(),
                         nvrtc_version(),
                         ""});
      }
    } catch (const std::exception& e) {
      std::cerr << fmt::format("tune: warning: no cubin stored for {} {}: {}\n", family.name(), problem->key(),
                               e.what());
    }
  }
}

}  // namespace

WarmStart warm_start_for(const Space& space, const std::vector<db::SourceResults>& elsewhere,
                         const std::string& device_uuid, const std::string& problem_key) {
  WarmStart warm_start;
  for (const auto& source : elsewhere) {
    if (source.device_uuid == device_uuid && source.problem_key == problem_key) continue;  // this search's own
    WarmStartSource parsed{source.device_name + " " + source.problem_key, {}};
    for (const auto& r : source.results) {
      try {
        Config config = space.parse(r.config);
        if (!space.valid(config)) continue;
        parsed.results.push_back({std::move(config), r.status == "ok" ? r.time_ms_median : std::nullopt,
                                  r.compile_s + r.verify_s + r.benchmark_s});
      } catch (const UsageError&) {
      }
    }
    if (!parsed.results.empty()) warm_start.push_back(std::move(parsed));
  }
  return warm_start;
}

namespace {

// What the axes that restrictions mention take in the family's valid configs ("ept is 1, 2, 4"),
// so that a user whose --restrict left nothing sees what was there to choose from.
std::string values_of_mentioned_axes(const Space& unrestricted, const Space& restricted, std::size_t restrictions) {
  const auto& constraints = restricted.constraints();
  std::set<std::size_t> mentioned;
  for (std::size_t i = constraints.size() - restrictions; i < constraints.size(); ++i)
    mentioned.insert(constraints[i].axes.begin(), constraints[i].axes.end());
  std::vector<std::set<std::int64_t>> seen(unrestricted.axes().size());
  bool any = false;
  unrestricted.for_each_valid([&](const Config& c) {
    any = true;
    for (std::size_t axis : mentioned) seen[axis].insert(c.values[axis]);
  });
  if (!any) return "the family has no valid config there even unrestricted";
  std::string text;
  for (std::size_t axis : mentioned) {
    const Axis& a = unrestricted.axes()[axis];
    constexpr std::size_t kShown = 16;
    std::string values;
    std::size_t shown = 0;
    for (std::int64_t v : seen[axis])
      if (shown++ < kShown) values += (values.empty() ? "" : ", ") + a.text_of(v);
    if (seen[axis].size() > kShown) values += ", … (" + std::to_string(seen[axis].size()) + " values)";
    text += (text.empty() ? "" : "; ") + a.name + " is " + values;
  }
  return text.empty() ? std::string("tune space lists the axes") : "in its valid configs " + text;
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
    throw UsageError("--restrict leaves no config of " + family.name() + " on " + limits.arch() + " (" +
                     values_of_mentioned_axes(family.space(limits), space, restrictions.size()) + ")");
  return space;
}

db::ProblemRecord problem_record(const Family& family, const Problem& problem) {
  return {0,
          family.name(),
          problem.key(),
          problem.size(),
          problem.dtype(),
          problem.descriptor().dump(),
          problem.match_key()};
}

Session::Session(const Family& family, Device& device, db::Store& store, SessionOptions options)
    : Session(family, std::vector<Device*>{&device}, store, std::move(options)) {}

Session::Session(const Family& family, std::vector<Device*> devices, db::Store& store, SessionOptions options)
    : family_(family),
      devices_(std::move(devices)),
      device_(*devices_.at(0)),
      store_(store),
      options_(std::move(options)) {
  for (const Device* d : devices_)
    if (d->fingerprint().name != device_.fingerprint().name || d->limits().arch() != device_.limits().arch())
      throw UsageError("one tuning run takes GPUs of one model: " + device_.fingerprint().name + " and " +
                       d->fingerprint().name + " differ");
}

Session::~Session() = default;

SessionResult Session::run() {
  InterruptGuard interrupt_guard;
  const auto started = Clock::now();
  trace_phase("session: start");
  SessionResult result;

  // The GPU workers first: their CUDA start overlaps everything the session sets up below.
  std::vector<std::unique_ptr<EvaluationWorker>> workers;  // one per GPU (a GPU named twice gets two)
  std::vector<Lane*> lanes;
  for (const Device* d : devices_) {
    workers.push_back(std::make_unique<EvaluationWorker>(d->ordinal(), family_, options_.measure));
    workers.back()->launch();
    lanes.push_back(workers.back().get());
  }
  result.gpus = static_cast<int>(lanes.size());
  trace_phase("session: workers launched");
  // Energy asked for where NVML cannot give it: said once, and the results store it as unknown.
  if (options_.measure.energy_seconds > 0)
    for (const Device* d : devices_)
      if (std::string why; !nvml::Gpu::find(d->fingerprint().uuid, &why))
        std::cerr << fmt::format("warning: --energy on GPU {} ({}): {}; its energy stays unknown\n", d->ordinal(),
                                 d->fingerprint().name, why);

  // ---- device, template, run ---------------------------------------------------------------------
  // Results of every GPU of the run go under the first: GPUs of one model share the run's work.
  const std::int64_t device_id = store_.upsert_device(device_.fingerprint());
  for (const Device* d : devices_) store_.upsert_device(d->fingerprint());
  const std::string source = family_.source();
  const std::int64_t template_id = store_.upsert_template(family_.name(), content_hash(source), source);
  const Space space = tuning_space(family_, device_.limits(), options_.restrictions);
  const std::vector<Config> every_config = space.enumerate();
  const std::size_t space_size = every_config.size();

  db::RunRecord run;
  run.family = family_.name();
  run.device_id = device_id;
  run.template_id = template_id;
  run.strategy = label_of(options_.strategy);
  run.seed = static_cast<std::int64_t>(options_.seed);
  run.budget = options_.budget.describe();
  run.command = options_.command;
  run.tool_version = tool_version();
  result.run_id = store_.begin_run(run);

  const CompileCache cache(options_.cache_folder);
  cache.evict();
  CompilePool pool(cache, options_.compile_jobs);
  ProgressLine progress(options_.progress);
  const std::size_t per_problem =
      options_.budget.max_evals
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
  std::vector<std::map<std::string, std::optional<double>>>
      measured;  // per problem: config key → median, stored before
  for (const Problem& problem : options_.problems) {
    problem_ids.push_back({&problem, store_.upsert_problem(problem_record(family_, problem))});
    measured.push_back(store_.measured_configs(device_id, template_id, problem_ids.back().problem_id));
  }

  // A run that will evaluate the whole space queues every compile of every problem at the start, in
  // problem order, so the pool never idles between a strategy's batches (a genetic algorithm's
  // generation is 20 configs) nor between problems; the configs a batch asks for jump the queue.
  // Bounded, since the futures hold the cubins until used.
  std::vector<std::unordered_map<std::string, std::shared_future<Compiled>>> prefetched(options_.problems.size());
  if (per_problem >= space_size && every_config.size() * options_.problems.size() <= kMaxPrefetch)
    for (std::size_t p = 0; p < options_.problems.size(); ++p)
      for (const Config& config : every_config)
        if (!measured[p].count(space.key(config)))
          prefetched[p].emplace(space.key(config),
                                pool.submit(compile_request(family_, source, space, config, options_.problems[p],
                                                            device_.limits().arch())));

  trace_phase("session: prefetch queued");
  // Measured once per device, while the first compiles run.
  auto stored_device = store_.device_by_uuid(device_.fingerprint().uuid);
  double copy_gbs = stored_device && stored_device->copy_bandwidth_gbs ? *stored_device->copy_bandwidth_gbs : 0;
  if (copy_gbs <= 0) {
    copy_gbs = GpuEvaluator::measure_copy_bandwidth(device_);
    store_.set_copy_bandwidth(device_id, copy_gbs);
  }

  trace_phase("session: copy bandwidth done");
  // The family's results elsewhere (other devices, other problem sizes), for warm starts.
  std::vector<db::SourceResults> elsewhere;
  if (options_.warm_start && strategy_uses_warm_start(options_.strategy.name))
    elsewhere = store_.family_results_by_source(family_.name());

  const std::uint64_t input_seed = options_.seed ^ 0x5eedULL;  // inputs: the same for every run of a seed
  result.before_work_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  trace_phase("session: before work done");
  Scheduler scheduler(lanes, space);
  SearchLimits search_limits;
  search_limits.evaluations = per_problem;
  // Enough to keep every GPU and the compile pool busy; asked for more while the GPUs still have
  // two configs each, and the pool one each, to work on.
  search_limits.batch_size =
      std::max({std::size_t{16}, 4 * static_cast<std::size_t>(options_.compile_jobs), 4 * lanes.size()});
  search_limits.low_water = std::max(2 * lanes.size(), static_cast<std::size_t>(options_.compile_jobs));
  search_limits.leave_running = true;  // the next problem starts while the last configs run
  std::vector<TunedProblem> tuned_problems;
  bool refresh_due = false;  // results of an earlier problem are not in the precomputed choices yet

  // What the session keeps of each problem while its results come in: they may still arrive
  // while the next problem's search runs.
  struct ProblemProgress {
    const Problem* problem = nullptr;
    std::int64_t problem_id = 0;
    Work work;
    std::optional<double> best_ms;
    std::string best_config;
    std::size_t done = 0;    // evaluated or skipped
    bool evaluated = false;  // this run evaluated configs of it (what the rematch looks at)
  };
  std::vector<ProblemProgress> progress_of(options_.problems.size());
  // This thread alone stores what the GPUs finish: the rows of the results taken in together, in
  // one transaction.
  std::vector<db::ResultRecord> unstored;
  const auto record = [&](std::size_t p, const Scheduler::Finished& finished) {
    ProblemProgress& here = progress_of[p];
    here.evaluated = true;
    const Outcome& outcome = finished.outcome;
    result.compile_wait_seconds += finished.compile_wait_seconds;
    result.verify_seconds += outcome.verify_seconds;
    result.benchmark_seconds += outcome.benchmark_seconds;

    RowContext context{result.run_id,
                       device_id,
                       template_id,
                       here.problem_id,
                       here.work,
                       copy_gbs,
                       device_.fingerprint().uuid,
                       std::chrono::duration<double>(Clock::now() - started).count()};
    const db::ResultRecord row = result_row(space, finished, context, devices_[finished.lane]->fingerprint().uuid);
    unstored.push_back(row);
    eta.record(*here.problem, finished.lane_seconds);
    return Observation{finished.config, row.time_ms_median,
                       finished.compile_seconds + outcome.verify_seconds + outcome.benchmark_seconds};
  };
  const auto commit = [&] {
    store_.add_results(unstored);
    unstored.clear();
    // The choices of the problems finished before are refreshed with the first results of the
    // next, while the GPUs work on what is queued: applications reading the database while the
    // run goes on (or after it was killed) then find at most about one problem's results
    // unscored, which a lookup corrects in milliseconds (a whole run's worth costs tens).
    if (refresh_due) {
      refresh_due = false;
      store_.refresh_family_defaults();
    }
  };
  const auto observed = [&](std::size_t p, const Observation& observation) {
    ProblemProgress& here = progress_of[p];
    const std::string key = space.key(observation.config);
    if (observation.objective && (!here.best_ms || *observation.objective < *here.best_ms)) {
      here.best_ms = observation.objective;
      here.best_config = key;
      scheduler.improve_best(p, *here.best_ms);
    }
    ++here.done;
    ++done;
    progress.update(
        fmt::format("[{} {}] {}/{} configs  ETA {}  best {}", family_.name(), here.problem->key(), done, total,
                    format_duration(eta.seconds_left(*here.problem, per_problem - std::min(per_problem, here.done)) /
                                    static_cast<double>(lanes.size())),
                    here.best_ms ? fmt::format("{:.4f} ms ({})", *here.best_ms, here.best_config) : "none yet"),
        done == total);
  };
  // A result of an earlier problem, finished while a later one's search ran: stored at once (the
  // earlier search is over, so only the run's tallies and progress hear of it).
  const auto take_in_earlier = [&](Scheduler::Finished&& finished) {
    const auto recording = Clock::now();
    const Observation observation = record(finished.problem, finished);
    commit();
    result.storing_seconds += std::chrono::duration<double>(Clock::now() - recording).count();
    ++result.evaluated;
    observed(finished.problem, observation);
  };

  for (std::size_t p = 0; p < options_.problems.size(); ++p) {
    if (stopped) break;
    const Problem& problem = options_.problems[p];
    tuned_problems.push_back(problem_ids[p]);
    const auto& already = measured[p];
    progress_of[p] = {&problem, problem_ids[p].problem_id, family_.work(problem), std::nullopt, {}, 0};
    // Each GPU's worker sets the problem up once it has nothing of the last one's left to run,
    // and the next one's inputs while this one is measured.
    const std::size_t number = scheduler.begin_problem(
        problem, input_seed,
        p + 1 < options_.problems.size() ? std::optional<Problem>(options_.problems[p + 1]) : std::nullopt);
    ProblemQueue queue(scheduler, number, take_in_earlier);
    auto& prefetched_here = prefetched[p];

    const WarmStart warm_start = warm_start_for(space, elsewhere, device_.fingerprint().uuid, problem.key());
    if (!warm_start.empty() && options_.progress)
      std::cerr << fmt::format(
          "[{} {}] warm start from {} other device/problem result set(s) of {} (--no-warm-start: off)\n",
          family_.name(), problem.key(), warm_start.size(), family_.name());
    auto strategy = make_strategy(options_.strategy, space, options_.seed, warm_start);
    strategy->allow_background_work();  // GPUs wait while it chooses; a replay keeps it in place
    strategy->set_gpus(lanes.size());

    SearchHooks hooks;
    hooks.must_stop = must_stop;
    // Every unseen config goes to the scheduler with its compile (urgent, or a prefetch hurried);
    // the GPUs take them as their cubins are ready, while the pool compiles the rest.
    hooks.dispatch = [&](const Config& config) -> std::variant<Scheduler::Job, Observation> {
      const std::string key = space.key(config);
      if (const auto it = already.find(key); it != already.end()) return Observation{config, it->second, 0};
      const CompileRequest request = compile_request(family_, source, space, config, problem, device_.limits().arch());
      std::shared_future<Compiled> compiling;
      if (const auto it = prefetched_here.find(key); it != prefetched_here.end()) {
        pool.hurry(compile_key(request));
        compiling = it->second;
        prefetched_here.erase(it);  // the scheduler's job holds it until evaluated
      } else {
        compiling = pool.submit(request, /*urgent=*/true);
      }
      return Scheduler::Job{0, config, std::move(compiling)};
    };
    hooks.record = [&, p](const Scheduler::Finished& finished) { return record(p, finished); };
    hooks.commit = commit;
    hooks.observed = [&, p](const Observation& observation) { observed(p, observation); };
    const SearchTally tally = run_problem_search(*strategy, queue, search_limits, hooks);
    scheduler.note_activity(SessionActivity::between_problems);
    result.evaluated += tally.evaluated;
    result.skipped += tally.skipped;
    result.strategy_seconds += tally.strategy_wait_seconds;
    result.proposing_seconds += tally.strategy_seconds;
    result.observing_seconds += tally.observe_seconds;
    result.storing_seconds += tally.record_seconds;
    refresh_due = refresh_due || tally.evaluated > 0;
    // A strategy that ran out early, or a budget: the progress line counts the configs not taken.
    done += per_problem - std::min(per_problem, progress_of[p].done + tally.left_running);
  }
  // The last problems' configs still running (and, after a stop, nothing more of what is queued).
  if (stopped) scheduler.drop_queued();
  scheduler.note_activity(SessionActivity::draining);
  while (auto finished = scheduler.next_finished()) take_in_earlier(std::move(*finished));
  progress.finish();
  trace_phase("session: drained");
  result.starved_seconds = scheduler.starved_seconds();
  result.starved_by_activity = scheduler.starved_seconds_by_activity();
  result.starved_by_problem = scheduler.starved_seconds_by_problem();
  for (const Lane* lane : lanes) {  // the searches' set-ups (the rematch counts its own apart)
    result.setup_seconds += lane->setup_seconds();
    result.setup_host_seconds += lane->setup_host_seconds();
    result.setup_device_seconds += lane->setup_device_seconds();
  }
  if (options_.rematch.rounds > 0 && !stopped) {
    const auto rematch_started = Clock::now();
    std::vector<RematchProblem> searched;  // the problems this run evaluated configs of
    for (std::size_t p = 0; p < tuned_problems.size(); ++p)
      if (progress_of[p].evaluated) searched.push_back({tuned_problems[p].problem, tuned_problems[p].problem_id});
    RematchScope scope{
        options_.rematch,
        scheduler,
        pool,
        store_,
        family_,
        source,
        space,
        device_.limits().arch(),
        input_seed,
        RowContext{result.run_id, device_id, template_id, 0, {}, copy_gbs, device_.fingerprint().uuid, 0},
        {},
        [&] { return std::chrono::duration<double>(Clock::now() - started).count(); },
        must_stop};
    for (const Device* d : devices_) scope.lane_uuids.push_back(d->fingerprint().uuid);
    if (options_.progress && !searched.empty())
      std::cerr << fmt::format("rematching the near-tied leaders of {} problem(s) (--rematch 0: not)\n",
                               searched.size());
    try {
      const RematchTally rematched = rematch_leaders(scope, searched);
      result.rematch_evaluations = rematched.evaluations;
      result.rematch_problems = rematched.problems;
      result.rematch_changed = rematched.changed;
    } catch (const std::exception& e) {  // the search's results are stored: the run keeps them
      std::cerr << fmt::format("tune: warning: rematch of the near-tied leaders ended early: {}\n", e.what());
    }
    result.rematch_seconds = std::chrono::duration<double>(Clock::now() - rematch_started).count();
    trace_phase("session: rematched");
  }
  for (auto& worker : workers) worker->finish();  // they exit together, while the cubins are stored
  const CompilePool::Stats compiled = pool.stats();
  result.compiles = compiled.compiles;
  result.compile_seconds = compiled.seconds;
  result.compile_jobs = pool.jobs();
  trace_phase("session: storing cubins and defaults");
  const auto finishing_started = Clock::now();
  store_best_cubins(store_, family_, space, tuned_problems, device_id, template_id, source, device_.limits().arch(),
                    cache);
  store_.refresh_family_defaults();
  store_.finish_run(result.run_id, result.interrupted ? "interrupted" : "finished");
  result.finishing_seconds = std::chrono::duration<double>(Clock::now() - finishing_started).count();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  trace_phase("session: finished, destructors next");
  exiting_workers_ = std::move(workers);  // reaped when the session goes, after the caller's report
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
