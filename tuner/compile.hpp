#pragma once
// NVRTC: source + -D options → cubin for one architecture. A failure is a value carrying the log
// and the options, never an exception (compile errors are data). Results are cached on disk by a
// key over source, options, architecture and NVRTC version, and batches compile in parallel
// worker processes, since NVRTC scales across processes but not across threads.
#include <optional>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cutune {

class Family;
class Problem;
class Space;
struct Config;

struct CompileRequest {
  std::string program_name;  // shown in NVRTC's log, e.g. "scan.cu"
  std::string source;
  std::vector<std::string> options;  // -D definitions; the architecture is added from `arch`
  std::string arch;                  // "sm_90"
};

struct Compiled {
  bool ok = false;
  std::vector<char> cubin;
  std::string log;                   // NVRTC's log (warnings on success, errors on failure)
  std::vector<std::string> options;  // the full option list NVRTC saw
  // What this compile cost now: NVRTC's time, or for a cache hit the time to read the entry (what
  // the result stores as compile_s: a warm cache makes tuning cheaper, and the record says so).
  double seconds = 0;
  double cold_seconds = 0;  // NVRTC's time when the entry was first compiled
  bool from_cache = false;
};

// The one way a config of a family is turned into a compile request: the family's template,
// its axis definitions, its problem definitions and its other NVRTC options. `source` is
// family.source(), passed in because callers compile many configs of one source.
CompileRequest compile_request(const Family& family, const std::string& source, const Space& space,
                               const Config& config, const Problem& problem, const std::string& arch);

// NVRTC's version as "13.0".
std::string nvrtc_version();

// Throws UsageError naming what this NVRTC compiles for when it cannot compile for `arch`
// ("sm_90"; an "a" suffix is checked by its number), before a whole space fails to compile.
void check_nvrtc_supports(const std::string& arch);

// The cache key: covers source, options, architecture and NVRTC version.
std::string compile_key(const CompileRequest& request);

Compiled compile(const CompileRequest& request);

// A folder of <key>.cubin + <key>.json files. Writes are atomic (temp file + rename), so
// concurrent writers (worker processes, several tuners) never expose a half-written entry.
class CompileCache {
 public:
  // $CUTUNE_CACHE, else $XDG_CACHE_HOME/cutune/cubins, else ~/.cache/cutune/cubins.
  static std::string default_folder();
  // $CUTUNE_CACHE_MAX_MB megabytes, else 2 GiB.
  static std::uint64_t default_limit_bytes();
  // Empty folder: cache disabled. `limit_bytes` bounds the folder between runs (evict()).
  explicit CompileCache(std::string folder, std::uint64_t limit_bytes = default_limit_bytes());

  // Removes the least recently used entries (a hit renews an entry) until the folder holds at most
  // the limit; returns the bytes freed. Tuning runs call it once at their start, so that the
  // folder stays bounded while a run's own entries are all there for its end.
  std::uint64_t evict() const;

  std::optional<Compiled> find(const std::string& key) const;
  void put(const std::string& key, const Compiled& compiled) const;
  bool enabled() const { return !folder_.empty(); }

  // Compiles and caches (in `jobs` worker processes when the cache is enabled) every request
  // not already cached; returns the results in request order. `on_progress(done, total)` hears of
  // each compile as it finishes (total: the requests not cached).
  using CompileProgress = std::function<void(std::size_t done, std::size_t total)>;
  std::vector<Compiled> compile_all(const std::vector<CompileRequest>& requests, int jobs,
                                    const CompileProgress& on_progress = {}) const;
  Compiled compile_one(const CompileRequest& request) const;

 private:
  std::string folder_;
  std::uint64_t limit_bytes_;
};

}  // namespace cutune
