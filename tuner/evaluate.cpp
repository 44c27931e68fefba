#include "evaluate.hpp"

#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "observers.hpp"
#include "output_check.hpp"
#include "ptxas_report.hpp"
#include "sample_timer.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Timeout : Error {
  using Error::Error;
};

// Launch-time failures (bad geometry, too many resources) leave the context usable.
struct LaunchFailure : Error {
  using Error::Error;
};

constexpr unsigned char kPoisonByte = 0xA5;  // outputs and scratch before a verified run

// Folds one launch of the plan into the result's resources: the most registers, local memory and
// shared memory of any kernel, spills summed over the distinct kernels, and the least occupied
// launch (its resident warps over the SM's maximum).
void add_launch_resources(db::Observations& o, const nlohmann::json& step, unsigned threads, int max_threads_per_sm,
                          const PtxasFunction* reported, std::set<std::string>& counted_kernels) {
  const auto most = [](std::optional<std::int64_t>& field, std::int64_t value) {
    field = std::max(field.value_or(value), value);
  };
  most(o.registers, step.at("registers").get<std::int64_t>());
  most(o.local_bytes, step.at("local_bytes").get<std::int64_t>());
  most(o.static_shared_bytes, step.at("static_shared_bytes").get<std::int64_t>());
  most(o.dynamic_shared_bytes, step.at("dynamic_shared_bytes").get<std::int64_t>());
  if (reported && counted_kernels.insert(step.at("kernel").get<std::string>()).second) {
    o.spill_store_bytes = o.spill_store_bytes.value_or(0) + reported->spill_store_bytes;
    o.spill_load_bytes = o.spill_load_bytes.value_or(0) + reported->spill_load_bytes;
  }
  const std::int64_t blocks = step.at("blocks_per_sm").get<std::int64_t>();
  const double occupancy = static_cast<double>(blocks * ((threads + 31) / 32)) / std::max(1, max_threads_per_sm / 32);
  if (!o.occupancy || occupancy < *o.occupancy) {
    o.occupancy = occupancy;
    o.blocks_per_sm = blocks;
  }
}

}  // namespace

// Device-side state for the current problem. Rebuilt from the host copies after a fault.
struct GpuEvaluator::State {
  explicit State(double timeout) : timeout_seconds(timeout) {}
  State(const State&) = delete;  // the clock's wait refers to this state
  State& operator=(const State&) = delete;

  Stream stream;
  double timeout_seconds;  // one run longer than this is a hang (MeasureOptions::timeout_seconds)
  // The sample timer's events on the stream; it waits as wait() does, so a hung sample is a Timeout.
  CudaEventClock clock{stream.get(), [this] { wait(); }};
  DeviceBuffer flush;  // overwritten before every timed sample (MeasureOptions::flush_l2)
  Problem problem;
  HostBuffers inputs, expected;
  std::vector<BufferSpec> io_specs;
  std::map<std::string, DeviceBuffer> buffers;
  // Initialised outputs as generated: copied back into the output before every run, so that a
  // kernel that reads and updates it (y = a*x + y) always starts from the same contents.
  std::map<std::string, DeviceBuffer> pristine;
  // The family's comparison as element-wise rules, and the expected outputs on the device that
  // they are checked against there (tuner/output_check); none: outputs come back to the CPU.
  std::optional<std::vector<OutputRule>> rules;
  std::map<std::string, DeviceBuffer> expected_on_device;
  // Outputs come back into these when the CPU compares them (families without output rules):
  // allocated and page-locked once per problem, on first use, since allocating (and faulting in) a
  // GiB per check costs more than the check.
  HostBuffers actual;
  std::vector<std::unique_ptr<PinnedRegion>> pinned;

  HostBuffers& actual_outputs() {
    if (pinned.empty())
      for (const auto& spec : io_specs) {
        if (spec.role != BufferRole::output) continue;
        auto& host = actual.at(spec.name);
        host.resize(static_cast<std::size_t>(spec.bytes));
        pinned.push_back(std::make_unique<PinnedRegion>(host.data(), host.size()));
      }
    return actual;
  }

