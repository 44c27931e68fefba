#pragma once
// Compiles run ahead of the GPU. A session submits a batch's compile requests at once and takes
// each config's cubin when it evaluates it; meanwhile `jobs` compile processes work through the
// queue, so after the first config of a batch the GPU rarely waits for NVRTC, and NVRTC keeps
// compiling while the GPU measures. NVRTC scales across processes, not threads: each slot of the
// pool is a thread that drives one long-lived `cutune-worker --compile` process over pipes (the
// frames of worker.hpp), started on first use and replaced if it dies.
//
// Requests with the same compile key (configs that differ only in plan-only axes) share one
// compile; cache hits are answered at once, and fresh results are put into the cache. A session
// that will evaluate the whole space anyway prefetches it: every config is queued at the start,
// and the configs a strategy asks for next jump the queue.
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "compile.hpp"

namespace cutune {

class CompilePool {
 public:
  CompilePool(const CompileCache& cache, int jobs);
  ~CompilePool();                            // finishes nothing more: queued requests are abandoned, the processes end
  CompilePool(const CompilePool&) = delete;  // owns threads and processes
  CompilePool& operator=(const CompilePool&) = delete;

  // `urgent`: the GPU is about to need it: it goes to the front of the queue.
  std::shared_future<Compiled> submit(const CompileRequest& request, bool urgent = false);
  // Moves a queued request (a prefetch) to the front; nothing when it started or finished.
  void hurry(const std::string& compile_key);

  // What the pool's processes did so far: fresh compiles (cache misses) and their summed NVRTC
  // seconds, for the session's account of where the time went.
  struct Stats {
    int compiles = 0;
    double seconds = 0;
  };
  Stats stats() const;
  int jobs() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    CompileRequest request;
    std::string key;
    std::promise<Compiled> promise;
  };
  void serve(int slot);
  void move_to_front(const std::string& key);  // with mutex_ held

  const CompileCache& cache_;
  mutable std::mutex mutex_;
  Stats stats_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::unordered_map<std::string, std::shared_future<Compiled>> in_flight_;  // by compile key
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// The `cutune-worker --compile` side: compiles each request frame read from stdin and answers
// with a frame on stdout, until stdin closes. Returns the exit code.
int serve_compiles();

}  // namespace cutune
