#include "bench_common.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "compile.hpp"

namespace cutune::bench {

namespace {
constexpr std::uint64_t kBenchSeed = 0x5eedULL;
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

Outcome run_config(Device& device, const Family& family, const Problem& problem, const std::string& config_key,
                   const MeasureOptions& options) {
  const Space space = family.space(device.limits());
  const Config config = space.parse(config_key);
  auto definitions = config_definitions(space, config);
  for (auto& d : family.problem_definitions(problem)) definitions.push_back(d);
  const CompileCache cache(CompileCache::default_folder());
  const Compiled compiled = cache.compile_one({family.template_file(), family.source(), definitions, device.limits().arch()});
  GpuEvaluator evaluator(device, family, options);
  evaluator.set_problem(problem, kBenchSeed);
  return evaluator.evaluate(space, config, compiled);
}

std::string bench_git_commit() {
  std::string commit = "unknown";
  if (FILE* pipe = popen("git rev-parse --short HEAD 2>/dev/null", "r")) {
    char text[64] = {};
    if (fgets(text, sizeof text, pipe)) commit = std::string(text, strcspn(text, "\n"));
    pclose(pipe);
  }
  return commit;
}

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs args{db::default_database_path(), 0};
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--db")) args.db_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--device")) args.device = std::atoi(argv[i + 1]);
  }
  return args;
}

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
  const auto stored = best_stored_config(session.store, family.name(), session.device.fingerprint().uuid, problem.dtype, problem.size);
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
  family.generate_inputs(problem, kBenchSeed, inputs);
  return inputs;
}

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  CUTUNE_CUDART(cudaMalloc(&pointer_, bytes));
  CUTUNE_CUDART(cudaMemset(pointer_, 0, bytes));
}

DeviceBytes::DeviceBytes(const std::vector<std::byte>& host) : bytes_(host.size()) {
  CUTUNE_CUDART(cudaMalloc(&pointer_, bytes_));
  CUTUNE_CUDART(cudaMemcpy(pointer_, host.data(), bytes_, cudaMemcpyHostToDevice));
}

DeviceBytes::~DeviceBytes() { cudaFree(pointer_); }

std::vector<std::byte> DeviceBytes::download() const {
  std::vector<std::byte> host(bytes_);
  CUTUNE_CUDART(cudaMemcpy(host.data(), pointer_, bytes_, cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace cutune::bench