  // Outside the timed region: device-to-device copies, before the L2 flush.
  void restore_initialised_outputs() {
    for (auto& [name, copy] : pristine)
      CUTUNE_CU(cuMemcpyDtoDAsync, buffer(name).get(), copy.get(), copy.bytes(), stream.get());
  }

  // Outputs and scratch get the poison byte, initialised outputs their initial contents: what a
  // verified run starts from.
  void prepare_verified_run() {
    for (auto& [name, b] : buffers) {
      bool is_input = false;
      for (const auto& spec : io_specs) is_input |= spec.name == name && spec.role == BufferRole::input;
      if (!is_input && !pristine.count(name) && b.bytes())
        CUTUNE_CU(cuMemsetD8Async, b.get(), kPoisonByte, b.bytes(), stream.get());
    }
    restore_initialised_outputs();
  }

  DeviceBuffer& buffer(const std::string& name) {
    auto it = buffers.find(name);
    if (it == buffers.end()) throw Error("the plan names buffer '" + name + "', which no spec declares");
    return it->second;
  }

  // Waits for the stream, polling so that a run longer than timeout_seconds becomes a Timeout
  // instead of a hang. Spins for the first kSpin (most runs end within it, and the next sample
  // starts at once), then polls every kPoll: a long run leaves the core to the compile processes,
  // and the GPU idles at most kPoll after it. CUDA events time the samples, so how the host waits
  // never changes them.
  void wait() {
    constexpr auto kSpin = std::chrono::microseconds(500);
    constexpr auto kPoll = std::chrono::microseconds(50);
    const auto started = Clock::now();
    const auto deadline = started + std::chrono::duration<double>(timeout_seconds);
    while (true) {
      const CUresult r = cuda::driver().cuStreamQuery(stream.get());
      if (r == CUDA_SUCCESS) return;
      if (r != CUDA_ERROR_NOT_READY) cuda::throw_cuda_error(r, "cuStreamQuery", __FILE__, __LINE__);
      const auto now = Clock::now();
      if (now > deadline)
        throw Timeout("a run took longer than " + std::to_string(timeout_seconds) + " s (hung kernel?)");
      if (now - started < kSpin)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(kPoll);
    }
  }
};

namespace {

void run_plan(GpuEvaluator::State& s, const std::vector<Step>& plan,
              const std::map<std::string, CUfunction>& functions);

}  // namespace

GpuEvaluator::GpuEvaluator(Device& device, const Family& family, MeasureOptions options)
    : device_(device), family_(family), options_(options), gpu_(nvml::Gpu::find(device.fingerprint().uuid)) {}

GpuEvaluator::~GpuEvaluator() = default;

HostProblem GpuEvaluator::host_problem(const Family& family, const Problem& problem, std::uint64_t seed) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input || spec.initialised)
      inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, seed, inputs);
  return host_problem(family, problem, std::move(inputs));
}

HostProblem GpuEvaluator::host_problem(const Family& family, const Problem& problem, HostBuffers inputs) {
  HostProblem host{problem, std::move(inputs), {}};
  if (!family.gpu_reference(problem)) host.expected = family.reference(problem, host.inputs);
  return host;
}

void GpuEvaluator::set_problem(const Problem& problem, std::uint64_t seed) {
  set_problem(host_problem(family_, problem, seed));
}

void GpuEvaluator::set_problem(const Problem& problem, HostBuffers inputs) {
  set_problem(host_problem(family_, problem, std::move(inputs)));
}

void GpuEvaluator::set_problem(HostProblem host) {
  device_.make_current();
  auto state = std::make_unique<State>(options_.timeout_seconds);
  const Problem& problem = host.problem;
  state->problem = problem;
  state->io_specs = family_.buffers(problem);
  const std::optional<GpuReference> gpu_reference = family_.gpu_reference(problem);
  state->expected = std::move(host.expected);
  state->inputs = std::move(host.inputs);
  if (options_.flush_l2) state->flush = DeviceBuffer(l2_flush_bytes(device_.limits().l2_bytes));
  state_.reset();  // free the previous problem's buffers before allocating this one's
  for (const auto& spec : state->io_specs) {
    auto& b = state->buffers[spec.name] = DeviceBuffer(static_cast<std::size_t>(spec.bytes));
    if (spec.role == BufferRole::input) {
      const auto& bytes = state->inputs.at(spec.name);
      b.upload(bytes.data(), bytes.size());
    }
    if (spec.initialised) {
      const auto& bytes = state->inputs.at(spec.name);
      auto& copy = state->pristine[spec.name] = DeviceBuffer(bytes.size());
      copy.upload(bytes.data(), bytes.size());
    }
  }
  if (gpu_reference) compute_expected_on_gpu(*state, *gpu_reference);
  if (family_.verifies()) state->rules = family_.output_rules(problem, state->expected);
  if (state->rules) {
    for (const OutputRule& rule : *state->rules) {
      const auto& bytes = state->expected.at(rule.buffer);
      auto& copy = state->expected_on_device[rule.buffer] = DeviceBuffer(bytes.size());
      copy.upload(bytes.data(), bytes.size());
    }
    checker_ = &OutputChecker::shared_for(device_.limits().arch());
  }
  state_ = std::move(state);
}

