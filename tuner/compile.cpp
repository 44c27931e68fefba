#include "compile.hpp"

#include "core/error.hpp"
#include "core/limits.hpp"
#include "family.hpp"

#include <fcntl.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/hash.hpp"

namespace cutune {
namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_atomically(const std::filesystem::path& path, const char* data, std::size_t bytes) {
  const auto temporary = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(data, static_cast<std::streamsize>(bytes));
    if (!out) return;  // a cache that cannot be written only costs speed
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) std::filesystem::remove(temporary, ec);
}

}  // namespace

CompileRequest compile_request(const Family& family, const std::string& source, const Space& space,
                               const Config& config, const Problem& problem, const std::string& arch) {
  std::vector<std::string> options = family.axis_definitions(space, config);
  for (auto& d : family.problem_definitions(problem)) options.push_back(std::move(d));
  for (auto& o : family.compile_options()) options.push_back(std::move(o));
  return {family.template_file(), source, std::move(options), arch};
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

void check_nvrtc_supports(const std::string& arch) {
  const DeviceLimits limits = limits_for_arch(arch);
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return;  // nothing to check against
  std::vector<int> supported(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(supported.data()) != NVRTC_SUCCESS) return;
  const int wanted = limits.cc_major * 10 + limits.cc_minor;
  if (std::find(supported.begin(), supported.end(), wanted) != supported.end()) return;
  std::string known;
  for (const int a : supported) known += (known.empty() ? "sm_" : ", sm_") + std::to_string(a);
  throw UsageError("--arch " + arch + ": NVRTC " + nvrtc_version() + " compiles for " + known);
}

// Bumped whenever what is compiled for a request, or how an entry is stored, changes other than
// through the request itself (compile()'s fixed options, the entry's files): old entries are then
// never found, and age out of the cache. 4: ptxas reports each function's resources (-v), so
// that a cached entry's log has its spills (ptxas_report.hpp), and NVRTC's own cache is off.
constexpr int kCacheFormat = 4;

std::string compile_key(const CompileRequest& r) {
  Fnv1a hash;
  hash.add("cutune cubin cache format " + std::to_string(kCacheFormat));
  hash.add(r.source).add(r.arch).add(nvrtc_version());
  for (const auto& option : r.options) hash.add(option);
  return hash.hex();
}

Compiled compile(const CompileRequest& r) {
  Compiled result;
  result.options = r.options;
  result.options.push_back("--gpu-architecture=" + r.arch);
  result.options.push_back("-std=c++17");
  // ptxas' resource report (registers, stack, spills) in the log; it changes nothing in the cubin.
  // NVRTC (12.9 and later) answers a compile it has seen before from its own cache, and then writes
  // no report: ours (CompileCache) keeps the log with the cubin, so NVRTC's is turned off.
  result.options.push_back("--ptxas-options=-v");
  result.options.push_back("--no-cache");
  const auto started = std::chrono::steady_clock::now();

  nvrtcProgram raw = nullptr;
  nvrtcResult status = nvrtcCreateProgram(&raw, r.source.c_str(), r.program_name.c_str(), 0, nullptr, nullptr);
  if (status != NVRTC_SUCCESS) {
    result.log = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(status);
    return result;
  }
  Program program(raw);
  std::vector<const char*> options;
  for (const auto& o : result.options) options.push_back(o.c_str());
  status = nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());

  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program.get(), &log_size);
  result.log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(program.get(), result.log.data());
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) result.log.pop_back();

  if (status == NVRTC_SUCCESS) {
    std::size_t cubin_size = 0;
    status = nvrtcGetCUBINSize(program.get(), &cubin_size);
    if (status == NVRTC_SUCCESS) {
      result.cubin.resize(cubin_size);
      status = nvrtcGetCUBIN(program.get(), result.cubin.data());
    }
    result.ok = status == NVRTC_SUCCESS && cubin_size > 0;
    if (!result.ok) result.log += std::string("\nnvrtcGetCUBIN failed: ") + nvrtcGetErrorString(status);
  } else if (result.log.empty()) {
    result.log = std::string("nvrtcCompileProgram failed: ") + nvrtcGetErrorString(status);
  }
  result.seconds = result.cold_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

std::string CompileCache::default_folder() {
  if (const char* env = std::getenv("CUTUNE_CACHE"); env) return env;  // "" disables
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/cutune/cubins";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/cutune/cubins";
  return {};
}

std::uint64_t CompileCache::default_limit_bytes() {
  if (const char* env = std::getenv("CUTUNE_CACHE_MAX_MB"); env && *env) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(env, &end, 10);
    if (end && *end == '\0' && mb > 0) return static_cast<std::uint64_t>(mb) << 20;
  }
  return std::uint64_t{2} << 30;
}

