#include "bench_common.hpp"

#include "bench_git_commit.hpp"  // generated at build time

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "compile.hpp"

namespace cutune::bench {

namespace {
}  // namespace

MeasureOptions bench_measure_options() {
  MeasureOptions o;
  o.warmup_runs = 3;
  o.min_samples = 30;
  o.max_samples = 300;
  o.max_sample_seconds = 2.0;
  o.target_relative_error = 0.002;
  return o;
}

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs args{db::default_database_path(), 0};
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--db")) args.db_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--device")) args.device = std::atoi(argv[i + 1]);
  }
  return args;
}

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  CUTUNE_CUDART(cudaMalloc(&pointer_, std::max<std::size_t>(bytes, 1)));
  CUTUNE_CUDART(cudaMemset(pointer_, 0, bytes));  // baselines that accumulate start from zero
}

DeviceBytes::DeviceBytes(const std::vector<std::byte>& host) : DeviceBytes(host.size()) {
  CUTUNE_CUDART(cudaMemcpy(pointer_, host.data(), host.size(), cudaMemcpyHostToDevice));
}

Measurement time_baseline(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
                          const MeasureOptions& options, std::size_t l2_bytes) {
  void* flush = nullptr;
  const std::size_t flush_bytes = std::max<std::size_t>(2 * l2_bytes, 16 << 20);
  CUTUNE_CUDART(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t start, stop;
  CUTUNE_CUDART(cudaEventCreate(&start));
  CUTUNE_CUDART(cudaEventCreate(&stop));
  for (int i = 0; i < options.warmup_runs; ++i) launch(stream);
  CUTUNE_CUDART(cudaStreamSynchronize(stream));
  std::vector<double> samples;
  while (!enough_samples(samples, options)) {
    if (options.flush_l2) CUTUNE_CUDART(cudaMemsetAsync(flush, static_cast<int>(samples.size() & 0xff), flush_bytes, stream));
    CUTUNE_CUDART(cudaEventRecord(start, stream));
    launch(stream);
    CUTUNE_CUDART(cudaEventRecord(stop, stream));
    CUTUNE_CUDART(cudaEventSynchronize(stop));
    float ms = 0;
    CUTUNE_CUDART(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms);
  }
  CUTUNE_CUDART(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(flush);
  return summarize(samples);
}

Measurement time_copy(std::size_t bytes, cudaStream_t stream, const MeasureOptions& options, std::size_t l2_bytes) {
  void *source = nullptr, *destination = nullptr;
  CUTUNE_CUDART(cudaMalloc(&source, bytes));
  CUTUNE_CUDART(cudaMalloc(&destination, bytes));
  CUTUNE_CUDART(cudaMemset(source, 0x5a, bytes));
  const Measurement m = time_baseline(
      [&](cudaStream_t s) { CUTUNE_CUDART(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, s)); },
      stream, options, l2_bytes);
  cudaFree(source);
  cudaFree(destination);
  return m;
}

std::optional<StoredBest> best_stored_config(db::Store& store, const std::string& family, const std::string& device_uuid,
                                             const std::string& dtype, std::int64_t size) {
  std::optional<StoredBest> best;
  double best_distance = 0;
  for (const auto& row : store.best(family, device_uuid)) {
    if (row.dtype != dtype || row.problem_size <= 0) continue;
    const double distance = std::fabs(std::log(static_cast<double>(row.problem_size)) - std::log(static_cast<double>(size)));
    if (!best || distance < best_distance) {
      best = StoredBest{row.config, row.problem_key};
      best_distance = distance;
    }
  }
  return best;
}

namespace {
// A problem key without its n=… item: what must match for a config to carry over between sizes.
std::string key_without_n(const std::string& key) {
  std::string rest;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t end = std::min(key.find(',', start), key.size());
    const std::string item = key.substr(start, end - start);
    if (item.rfind("n=", 0) != 0) rest += (rest.empty() ? "" : ",") + item;
    start = end + 1;
  }
  return rest;
}
}  // namespace

std::optional<StoredBest> best_stored_config_for(db::Store& store, const Family& family, const std::string& device_uuid,
                                                 const Problem& problem) {
  std::optional<StoredBest> best;
  double best_distance = 0;
  for (const auto& row : store.best(family.name(), device_uuid)) {
    if (row.problem_key == problem.key) return StoredBest{row.config, row.problem_key};
    if (key_without_n(row.problem_key) != key_without_n(problem.key) || row.problem_size <= 0) continue;
    const double distance =
        std::fabs(std::log(static_cast<double>(row.problem_size)) - std::log(static_cast<double>(problem.size)));
    if (!best || distance < best_distance) {
      best = StoredBest{row.config, row.problem_key};
      best_distance = distance;
    }
  }
  return best;
}

