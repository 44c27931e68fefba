#include "strategy_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.hpp"

namespace cutune {

std::pair<std::string, std::string> parse_strategy_option(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--strategy-option '" + text + "': expected name=value, e.g. initial=10");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

const std::string* OptionReader::given(const std::string& name) {
  read_.push_back(name);
  const auto it = given_.find(name);
  return it == given_.end() ? nullptr : &it->second;
}

std::size_t OptionReader::count(const std::string& name, std::size_t fallback, std::size_t min, std::size_t max,
                                const std::string& help) {
  declared_.push_back({name, std::to_string(fallback), fmt::format("{} … {}", min, max), help});
  const std::string* text = given(name);
  if (!text) return fallback;
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || value < min || value > max)
    throw UsageError(fmt::format("--strategy-option {}={}: {} takes a whole number from {} to {}", name, *text,
                                 strategy_, min, max));
  return value;
}

double OptionReader::real(const std::string& name, double fallback, double min, double max, const std::string& help) {
  declared_.push_back({name, fmt::format("{}", fallback), fmt::format("{} … {}", min, max), help});
  const std::string* text = given(name);
  if (!text) return fallback;
  double value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || !std::isfinite(value) || value < min || value > max)
    throw UsageError(
        fmt::format("--strategy-option {}={}: {} takes a number from {} to {}", name, *text, strategy_, min, max));
  return value;
}

std::string OptionReader::choice(const std::string& name, const std::string& fallback,
                                 const std::vector<std::string>& choices, const std::string& help) {
  declared_.push_back({name, fallback, fmt::format("{}", fmt::join(choices, " | ")), help});
  const std::string* text = given(name);
  if (!text) return fallback;
  if (std::find(choices.begin(), choices.end(), *text) == choices.end())
    throw UsageError(
        fmt::format("--strategy-option {}={}: {} takes one of {}", name, *text, strategy_, fmt::join(choices, ", ")));
  return *text;
}

void OptionReader::finish() const {
  for (const auto& [name, value] : given_) {
    if (std::find(read_.begin(), read_.end(), name) != read_.end()) continue;
    std::vector<std::string> known;
    for (const auto& d : declared_) known.push_back(d.name);
    throw UsageError(known.empty() ? fmt::format("--strategy-option {}: {} takes no options", name, strategy_)
                                   : fmt::format("--strategy-option {}: {} has no such option (known: {})", name,
                                                 strategy_, fmt::join(known, ", ")));
  }
}

}  // namespace cutune