void GpuEvaluator::compute_expected_on_gpu(State& s, const GpuReference& reference) {
  const Compiled compiled =
      compile({reference.program_name, reference.source, reference.options, device_.limits().arch()});
  if (!compiled.ok)
    throw Error("the reference (" + reference.program_name + ") does not compile for " + device_.limits().arch() +
                ":\n" + compiled.log);
  const Module module(compiled.cubin);
  std::map<std::string, CUfunction> functions;
  for (const auto& step : reference.plan)
    if (const auto* launch = std::get_if<KernelLaunch>(&step)) {
      functions[launch->kernel] = module.function(launch->kernel);
      if (launch->dynamic_shared_bytes > 0)
        CUTUNE_CU(cuFuncSetAttribute, functions[launch->kernel], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  static_cast<int>(launch->dynamic_shared_bytes));
    }
  s.prepare_verified_run();
  run_plan(s, reference.plan, functions);
  s.wait();
  for (const auto& spec : s.io_specs) {
    if (spec.role != BufferRole::output) continue;
    auto& host = s.expected.at(spec.name);
    host.resize(static_cast<std::size_t>(spec.bytes));
    s.buffer(spec.name).download(host.data(), host.size());
  }
}

Outcome GpuEvaluator::evaluate(const Space& space, const Config& config, const Compiled& compiled,
                               std::optional<double> best_ms) {
  Outcome outcome;
  if (!compiled.ok) {
    outcome.status = Status::compile_error;
    outcome.error = compiled.log;
    return outcome;
  }
  if (!usable_) {
    outcome.status = Status::runtime_fault;
    outcome.error = "an earlier config left this process unable to use the GPU";
    return outcome;
  }
  if (!state_) throw Error("GpuEvaluator::evaluate called before set_problem");
  device_.make_current();
  State& s = *state_;
  const ConfigView view(space, config);
  std::vector<Step> plan = family_.plan(s.problem, view);  // persistent grids are cut to the device below

  // ---- load: module, functions, resource checks -----------------------------------------------
  std::unique_ptr<Module> module;
  // Unloading a module waits for its kernels to end. After a hang that wait never ends, and this
  // process would never answer: once it cannot use the GPU any more, it leaves the module loaded
  // (it exits next, and the driver tears the context down).
  struct KeepLoadedWhenUnusable {
    std::unique_ptr<Module>& module;
    const bool& usable;
    ~KeepLoadedWhenUnusable() {
      if (!usable) (void)module.release();
    }
  } keep_loaded_when_unusable{module, usable_};
  std::map<std::string, CUfunction> functions;
  nlohmann::json steps = nlohmann::json::array();  // the plan as results store it (stored_step)
  const PtxasReport ptxas = parse_ptxas_report(compiled.log);
  db::Observations& observed = outcome.observations;
  observed.compile_warnings = ptxas.warnings;
  try {
    module = std::make_unique<Module>(compiled.cubin);
    std::set<std::string> counted_kernels;  // spills count once per kernel, however often it runs
    for (auto& step : plan) {
      auto* launch = std::get_if<KernelLaunch>(&step);
      if (!launch) {
        steps.push_back(stored_step(std::get<MemsetStep>(step)));
        continue;
      }
      CUfunction f = functions.count(launch->kernel) ? functions[launch->kernel] : module->function(launch->kernel);
      functions[launch->kernel] = f;
      auto attribute = [&](CUfunction_attribute which) {
        int value = 0;
        CUTUNE_CU(cuFuncGetAttribute, &value, which, f);
        return value;
      };
      const unsigned threads = launch->block.x * launch->block.y * launch->block.z;
      const int max_threads = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      if (threads > static_cast<unsigned>(max_threads))
        throw LaunchFailure(launch->kernel + " can run at most " + std::to_string(max_threads) +
                            " threads per block (" + std::to_string(attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)) +
                            " registers each); the config asks " + std::to_string(threads));
      const int static_shared = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
      if (launch->dynamic_shared_bytes > 0) {
        const CUresult r = cuda::driver().cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                             static_cast<int>(launch->dynamic_shared_bytes));
        if (r != CUDA_SUCCESS)
          throw LaunchFailure(launch->kernel + " needs " +
                              std::to_string(launch->dynamic_shared_bytes + static_shared) +
                              " bytes of shared memory per block: " + cuda::describe(r));
      }
      int blocks_per_sm = 0;
      CUTUNE_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks_per_sm, f, static_cast<int>(threads),
                static_cast<std::size_t>(launch->dynamic_shared_bytes));
      if (launch->fill_device)
        launch->grid.x =
            std::min(launch->grid.x, static_cast<unsigned>(std::max(1, blocks_per_sm) * device_.limits().sm_count));
      nlohmann::json stored{{"kernel", launch->kernel},
                            {"grid", {launch->grid.x, launch->grid.y, launch->grid.z}},
                            {"block", {launch->block.x, launch->block.y, launch->block.z}},
                            {"dynamic_shared_bytes", launch->dynamic_shared_bytes},
                            {"static_shared_bytes", static_shared},
                            {"registers", attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)},
                            {"local_bytes", attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)},
                            {"blocks_per_sm", blocks_per_sm}};
      if (launch->fill_device) stored["fill_device"] = true;  // the grid above is this device's
      if (launch->programmatic) stored["programmatic"] = true;
      const auto reported = ptxas.functions.find(launch->kernel);
      if (reported != ptxas.functions.end()) {
        stored["spill_store_bytes"] = reported->second.spill_store_bytes;
        stored["spill_load_bytes"] = reported->second.spill_load_bytes;
      }
      add_launch_resources(observed, stored, threads, device_.limits().max_threads_per_sm,
                           reported != ptxas.functions.end() ? &reported->second : nullptr, counted_kernels);
      steps.push_back(std::move(stored));
    }
    for (const auto& spec : family_.scratch(s.problem, view)) {
      auto& b = s.buffers[spec.name];
      if (b.bytes() < static_cast<std::size_t>(spec.bytes)) b = DeviceBuffer(static_cast<std::size_t>(spec.bytes));
    }
  } catch (const LaunchFailure& e) {
    outcome.status = Status::load_error;
    outcome.error = e.what();
    return outcome;
  } catch (const cuda::CudaError& e) {
    outcome.status = Status::load_error;
    outcome.error = e.what();
    usable_ = !e.poisons_context();
    return outcome;
  }
  outcome.launch_json = steps.dump();

  outcome.verified = family_.verifies();
  auto verify = [&](const char* when) -> bool {
    if (!outcome.verified) return true;  // nothing to compare with: stored as unverified
    if (s.rules) {
      // On the GPU: only the verdict comes back, and on a failure the first broken element.
      std::vector<OutputChecker::Output> outputs;
      for (const OutputRule& rule : *s.rules) {
        const DeviceBuffer& expected = s.expected_on_device.at(rule.buffer);
        const std::size_t element = rule.element_type.ends_with("64") ? 8 : 4;
        outputs.push_back({&rule, expected.get(), s.buffer(rule.buffer).get(),
                           static_cast<std::int64_t>(expected.bytes() / element)});
      }
      const Verdict verdict = verdict_of(*s.rules, checker_->check(outputs, s.stream.get()));
      if (verdict.ok) return true;
      outcome.status = Status::wrong_result;
      outcome.error = std::string(when) + ": " + verdict.message;
      outcome.error_index = verdict.first_bad_index;
      return false;
    }
    bool identical = true;  // byte-identical to the reference: right for any comparison rule
    HostBuffers& actual = s.actual_outputs();
    for (const auto& spec : s.io_specs) {
      if (spec.role != BufferRole::output) continue;
      auto& host = actual.at(spec.name);
      s.buffer(spec.name).download(host.data(), host.size());
      const auto& want = s.expected.at(spec.name);
      identical = identical && want.size() == host.size() && std::memcmp(want.data(), host.data(), host.size()) == 0;
    }
    if (identical) return true;
    const Verdict verdict = family_.compare(s.problem, s.expected, actual);
    if (verdict.ok) return true;
    outcome.status = Status::wrong_result;
    outcome.error = std::string(when) + ": " + verdict.message;
    outcome.error_index = verdict.first_bad_index;
    return false;
  };

  try {
    // ---- verified run on poisoned outputs and scratch -------------------------------------------
    const auto verify_started = Clock::now();
    s.prepare_verified_run();
    run_plan(s, plan, functions);
    s.wait();
    const bool first_ok = verify("first run");
    outcome.verify_seconds = seconds_since(verify_started);
    if (!first_ok) return outcome;

    // ---- warm-up and timed samples --------------------------------------------------------------
    const auto bench_started = Clock::now();
    ClockWatch clocks(gpu_ ? &*gpu_ : nullptr);
    SampleWork work{.run = [&] { run_plan(s, plan, functions); },
                    .before_run = [&] { s.restore_initialised_outputs(); },
                    .after_sample = [&] { clocks.after_sample(); }};
    if (options_.flush_l2)
      work.flush = [&](std::size_t index) {
        CUTUNE_CU(cuMemsetD32Async, s.flush.get(), static_cast<unsigned>(index), s.flush.bytes() / 4, s.stream.get());
      };
    SampleTimer timer(s.clock, std::move(work));
    const StoppingRule rule = StoppingRule::from(options_, best_ms);
    SampleSet taken = timer.measure(options_.warmup_runs, rule);
    // Samples taken while the GPU slowed itself down for power or heat say little of the config:
    // most of them throttled, they are taken once more, and the result counts what the second
    // set saw (a GPU that throttles throughout shows it there).
    if (clocks.mostly_throttled() && !taken.cut_short) {
      clocks.restart();
      observed.remeasured = true;
      taken = timer.sample(rule);
    }
    outcome.cut_short = taken.cut_short;
    clocks.fill(observed);
    outcome.benchmark_seconds = seconds_since(bench_started);

    // ---- the last timed run must still be right (races show up here) -------------------------
    const auto reverify_started = Clock::now();
    const bool still_ok = verify("after timing");
    outcome.verify_seconds += seconds_since(reverify_started);
    if (!still_ok) return outcome;
    outcome.measurement = summarize(std::move(taken.samples_ms));

    // ---- energy: the plan back to back, after everything that checks its outputs --------------
    if (options_.energy_seconds > 0 && gpu_ && !outcome.cut_short) {
      const auto energy_started = Clock::now();
      EnergyRuns runs{s.stream.get(), [&] { run_plan(s, plan, functions); }, outcome.measurement->median_ms,
                      options_.energy_seconds, [&] { s.wait(); }};
      if (const auto window = measure_energy(*gpu_, runs)) {
        observed.energy_j = window->energy_j;
        observed.power_w = window->power_w;
        observed.energy_method = window->method;
        observed.energy_runs = window->runs;
      }
      outcome.benchmark_seconds += seconds_since(energy_started);
    }
  } catch (const LaunchFailure& e) {
    outcome.status = Status::launch_error;
    outcome.error = e.what();
    s.wait();
  } catch (const Timeout& e) {
    outcome.status = Status::timeout;
    outcome.error = e.what();
    usable_ = false;  // the kernel may still be running; only a new process recovers
  } catch (const cuda::CudaError& e) {
    outcome.error = e.what();
    if (e.poisons_context()) {
      outcome.status = Status::runtime_fault;
      usable_ = false;
    } else {
      outcome.status = Status::launch_error;
    }
  }
  return outcome;
}