HostBuffers generate_inputs(const Family& family, const Problem& problem, std::uint64_t seed) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, seed, inputs);
  return inputs;
}

Verdict check_baseline(const Family& family, const Problem& problem, const HostBuffers& inputs,
                       const std::string& output_name, const void* device_output, std::size_t bytes) {
  HostBuffers actual;
  actual.at(output_name).resize(bytes);
  CUTUNE_CUDART(cudaMemcpy(actual.at(output_name).data(), device_output, bytes, cudaMemcpyDeviceToHost));
  return family.compare(problem, family.reference(problem, inputs), actual);
}

Outcome run_config(Device& device, const Family& family, const Problem& problem, const std::string& config_key,
                   const MeasureOptions& options) {
  const Space space = family.space(device.limits());
  const Config config = space.parse(config_key);
  auto definitions = config_definitions(space, config);
  for (auto& d : family.problem_definitions(problem)) definitions.push_back(d);
  const CompileCache cache(CompileCache::default_folder());
  const Compiled compiled = cache.compile_one({family.template_file(), family.source(), definitions, device.limits().arch()});
  GpuEvaluator evaluator(device, family, options);
  evaluator.set_problem(problem, kInputSeed);
  return evaluator.evaluate(space, config, compiled);
}

BenchContext::BenchContext(const BenchArgs& args) : device_(args.device), store_(args.db_path) {
  CUTUNE_CUDART(cudaSetDevice(args.device));
  CUTUNE_CUDART(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

void BenchContext::print_title(const std::string& title) const {
  std::cout << fmt::format("# {} — {} ({}), commit {}\n", title, device_.fingerprint().name, device_.fingerprint().uuid,
                           bench_git_commit());
}

std::optional<BenchContext::Tuned> BenchContext::measure_best(const Family& family, const Problem& problem) {
  const auto stored = best_stored_config_for(store_, family, device_.fingerprint().uuid, problem);
  if (!stored) return std::nullopt;
  const Outcome outcome = run_config(device_, family, problem, stored->config, options_);
  if (outcome.status != Status::ok) throw Error(stored->config + " failed in the bench: " + outcome.error);
  const std::string label = stored->config + (stored->tuned_on == problem.key ? "" : " (tuned on " + stored->tuned_on + ")");
  return Tuned{stored->config, label, outcome.measurement->median_ms};
}

Measurement BenchContext::time(const std::function<void(cudaStream_t)>& launch) const {
  return time_baseline(launch, stream_, options_, static_cast<std::size_t>(device_.limits().l2_bytes));
}

Measurement BenchContext::time_copy_moving(double bytes) const {
  return time_copy(static_cast<std::size_t>(bytes / 2), stream_, options_, static_cast<std::size_t>(device_.limits().l2_bytes));
}

int bench_main(const char* program, const std::function<void()>& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

// The build tree's commit, "+dirty" when it had uncommitted changes (cmake/git_commit.cmake).
std::string bench_git_commit() { return CUTUNE_GIT_COMMIT; }

BenchSession::BenchSession(const BenchArgs& args) : device(args.device), store(args.db_path) {
  CUTUNE_CUDART(cudaSetDevice(args.device));
  CUTUNE_CUDART(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  l2_bytes = static_cast<std::size_t>(device.limits().l2_bytes);
}

BenchSession::~BenchSession() { cudaStreamDestroy(stream); }

std::string BenchSession::heading(const std::string& title) const {
  return "# " + title + " — " + device.fingerprint().name + " (" + device.fingerprint().uuid + "), commit " +
         bench_git_commit() + "\n";
}

StoredRun run_best_stored(BenchSession& session, const Family& family, const Problem& problem) {
  // The problem's own config if it was tuned (or one of a size that differs only in n), else the
  // nearest tuned size of the same type.
  const std::string& uuid = session.device.fingerprint().uuid;
  auto stored = best_stored_config_for(session.store, family, uuid, problem);
  if (!stored) stored = best_stored_config(session.store, family.name(), uuid, problem.dtype, problem.size);
  if (!stored)
    throw Error("no stored " + family.name() + " results for this device: run tune --kernel " + family.name() +
                " --device N first");
  const Outcome outcome = run_config(session.device, family, problem, stored->config, session.options);
  if (outcome.status != Status::ok) throw Error(stored->config + " failed in the bench: " + outcome.error);
  return {stored->config + (stored->tuned_on == problem.key ? "" : " (tuned on " + stored->tuned_on + ")"), *outcome.measurement};
}

HostBuffers bench_inputs(const Family& family, const Problem& problem) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, kInputSeed, inputs);
  return inputs;
}

std::vector<std::byte> DeviceBytes::download() const {
  std::vector<std::byte> host(bytes_);
  CUTUNE_CUDART(cudaMemcpy(host.data(), pointer_, bytes_, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace cutune::bench
