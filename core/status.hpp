#pragma once
// How an evaluation ended, and the one table of its names: what results.status stores, what the
// GPU worker sends back, and what imports accept. Header-only, so the store and the lookup library
// share it without the engine.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cutune {

enum class Status { ok, compile_error, load_error, launch_error, runtime_fault, timeout, wrong_result };

inline constexpr std::array<std::pair<Status, std::string_view>, 7> kStatusNames{{
    {Status::ok, "ok"},
    {Status::compile_error, "compile_error"},
    {Status::load_error, "load_error"},
    {Status::launch_error, "launch_error"},
    {Status::runtime_fault, "runtime_fault"},
    {Status::timeout, "timeout"},
    {Status::wrong_result, "wrong_result"},
}};

inline std::string to_string(Status status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return std::string(name);
  return "unknown";
}

// nullopt for a name no status has.
inline std::optional<Status> status_named(std::string_view name) {
  for (const auto& [s, known] : kStatusNames)
    if (known == name) return s;
  return std::nullopt;
}

}  // namespace cutune