namespace {

void run_plan(GpuEvaluator::State& s, const std::vector<Step>& plan,
              const std::map<std::string, CUfunction>& functions) {
  for (const auto& step : plan) {
    if (const auto* memset = std::get_if<MemsetStep>(&step)) {
      if (memset->bytes % 4) throw Error("memset of '" + memset->buffer + "' is not a whole number of 32-bit words");
      const CUdeviceptr first = s.buffer(memset->buffer).get() + memset->byte_offset;
      const std::int64_t words = memset->bytes / 4;
      if (!memset->stream_write) {
        CUTUNE_CU(cuMemsetD32Async, first, memset->word, static_cast<std::size_t>(words), s.stream.get());
        continue;
      }
      if (words > MemsetStep::kMaxStreamWriteWords)
        throw Error("stream writes of '" + memset->buffer + "': " + std::to_string(words) + " words, at most " +
                    std::to_string(MemsetStep::kMaxStreamWriteWords));
      for (std::int64_t w = 0; w < words; ++w)
        CUTUNE_CU(cuStreamWriteValue32, s.stream.get(), first + 4 * w, memset->word, CU_STREAM_WRITE_VALUE_DEFAULT);
      continue;
    }
    const auto& launch = std::get<KernelLaunch>(step);
    std::vector<std::array<unsigned char, 8>> storage(launch.args.size());
    std::vector<void*> params(launch.args.size());
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      std::visit(
          [&](const auto& arg) {
            using A = std::decay_t<decltype(arg)>;
            if constexpr (std::is_same_v<A, BufferArg>) {
              const CUdeviceptr pointer = s.buffer(arg.buffer).get() + static_cast<CUdeviceptr>(arg.byte_offset);
              std::memcpy(storage[i].data(), &pointer, sizeof pointer);
            } else {
              std::memcpy(storage[i].data(), &arg, sizeof arg);
            }
          },
          launch.args[i]);
      params[i] = storage[i].data();
    }
    CUresult r;
    if (launch.programmatic) {
      // Programmatic stream serialisation: the launch may start before the one before it ends; the
      // kernel's griddepcontrol.wait holds its reads of that launch's outputs.
      CUlaunchAttribute attribute{};
      attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attribute.value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig config{};
      config.gridDimX = launch.grid.x, config.gridDimY = launch.grid.y, config.gridDimZ = launch.grid.z;
      config.blockDimX = launch.block.x, config.blockDimY = launch.block.y, config.blockDimZ = launch.block.z;
      config.sharedMemBytes = launch.dynamic_shared_bytes;
      config.hStream = s.stream.get();
      config.attrs = &attribute;
      config.numAttrs = 1;
      r = cuda::driver().cuLaunchKernelEx(&config, functions.at(launch.kernel), params.data(), nullptr);
    } else {
      r = cuda::driver().cuLaunchKernel(functions.at(launch.kernel), launch.grid.x, launch.grid.y, launch.grid.z,
                                        launch.block.x, launch.block.y, launch.block.z, launch.dynamic_shared_bytes,
                                        s.stream.get(), params.data(), nullptr);
    }
    if (r != CUDA_SUCCESS) {
      cuda::CudaError error(launch.kernel + " launch failed: " + cuda::describe(r), r);
      if (error.poisons_context()) throw error;
      throw LaunchFailure(error.what());
    }
  }
}

}  // namespace

double GpuEvaluator::measure_copy_bandwidth(Device& device) {
  device.make_current();
  const std::size_t bytes =
      static_cast<std::size_t>(std::min<std::int64_t>(std::int64_t{512} << 20, device.fingerprint().memory_bytes / 8));
  DeviceBuffer source(bytes), destination(bytes);
  Stream stream;
  CudaEventClock clock(stream.get());
  CUTUNE_CU(cuMemsetD32Async, source.get(), 0x3f800000u, bytes / 4, stream.get());  // 1.0f, not zeros
  // 3 warm-up copies, then 20 timed ones; no L2 flush, as each copy is far larger than the L2.
  SampleTimer timer(
      clock, {.run = [&] { CUTUNE_CU(cuMemcpyDtoDAsync, destination.get(), source.get(), bytes, stream.get()); }});
  const double median_ms = summarize(timer.measure(3, StoppingRule::fixed_count(20)).samples_ms).median_ms;
  return 2.0 * static_cast<double>(bytes) / (median_ms * 1e-3) / 1e9;
}

}  // namespace cutune
