#include "worker.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>

#include "core/phase_trace.hpp"
#include "device.hpp"
#include "output_check.hpp"
#include "spec_family.hpp"

extern char** environ;

namespace cutune {
namespace {

struct WorkerLost : Error {
  using Error::Error;
};
struct WorkerTimeout : Error {
  using Error::Error;
};

void write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw WorkerLost(std::string("writing to the worker pipe failed: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

// Reads exactly `bytes`; false on end of stream before the first byte.
bool read_all(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<unsigned char*>(data);
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::read(fd, p + got, bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && got == 0) return false;
    if (n <= 0) throw WorkerLost("the worker pipe closed in the middle of a message");
    got += static_cast<std::size_t>(n);
  }
  return true;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

void write_frame(int fd, const nlohmann::json& message) {
  const std::vector<std::uint8_t> payload = nlohmann::json::to_cbor(message);
  const std::uint64_t length = payload.size();
  write_all(fd, &length, sizeof length);
  write_all(fd, payload.data(), payload.size());
}

std::optional<nlohmann::json> read_frame(int fd) {
  std::uint64_t length = 0;
  if (!read_all(fd, &length, sizeof length)) return std::nullopt;
  std::vector<std::uint8_t> payload(length);
  if (length && !read_all(fd, payload.data(), length))
    throw WorkerLost("the worker pipe closed in the middle of a message");
  return nlohmann::json::from_cbor(payload);
}

void to_json(nlohmann::json& j, Status status) { j = to_string(status); }

void from_json(const nlohmann::json& j, Status& status) {
  const std::string name = j.get<std::string>();
  const auto named = status_named(name);
  if (!named) throw Error("unknown status '" + name + "'");
  status = *named;
}

void to_json(nlohmann::json& j, const Measurement& measurement) { j = measurement.samples_ms; }

void from_json(const nlohmann::json& j, Measurement& measurement) {
  measurement = summarize(j.get<std::vector<double>>());
}

Outcome outcome_from_json(const nlohmann::json& message) {
  try {
    return message.get<Outcome>();
  } catch (const std::exception& e) {
    throw Error(std::string("the GPU worker's answer cannot be read: ") + e.what());
  }
}

std::string worker_executable() {
  if (const char* env = std::getenv("CUTUNE_WORKER"); env && *env) return env;
  std::error_code ec;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "cutune-worker";
  if (!ec && std::filesystem::exists(beside, ec)) return beside.string();
  return CUTUNE_WORKER_BUILD_PATH;
}

// ---- parent side ---------------------------------------------------------------------------------

EvaluationWorker::EvaluationWorker(int device_ordinal, const Family& family, MeasureOptions options)
    : device_ordinal_(device_ordinal), family_(family), options_(options) {}

EvaluationWorker::~EvaluationWorker() { stop(false); }

SpawnedProcess spawn_with_pipes(const std::vector<std::string>& args) {
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create pipes for ") + args.at(0) + ": " + std::strerror(errno));
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    throw Error(std::string("cannot create pipes for ") + args.at(0) + ": " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  SpawnedProcess p;
  const int rc = posix_spawn(&p.pid, args.at(0).c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) {
    close(to_child[1]);
    close(from_child[0]);
    throw Error("cannot start '" + args.at(0) + "': " + std::strerror(rc));
  }
  // A child that dies must not kill us with SIGPIPE on the next write.
  signal(SIGPIPE, SIG_IGN);
  p.to_child = to_child[1];
  p.from_child = from_child[0];
  return p;
}

void EvaluationWorker::start() {
  const SpawnedProcess p = spawn_with_pipes({worker_executable(), "--device", std::to_string(device_ordinal_)});
  pid_ = p.pid;
  to_worker_ = p.to_child;
  from_worker_ = p.from_child;
  problem_sent_ = problem_pending_ = false;
}

void EvaluationWorker::launch() {
  if (pid_ > 0) return;
  try {
    start();
  } catch (const std::exception&) {
    pid_ = -1;
  }
}

void EvaluationWorker::finish() {
  if (pid_ <= 0 || to_worker_ < 0) return;
  close(to_worker_);  // end of stdin: a healthy worker exits by itself
  to_worker_ = -1;
}

void EvaluationWorker::stop(bool kill_now) {
  if (pid_ <= 0) return;
  if (kill_now) kill(pid_, SIGKILL);
  if (to_worker_ >= 0) close(to_worker_);  // end of stdin: a healthy worker exits by itself
  close(from_worker_);
  // A killed worker whose kernel still spins can take the driver a while to tear down; wait a
  // bounded time, then go on (the replacement gets its own context) and reap it later.
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kill_now ? 15 : 60);
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "cutune: GPU worker %d has not exited yet; continuing without waiting for it\n",
                   static_cast<int>(pid_));
      abandoned_.push_back(pid_);
      break;
    }
    usleep(10000);
  }
  for (auto it = abandoned_.begin(); it != abandoned_.end();)
    it = waitpid(*it, &status, WNOHANG) != 0 ? abandoned_.erase(it) : it + 1;
  trace_phase("parent: worker reaped");
  pid_ = -1;
  to_worker_ = from_worker_ = -1;
  problem_sent_ = problem_pending_ = false;  // a replacement worker starts with no problem
}

void EvaluationWorker::send(const nlohmann::json& message) {
  if (pid_ <= 0) start();
  write_frame(to_worker_, message);
}

nlohmann::json EvaluationWorker::receive(double timeout_seconds) {
  pollfd readable{from_worker_, POLLIN, 0};
  const int ready = poll(&readable, 1, static_cast<int>(timeout_seconds * 1000));
  if (ready == 0)
    throw WorkerTimeout("no answer from the GPU worker in " + std::to_string(static_cast<int>(timeout_seconds)) + " s");
  auto reply = read_frame(from_worker_);
  if (!reply) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    close(to_worker_);
    close(from_worker_);
    to_worker_ = from_worker_ = -1;
    problem_sent_ = problem_pending_ = false;
    throw WorkerLost("the GPU worker " + describe_exit(status));
  }
  if (reply->contains("fatal")) throw Error("GPU worker: " + (*reply)["fatal"].get<std::string>());
  return *reply;
}

