#include "compile_pool.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.hpp"
#include "worker.hpp"

namespace cutune {
namespace {

nlohmann::json request_frame(const CompileRequest& r) {
  return {{"name", r.program_name}, {"source", r.source}, {"options", r.options}, {"arch", r.arch}};
}

nlohmann::json result_frame(const Compiled& c) {
  return {{"ok", c.ok},
          {"log", c.log},
          {"options", c.options},
          {"seconds", c.seconds},
          {"cubin", nlohmann::json::binary(std::vector<std::uint8_t>(c.cubin.begin(), c.cubin.end()))}};
}

Compiled compiled_from(const nlohmann::json& j) {
  Compiled c;
  c.ok = j.at("ok").get<bool>();
  c.log = j.at("log").get<std::string>();
  c.options = j.at("options").get<std::vector<std::string>>();
  c.seconds = c.cold_seconds = j.at("seconds").get<double>();
  const auto& bytes = j.at("cubin").get_binary();
  c.cubin.assign(bytes.begin(), bytes.end());
  return c;
}

// One long-lived compile process; started on first use, replaced when it dies.
class CompileProcess {
 public:
  ~CompileProcess() { stop(); }
  CompileProcess() = default;
  CompileProcess(const CompileProcess&) = delete;
  CompileProcess& operator=(const CompileProcess&) = delete;

  // nullopt when the process cannot be started or died on this request (the caller compiles in
  // this thread instead, which is always right, only slower).
  std::optional<Compiled> compile(const CompileRequest& request) {
    try {
      if (process_.pid <= 0) process_ = spawn_with_pipes({worker_executable(), "--compile"});
      write_frame(process_.to_child, request_frame(request));
      const auto reply = read_frame(process_.from_child);
      if (!reply) throw Error("the compile process ended");
      return compiled_from(*reply);
    } catch (const std::exception&) {
      stop();
      return std::nullopt;
    }
  }

 private:
  void stop() {
    if (process_.pid <= 0) return;
    close(process_.to_child);  // end of stdin: it exits
    close(process_.from_child);
    kill(process_.pid, SIGTERM);
    waitpid(process_.pid, nullptr, 0);
    process_ = {};
  }
  SpawnedProcess process_;
};

}  // namespace

CompilePool::CompilePool(const CompileCache& cache, int jobs) : cache_(cache) {
  for (int slot = 0; slot < std::max(1, jobs); ++slot) threads_.emplace_back([this, slot] { serve(slot); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& job : queue_) job->promise.set_exception(std::make_exception_ptr(Error("the compile pool stopped")));
    queue_.clear();
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

std::shared_future<Compiled> CompilePool::submit(const CompileRequest& request, bool urgent) {
  const std::string key = compile_key(request);
  std::lock_guard lock(mutex_);
  if (auto it = in_flight_.find(key); it != in_flight_.end()) {
    if (urgent) move_to_front(key);
    return it->second;
  }
  if (auto hit = cache_.find(key)) {
    std::promise<Compiled> done;
    done.set_value(std::move(*hit));
    return done.get_future().share();
  }
  auto job = std::make_shared<Job>();
  job->request = request;
  job->key = key;
  auto future = job->promise.get_future().share();
  in_flight_.emplace(key, future);
  if (urgent)
    queue_.push_front(std::move(job));
  else
    queue_.push_back(std::move(job));
  ready_.notify_one();
  return future;
}

CompilePool::Stats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CompilePool::hurry(const std::string& key) {
  std::lock_guard lock(mutex_);
  move_to_front(key);
}

void CompilePool::move_to_front(const std::string& key) {
  const auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const auto& job) { return job->key == key; });
  if (queued == queue_.end() || queued == queue_.begin()) return;
  auto job = std::move(*queued);
  queue_.erase(queued);
  queue_.push_front(std::move(job));
}

void CompilePool::serve(int) {
  CompileProcess process;
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Compiled result;
    if (auto compiled = process.compile(job->request))
      result = std::move(*compiled);
    else
      result = cutune::compile(job->request);
    cache_.put(job->key, result);
    {
      // Later requests for the key find it in the cache (when there is one) from here on.
      std::lock_guard lock(mutex_);
      in_flight_.erase(job->key);
      ++stats_.compiles;
      stats_.seconds += result.cold_seconds;
    }
    job->promise.set_value(std::move(result));
  }
}

int serve_compiles() {
  // Compiles are background work: below the GPU worker's set-up and the session, which are on the
  // GPU's critical path, they take whatever CPU is left (with a cold cache, all of it).
  setpriority(PRIO_PROCESS, 0, 10);
  while (auto message = read_frame(STDIN_FILENO)) {
    const CompileRequest request{message->at("name").get<std::string>(), message->at("source").get<std::string>(),
                                 message->at("options").get<std::vector<std::string>>(),
                                 message->at("arch").get<std::string>()};
    write_frame(STDOUT_FILENO, result_frame(compile(request)));
  }
  return 0;
}

}  // namespace cutune
