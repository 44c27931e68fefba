#pragma once
// A problem's host side (its inputs and CPU-reference outputs) computed once per host and shared
// by the run's GPU workers. Without it every worker of a multi-GPU run computes every problem's
// host side itself, and the workers compete for the host's cores: on 4 × H200 that was 2.8 of the
// main job's 24 GPU-seconds (bench/RESULTS.md, "Scale-out").
//
// The first worker to need a problem computes it and leaves it in a file in the run's folder on
// tmpfs (/dev/shm); the others wait for it (a lock file per problem) and read it instead.
//   - Files appear whole or not at all (written under a temporary name, then renamed): a worker
//     killed while computing or writing leaves no file, and the next one computes it again.
//   - Sharing is an optimisation only: where the folder cannot take a problem (too little free
//     space) or a file cannot be read, the worker computes the problem itself.
//   - One folder per run, made and removed by the session (HostShareFolder); problems the run is
//     done with are removed as it goes, so tmpfs holds at most the current and the next.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "evaluate.hpp"

namespace cutune {

// Session side: the run's folder, removed with everything in it when this goes.
class HostShareFolder {
 public:
  // A fresh folder under `parent` (default /dev/shm), or nullopt where none can be made there.
  static std::optional<HostShareFolder> create(const std::string& parent = "/dev/shm");
  ~HostShareFolder();
  HostShareFolder(HostShareFolder&& other) noexcept;
  HostShareFolder& operator=(HostShareFolder&&) = delete;
  HostShareFolder(const HostShareFolder&) = delete;
  HostShareFolder& operator=(const HostShareFolder&) = delete;

  const std::string& path() const { return path_; }
  // Removes a problem's file once no worker of the run needs it again.
  void forget(const std::string& problem_key) const;

 private:
  explicit HostShareFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The key of a problem's host side: its descriptor and the seed of its inputs.
std::string host_share_key(const Problem& problem, std::uint64_t seed);

// Worker side. The host side of `key`'s problem: read from `folder` when a worker of the run has
// left it there, else computed with `compute` (while other workers asking for the same key wait)
// and left there for them. `computed`, when given, says which of the two happened.
HostProblem shared_host_problem(const std::string& folder, const std::string& key, const Problem& problem,
                                const std::function<HostProblem()>& compute, bool* computed = nullptr);

}  // namespace cutune