nlohmann::json EvaluationWorker::request(const nlohmann::json& message, double timeout_seconds) {
  send(message);
  return receive(timeout_seconds);
}

nlohmann::json EvaluationWorker::problem_message(const char* op, const Problem& problem, std::uint64_t seed) const {
  return ProblemMessage{op, family_.name(), family_.spec_file().value_or(""), problem.descriptor(), seed, options_};
}

void EvaluationWorker::set_problem(const Problem& problem, std::uint64_t seed) {
  if (problem_pending_) {  // a problem that was never evaluated: its answer comes first
    try {
      receive(600);
    } catch (const std::exception&) {
      stop(true);
    }
  }
  problem_ = problem;
  seed_ = seed;
  problem_sent_ = problem_pending_ = false;
  // Sent now and answered when the first config is evaluated: the worker starts and sets the
  // problem up while the first compiles run. A worker that cannot take it gets it again then.
  try {
    send(problem_message("problem", problem, seed));
    problem_sent_ = problem_pending_ = true;
  } catch (const std::exception&) {
    stop(true);
  }
}

void EvaluationWorker::prepare(const Problem& next, std::uint64_t seed) {
  if (pid_ <= 0 || problem_pending_) return;  // only alongside a problem that is set up
  try {
    request(problem_message("prepare", next, seed), 60);
  } catch (const WorkerTimeout&) {
    stop(true);
  } catch (const WorkerLost&) {
    stop(true);
  }
}

Outcome EvaluationWorker::evaluate(const Space& space, const Config& config, const Compiled& compiled,
                                   std::optional<double> best_ms) {
  if (!compiled.ok) {
    Outcome o;
    o.status = Status::compile_error;
    o.error = compiled.log;
    return o;
  }
  if (!problem_) throw Error("EvaluationWorker::evaluate called before set_problem");
  // Generous backstop: the worker detects a hung run itself after timeout_seconds, so this
  // only fires when the worker cannot answer at all.
  const double backstop = 4 * options_.timeout_seconds + options_.max_sample_seconds + 120;
  try {
    // Set-up time is the time the GPU waits for it, from here to its answer.
    if (!problem_sent_) {
      send(problem_message("problem", *problem_, seed_));
      problem_sent_ = problem_pending_ = true;
    }
    if (problem_pending_) {
      const auto waiting_since = std::chrono::steady_clock::now();
      const nlohmann::json answer = receive(600);
      problem_pending_ = false;
      setup_host_seconds_ += answer.value("host_seconds", 0.0);
      setup_device_seconds_ += answer.value("device_seconds", 0.0);
      setup_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - waiting_since).count();
    }
    const EvaluateMessage message{
        .config = space.key(config),
        .best_ms = best_ms,
        .log = compiled.log,
        .cubin = nlohmann::json::binary_t(std::vector<std::uint8_t>(compiled.cubin.begin(), compiled.cubin.end()))};
    const nlohmann::json reply = request(message, backstop);
    Outcome outcome = outcome_from_json(reply);
    // The worker can do no more GPU work; after a hang its kernel may still be running, and
    // only killing the process makes the driver tear it down.
    if (reply.value("exiting", false)) stop(outcome.status == Status::timeout);
    return outcome;
  } catch (const WorkerTimeout& e) {
    stop(true);
    ++restarts_;
    Outcome o;
    o.status = Status::timeout;
    o.error = e.what();
    return o;
  } catch (const WorkerLost& e) {
    stop(true);
    ++restarts_;
    Outcome o;
    o.status = Status::runtime_fault;
    o.error = e.what();
    return o;
  }
}

// ---- worker side ---------------------------------------------------------------------------------

