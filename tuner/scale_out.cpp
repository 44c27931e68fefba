#include "scale_out.hpp"

#include <charconv>

#include "core/error.hpp"

namespace cutune {
namespace {

std::optional<long> whole_number(const std::string& text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<int> parse_devices(const std::string& text, int device_count) {
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < device_count; ++d) devices.push_back(d);
    if (devices.empty()) throw UsageError("--devices all: this machine has no CUDA device");
    return devices;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const auto number = whole_number(item);
    if (!number || *number < 0)
      throw UsageError("--devices: '" + item + "' is not a device ordinal (give e.g. 0,2,3 or all)");
    if (*number >= device_count)
      throw UsageError("--devices: no CUDA device " + item + " (this machine has " + std::to_string(device_count) +
                       ")");
    devices.push_back(static_cast<int>(*number));
    start = comma + 1;
  }
  return devices;
}

Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& getenv) {
  Shard shard;
  if (text == "auto") {
    const auto read = [&](const char* rank, const char* size) -> std::optional<Shard> {
      const char* r = getenv(rank);
      const char* s = getenv(size);
      if (!r || !s) return std::nullopt;
      const auto index = whole_number(r), count = whole_number(s);
      if (!index || !count)
        throw UsageError(std::string("--shard auto: ") + rank + "=" + r + " and " + size + "=" + s +
                         " are not a rank and a size");
      return Shard{static_cast<int>(*index), static_cast<int>(*count)};
    };
    // MPI launchers first (only they set theirs), then a job array (its batch script also has
    // SLURM_PROCID=0 of 1 task), then srun's tasks.
    std::optional<Shard> found = read("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");
    if (!found) found = read("PMI_RANK", "PMI_SIZE");
    if (!found) {
      if (auto array = read("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT")) {
        const char* minimum = getenv("SLURM_ARRAY_TASK_MIN");
        const auto first = minimum ? whole_number(minimum) : std::optional<long>(0);
        if (!first) throw UsageError(std::string("--shard auto: SLURM_ARRAY_TASK_MIN=") + minimum + " is not a number");
        array->index -= static_cast<int>(*first);
        found = array;
      }
    }
    if (!found) found = read("SLURM_PROCID", "SLURM_NTASKS");
    if (!found)
      throw UsageError(
          "--shard auto: no launcher's rank in the environment (Open MPI, PMI, srun or a Slurm job array)");
    shard = *found;
  } else {
    const std::size_t slash = text.find('/');
    const auto index = slash == std::string::npos ? std::nullopt : whole_number(text.substr(0, slash));
    const auto count = slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
    if (!index || !count) throw UsageError("--shard: '" + text + "' is not I/K (e.g. 0/4) or auto");
    shard = {static_cast<int>(*index), static_cast<int>(*count)};
  }
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count)
    throw UsageError("--shard: shard " + std::to_string(shard.index) + " of " + std::to_string(shard.count) +
                     " does not exist (0 <= I < K)");
  return shard;
}

std::vector<std::size_t> shard_problems(std::size_t problems, const Shard& shard) {
  std::vector<std::size_t> mine;
  for (std::size_t p = static_cast<std::size_t>(shard.index); p < problems; p += static_cast<std::size_t>(shard.count))
    mine.push_back(p);
  return mine;
}

std::string shard_database_path(const std::string& path, const Shard& shard) {
  std::string result = path;
  for (std::size_t at = result.find("{shard}"); at != std::string::npos; at = result.find("{shard}", at))
    result.replace(at, 7, std::to_string(shard.index));
  return result;
}

}  // namespace cutune