CompileCache::CompileCache(std::string folder, std::uint64_t limit_bytes)
    : folder_(std::move(folder)), limit_bytes_(limit_bytes) {
  if (folder_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  if (ec) folder_.clear();  // unwritable: run without a cache rather than fail
}

std::uint64_t CompileCache::evict() const {
  if (!enabled()) return 0;
  // Entries by key: when last used (the .json's time, renewed on every hit) and their bytes.
  struct Entry {
    std::filesystem::file_time_type used;
    std::uint64_t bytes = 0;
    bool has_meta = false;
  };
  std::map<std::string, Entry> entries;
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(folder_, ec)) {
    const auto& path = file.path();
    const std::string ext = path.extension().string();
    if (ext != ".json" && ext != ".cubin") continue;  // another program's file, or a write under way
    const std::uint64_t bytes = file.file_size(ec);
    if (ec) continue;
    Entry& entry = entries[path.stem().string()];
    entry.bytes += bytes;
    total += bytes;
    if (ext == ".json") {
      entry.has_meta = true;
      entry.used = file.last_write_time(ec);
    }
  }
  if (total <= limit_bytes_) return 0;
  std::vector<std::pair<std::filesystem::file_time_type, std::string>> by_age;
  for (const auto& [key, entry] : entries)  // a cubin without its .json is never found: oldest of all
    by_age.push_back({entry.has_meta ? entry.used : std::filesystem::file_time_type::min(), key});
  std::sort(by_age.begin(), by_age.end());
  std::uint64_t freed = 0;
  for (const auto& [used, key] : by_age) {
    if (total - freed <= limit_bytes_) break;
    // The .json first: from then on the entry is not found, whatever happens to its cubin.
    std::filesystem::remove(std::filesystem::path(folder_) / (key + ".json"), ec);
    std::filesystem::remove(std::filesystem::path(folder_) / (key + ".cubin"), ec);
    freed += entries[key].bytes;
  }
  return freed;
}

std::optional<Compiled> CompileCache::find(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  const auto started = std::chrono::steady_clock::now();
  const std::filesystem::path meta_path = std::filesystem::path(folder_) / (key + ".json");
  std::error_code ec;
  if (!std::filesystem::exists(meta_path, ec)) return std::nullopt;
  try {
    const auto meta = nlohmann::json::parse(read_file(meta_path));
    Compiled c;
    c.ok = meta.at("ok").get<bool>();
    c.log = meta.at("log").get<std::string>();
    c.options = meta.at("options").get<std::vector<std::string>>();
    c.cold_seconds = meta.at("seconds").get<double>();
    c.from_cache = true;
    if (c.ok) {
      const std::string cubin = read_file(std::filesystem::path(folder_) / (key + ".cubin"));
      if (cubin.empty()) return std::nullopt;
      c.cubin.assign(cubin.begin(), cubin.end());
    }
    // Recently used: eviction goes by this time, so entries in use stay.
    std::filesystem::last_write_time(meta_path, std::filesystem::file_time_type::clock::now(), ec);
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is recompiled
  }
}

void CompileCache::put(const std::string& key, const Compiled& c) const {
  if (!enabled()) return;
  const std::filesystem::path folder(folder_);
  // The cubin lands first, so a visible .json always has its cubin.
  if (c.ok) write_atomically(folder / (key + ".cubin"), c.cubin.data(), c.cubin.size());
  const std::string meta =
      nlohmann::json{{"ok", c.ok}, {"log", c.log}, {"options", c.options}, {"seconds", c.cold_seconds}}.dump();
  write_atomically(folder / (key + ".json"), meta.data(), meta.size());
}

Compiled CompileCache::compile_one(const CompileRequest& request) const {
  const std::string key = compile_key(request);
  if (auto hit = find(key)) return *hit;
  Compiled fresh = compile(request);
  put(key, fresh);
  return fresh;
}

std::vector<Compiled> CompileCache::compile_all(const std::vector<CompileRequest>& requests, int jobs,
                                                const CompileProgress& on_progress) const {
  // Each missing compile key once: configs that differ only on plan-only axes share their cubin.
  std::vector<std::size_t> missing;
  std::unordered_set<std::string> queued;
  for (std::size_t i = 0; i < requests.size(); ++i)
    if (std::string key = compile_key(requests[i]); !find(key) && queued.insert(std::move(key)).second)
      missing.push_back(i);
  const auto report = [&](std::size_t done) {
    if (on_progress) on_progress(done, missing.size());
  };

  std::size_t done = 0;
  if (enabled() && jobs > 1 && missing.size() > 1) {
    // Each child compiles every jobs-th missing request into the cache and exits; the parent
    // then reads everything back from the cache. Children touch neither CUDA nor the database.
    // Each child writes a byte to `finished` per compile, so that the parent can show progress;
    // the pipe reaches end of file when the last child is gone.
    int finished[2];
    if (pipe2(finished, O_CLOEXEC) != 0)
      throw Error(std::string("cannot create a pipe for the compile processes: ") + std::strerror(errno));
    std::vector<pid_t> children;
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(jobs), missing.size());
    for (std::size_t w = 0; w < workers; ++w) {
      const pid_t pid = fork();
      if (pid == 0) {
        close(finished[0]);
        for (std::size_t i = w; i < missing.size(); i += workers) {
          const auto& request = requests[missing[i]];
          put(compile_key(request), compile(request));
          const char one = 1;
          (void)!write(finished[1], &one, 1);
        }
        _exit(0);
      }
      if (pid > 0) children.push_back(pid);
    }
    close(finished[1]);
    char bytes[64];
    for (ssize_t got; (got = read(finished[0], bytes, sizeof bytes)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      done += static_cast<std::size_t>(got);
      report(done);
    }
    close(finished[0]);
    for (pid_t child : children) waitpid(child, nullptr, 0);
  }

  // Everything is in the cache now, unless the cache is off or there was one job: then the
  // missing requests compile here, one by one.
  std::vector<bool> compiles_here(requests.size(), false);
  if (done == 0)
    for (std::size_t i : missing) compiles_here[i] = true;
  std::vector<Compiled> results;
  results.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    results.push_back(compile_one(requests[i]));
    if (compiles_here[i]) report(++done);
  }
  return results;
}

}  // namespace cutune