int serve_worker(int device_ordinal) {
  // Each problem allocates its host buffers anew (inputs, expected outputs: up to GiBs). glibc
  // would map each large buffer fresh and unmap it when freed, so every problem paid for the
  // kernel zeroing every page again (at 2^26 floats, about a tenth of a second per buffer). Kept
  // on the heap and never trimmed, a problem of the same size reuses the last one's pages.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  std::unique_ptr<Device> device;
  // The GPU comparison kernels live per process (OutputChecker::shared_for) in the device's
  // context: they must go before it does, and locals go in reverse order.
  struct ReleaseCheckersFirst {
    ~ReleaseCheckersFirst() { OutputChecker::release_all(); }
  } release_checkers_first;
  std::unique_ptr<GpuEvaluator> evaluator;
  std::optional<Space> space;
  const Family* family = nullptr;
  std::unique_ptr<SpecFamily> spec;  // a kernel spec's family, read again here from its file
  // The next problem's host side, computed on other threads while the GPU measures this one.
  struct Prepared {
    std::string key;  // descriptor and seed
    std::future<HostProblem> host;
  };
  std::optional<Prepared> prepared;
  trace_phase("worker: start");
  try {
    device = std::make_unique<Device>(device_ordinal);
    trace_phase("worker: device ready");
  } catch (const std::exception& e) {
    // Answer the first request with the reason, so the parent can report it in one line.
    if (read_frame(STDIN_FILENO)) write_frame(STDOUT_FILENO, {{"fatal", e.what()}});
    return 1;
  }
  const auto resolve_family = [&](const ProblemMessage& request) {
    if (request.spec.empty()) {
      family = &family_named(request.family);
    } else if (!spec || spec->spec_file() != request.spec) {
      if (prepared) prepared->host.wait();  // it may be using the spec about to be replaced
      prepared.reset();
      spec = load_spec_family(request.spec);
      family = spec.get();
    } else {
      family = spec.get();
    }
  };
  const auto key_of = [](const ProblemMessage& request) {
    return request.problem.dump() + "#" + std::to_string(request.seed);
  };
  while (auto message = read_frame(STDIN_FILENO)) {
    try {
      const std::string op = message->at("op").get<std::string>();
      if (op == "problem") {
        const auto request = message->get<ProblemMessage>();
        resolve_family(request);
        space = family->space(device->limits());
        const Problem problem = family->problem_from_descriptor(request.problem);
        trace_phase("worker: problem asked");
        const auto device_started = std::chrono::steady_clock::now();
        evaluator.reset();  // its buffers go before this problem's are allocated
        evaluator = std::make_unique<GpuEvaluator>(*device, *family, request.measure);
        double device_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - device_started).count();
        // The host side as prepared while the last problem was measured (waiting for it if need
        // be), else computed now; timed apart from the GPU's part, for the run's summary.
        const auto host_started = std::chrono::steady_clock::now();
        HostProblem host = prepared && prepared->key == key_of(request)
                               ? prepared->host.get()
                               : GpuEvaluator::host_problem(*family, problem, request.seed);
        const double host_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - host_started).count();
        prepared.reset();
        trace_phase("worker: host ready");
        const auto upload_started = std::chrono::steady_clock::now();
        evaluator->set_problem(std::move(host));
        device_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_started).count();
        trace_phase("worker: problem set up");
        write_frame(STDOUT_FILENO, {{"ok", true}, {"host_seconds", host_seconds}, {"device_seconds", device_seconds}});
      } else if (op == "prepare") {
        trace_phase("worker: prepare asked");
        // Answered at once; the work goes on while evaluations are served. Skipped when the two
        // problems' host buffers together could crowd the machine's memory.
        const auto request = message->get<ProblemMessage>();
        resolve_family(request);
        const Problem next = family->problem_from_descriptor(request.problem);
        double bytes = 0;
        for (const auto& b : family->buffers(next)) bytes += static_cast<double>(b.bytes);
        const double memory =
            static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
        const bool worth_it = bytes <= memory / 8;
        if (prepared) prepared->host.wait();
        prepared.reset();
        if (worth_it)
          prepared =
              Prepared{key_of(request), std::async(std::launch::async, [family = family, next, seed = request.seed] {
                         return GpuEvaluator::host_problem(*family, next, seed);
                       })};
        write_frame(STDOUT_FILENO, {{"ok", true}, {"preparing", worth_it}});
      } else if (op == "evaluate") {
        if (!evaluator) throw Error("evaluate before problem");
        const auto request = message->get<EvaluateMessage>();
        Compiled compiled;
        compiled.ok = true;
        compiled.cubin.assign(request.cubin.begin(), request.cubin.end());
        compiled.log = request.log;
        const Outcome outcome = evaluator->evaluate(*space, space->parse(request.config), compiled, request.best_ms);
        nlohmann::json reply = outcome;
        reply["exiting"] = !evaluator->usable();
        write_frame(STDOUT_FILENO, reply);
        // Sticky fault or hang: leave at once, without destructors, which would wait on the
        // context (and so on a kernel that may never finish); the parent starts a fresh worker.
        if (!evaluator->usable()) _exit(0);
      } else {
        throw Error("unknown request '" + op + "'");
      }
    } catch (const std::exception& e) {
      write_frame(STDOUT_FILENO, {{"fatal", e.what()}});
    }
  }
  trace_phase("worker: stdin closed, exiting");
  evaluator.reset();
  trace_phase("worker: buffers freed");
  return 0;
}

}  // namespace cutune
