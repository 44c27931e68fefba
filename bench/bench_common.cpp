#include "bench_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "compile.hpp"
#include "l2_flush.hpp"
#include "sample_timer.hpp"
#include "tool_version.hpp"

namespace cutune::bench {

namespace {

// Tighter than a tuning run's: a bench compares a handful of configs and can afford the samples.
MeasureOptions bench_measure_options() {
  MeasureOptions o;
  o.warmup_runs = 3;
  o.min_samples = 30;
  o.max_samples = 300;
  o.max_sample_seconds = 2.0;
  o.target_relative_error = 0.002;
  return o;
}

// The engine's sample timer (sample_timer.hpp) on the session's stream: the runtime API's stream is
// the driver's, in the device's primary context, which the runtime shares.
Measurement time_on(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream, const MeasureOptions& options,
                    std::int64_t l2_bytes, BenchSession::L2Flush flush_kind) {
  const DeviceBytes flush(l2_flush_bytes(l2_bytes));
  CudaEventClock clock(stream);
  SampleWork work{.run = [&] { launch(stream); }};
  if (options.flush_l2 && flush_kind == BenchSession::L2Flush::read)
    work.flush = [&](std::size_t) {
      read_through(flush.get(), flush.bytes(), stream);
      CUTUNE_CUDART(cudaGetLastError());
    };
  else if (options.flush_l2)
    work.flush = [&](std::size_t index) {
      CUTUNE_CUDART(cudaMemsetAsync(flush.get(), static_cast<int>(index & 0xff), flush.bytes(), stream));
    };
  SampleTimer timer(clock, std::move(work));
  const SampleSet taken = timer.measure(options.warmup_runs, StoppingRule::from(options));
  CUTUNE_CUDART(cudaGetLastError());
  return summarize(taken.samples_ms);
}

struct StoredBest {
  std::string config, tuned_on;
};

// The best stored ok config of the family on this device for `problem` (see measure_best).
std::optional<StoredBest> best_stored_config(db::Store& store, const Family& family, const std::string& device_uuid,
                                             const Problem& problem) {
  const auto rows = store.best(family.name(), device_uuid);
  const auto distance = [&](std::int64_t size) {
    return std::fabs(std::log(static_cast<double>(size)) - std::log(static_cast<double>(problem.size())));
  };
  // The nearest size among the rows that `accept`s.
  const auto nearest = [&](auto accept) {
    std::optional<StoredBest> best;
    double best_distance = 0;
    for (const auto& row : rows) {
      if (row.problem_size <= 0 || !accept(row)) continue;
      if (!best || distance(row.problem_size) < best_distance) {
        best = StoredBest{row.config, row.problem_key};
        best_distance = distance(row.problem_size);
      }
    }
    return best;
  };
  for (const auto& row : rows)
    if (row.problem_key == problem.key()) return StoredBest{row.config, row.problem_key};
  // A config carries over between sizes of the same kind of problem: the same match key.
  if (auto same_kind = nearest([&](const auto& row) { return row.match_key == problem.match_key(); })) return same_kind;
  return nearest([&](const auto& row) { return row.dtype == problem.dtype(); });
}

}  // namespace

int bench_main(const char* program, const std::function<void()>& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

std::string bench_git_commit() { return tool_commit(); }

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  CUTUNE_CUDART(cudaMalloc(&pointer_, std::max<std::size_t>(bytes, 1)));
  CUTUNE_CUDART(cudaMemset(pointer_, 0, bytes));  // baselines that accumulate start from zero
}

DeviceBytes::DeviceBytes(const std::vector<std::byte>& host) : DeviceBytes(host.size()) {
  CUTUNE_CUDART(cudaMemcpy(pointer_, host.data(), host.size(), cudaMemcpyHostToDevice));
}

std::vector<std::byte> DeviceBytes::download() const {
  std::vector<std::byte> host(bytes_);
  CUTUNE_CUDART(cudaMemcpy(host.data(), pointer_, bytes_, cudaMemcpyDeviceToHost));
  return host;
}

HostBuffers bench_inputs(const Family& family, const Problem& problem) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, kInputSeed, inputs);
  return inputs;
}

Verdict check_baseline(const Family& family, const Problem& problem, const HostBuffers& inputs,
                       const std::string& output_name, const void* device_output, std::size_t bytes) {
  const HostBuffers expected = family.reference(problem, inputs);
  HostBuffers actual = expected;
  actual.at(output_name).resize(bytes);  // the copy below overwrites it
  CUTUNE_CUDART(cudaMemcpy(actual.at(output_name).data(), device_output, bytes, cudaMemcpyDeviceToHost));
  return family.compare(problem, expected, actual);
}

BenchSession::BenchSession(const BenchArgs& args)
    : args_(args), device_(args.device), store_(args.db_path), options_(bench_measure_options()) {
  CUTUNE_CUDART(cudaSetDevice(args.device));
  CUTUNE_CUDART(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

BenchSession::~BenchSession() { cudaStreamDestroy(stream_); }

void BenchSession::print_title(const std::string& title) const {
  std::cout << fmt::format("# {} — {} ({}), commit {}\n", title, device_.fingerprint().name, device_.fingerprint().uuid,
                           bench_git_commit());
}

std::optional<BenchSession::Tuned> BenchSession::measure_best(const Family& family, const Problem& problem) {
  const auto stored = best_stored_config(store_, family, device_.fingerprint().uuid, problem);
  if (!stored) return std::nullopt;
  const Outcome outcome = run_config(family, problem, stored->config);
  if (outcome.status != Status::ok) throw Error(stored->config + " failed in the bench: " + outcome.error);
  const std::string label =
      stored->config + (stored->tuned_on == problem.key() ? "" : " (tuned on " + stored->tuned_on + ")");
  return Tuned{stored->config, label, outcome.measurement->median_ms};
}

Outcome BenchSession::run_config(const Family& family, const Problem& problem, const std::string& config_key) {
  const Space space = family.space(device_.limits());
  const Config config = space.parse(config_key);
  const CompileCache cache(CompileCache::default_folder());
  const Compiled compiled =
      cache.compile_one(compile_request(family, family.source(), space, config, problem, device_.limits().arch()));
  GpuEvaluator evaluator(device_, family, options_);
  evaluator.set_problem(problem, kInputSeed);
  return evaluator.evaluate(space, config, compiled);
}

Measurement BenchSession::time(const std::function<void(cudaStream_t)>& launch, L2Flush flush) const {
  return time_on(launch, stream_, options_, device_.limits().l2_bytes, flush);
}

Measurement BenchSession::time_copy_moving(double bytes) const {
  // Each copied byte is read once and written once.
  const DeviceBytes source(static_cast<std::size_t>(bytes / 2)), destination(source.bytes());
  return time([&](cudaStream_t s) {
    CUTUNE_CUDART(cudaMemcpyAsync(destination.get(), source.get(), source.bytes(), cudaMemcpyDeviceToDevice, s));
  });
}

}  // namespace cutune::bench
