#include "space.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <unordered_set>

#include "error.hpp"
#include "expression.hpp"
#include "field_text.hpp"

namespace cutune {

std::size_t ConfigHash::operator()(const Config& config) const noexcept {
  std::size_t hash = 0xcbf29ce484222325ULL;
  for (std::int64_t v : config.values) hash = (hash ^ static_cast<std::size_t>(v)) * 0x100000001b3ULL + (hash >> 29);
  return hash;
}

std::string Axis::text_of(std::int64_t value) const {
  if (!labels.empty())
    if (auto i = index_of(value)) return labels[*i];
  return std::to_string(value);
}

std::optional<std::int64_t> Axis::value_of(const std::string& text) const {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == text) return values[i];
  try {
    std::size_t used = 0;
    const std::int64_t number = std::stoll(text, &used);
    if (used == text.size() && index_of(number)) return number;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<std::size_t> Axis::index_of(std::int64_t value) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == value) return i;
  return std::nullopt;
}

std::int64_t ConfigView::operator[](const std::string& name) const {
  return config_.values.at(space_.axis_index(name));
}

Space& Space::axis(std::string name, std::vector<std::int64_t> values, std::string help) {
  if (values.empty()) throw Error("axis '" + name + "' has no values");
  axes_.push_back({std::move(name), std::move(values), {}, std::move(help)});
  return *this;
}

Space& Space::labelled_axis(std::string name, std::vector<std::string> labels, std::string help) {
  std::vector<std::int64_t> values(labels.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i);
  axis(std::move(name), std::move(values), std::move(help));
  axes_.back().labels = std::move(labels);
  return *this;
}

Space& Space::plan_only() {
  if (axes_.empty()) throw Error("plan_only() before any axis");
  axes_.back().plan_only = true;
  return *this;
}

Space& Space::require(std::string description, std::function<bool(const ConfigView&)> allows) {
  constraints_.push_back({std::move(description), std::move(allows), {}});
  return *this;
}

Space& Space::require(std::string expression) {
  return require(std::move(expression), std::function<std::optional<std::int64_t>(std::string_view)>());
}

Space& Space::require(std::string expression,
                      const std::function<std::optional<std::int64_t>(std::string_view)>& constants) {
  // Names resolve to axis positions now, so checking a config costs no name lookups.
  const auto axis_slot = [this](std::string_view name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i].name == name) return i;
    return std::nullopt;
  };
  // A label stands for its value number ("algo == regtile"), unless two axes give it different ones.
  const auto label_value = [this, &constants](std::string_view name) -> std::optional<std::int64_t> {
    std::optional<std::int64_t> found;
    for (const Axis& a : axes_)
      if (const auto v = a.labels.empty() ? std::nullopt : a.value_of(std::string(name))) {
        if (found && *found != *v) return std::nullopt;
        found = v;
      }
    if (!found && constants) return constants(name);
    return found;
  };
  const Expression compiled = Expression::parse(expression, axis_slot, label_value);
  std::vector<std::size_t> axes = compiled.slots();
  constraints_.push_back({std::move(expression),
                          [compiled](const ConfigView& c) {
                            const auto value = compiled.evaluate(c.config().values);
                            return value && *value != 0;
                          },
                          std::move(axes)});
  return *this;
}

std::size_t Space::axis_index(const std::string& name) const {
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return i;
  throw Error("no parameter named '" + name + "' in this space");
}

double Space::raw_size() const {
  double size = 1;
  for (const auto& a : axes_) size *= static_cast<double>(a.values.size());
  return size;
}

std::optional<std::string> Space::violation(const Config& config) const {
  if (config.values.size() != axes_.size())
    return "config has " + std::to_string(config.values.size()) + " values for " + std::to_string(axes_.size()) +
           " axes";
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (!axes_[i].index_of(config.values[i]))
      return axes_[i].name + " = " + std::to_string(config.values[i]) + " is not one of its values";
  const ConfigView view(*this, config);
  for (const auto& c : constraints_)
    if (!c.allows(view)) return c.description;
  return std::nullopt;
}

std::vector<std::vector<std::size_t>> Space::checks_by_axis() const {
  std::vector<std::vector<std::size_t>> checks(std::max<std::size_t>(axes_.size(), 1));
  for (std::size_t i = 0; i < constraints_.size(); ++i) {
    const auto& axes = constraints_[i].axes;
    checks[axes.empty() ? checks.size() - 1 : axes.back()].push_back(i);
  }
  return checks;
}

bool Space::passes(const std::vector<std::size_t>& checks, const Config& partial) const {
  const ConfigView view(*this, partial);
  for (std::size_t i : checks)
    if (!constraints_[i].allows(view)) return false;
  return true;
}

void Space::for_each_valid(const std::function<void(const Config&)>& visit) const {
  const auto checks = checks_by_axis();
  Config config{std::vector<std::int64_t>(axes_.size())};
  if (axes_.empty()) {
    if (passes(checks[0], config)) visit(config);
    return;
  }
  // Axes before `depth` are bound and pass their checks; digit[depth] is the next value to try.
  std::vector<std::size_t> digit(axes_.size(), 0);
  std::size_t depth = 0;
  while (true) {
    if (digit[depth] == axes_[depth].values.size()) {
      if (depth == 0) return;
      digit[depth] = 0;
      ++digit[--depth];
      continue;
    }
    config.values[depth] = axes_[depth].values[digit[depth]];
    if (!passes(checks[depth], config)) {
      ++digit[depth];
    } else if (depth + 1 == axes_.size()) {
      visit(config);
      ++digit[depth];
    } else {
      ++depth;
    }
  }
}

std::vector<Config> Space::enumerate() const {
  std::vector<Config> valid_configs;
  for_each_valid([&](const Config& config) { valid_configs.push_back(config); });
  return valid_configs;
}

std::optional<Config> Space::sample(std::mt19937_64& rng, bool* rare) const {
  if (rare) *rare = false;
  if (axes_.empty()) return valid(Config{}) ? std::optional<Config>(Config{}) : std::nullopt;
  const auto checks = checks_by_axis();
  Config config{std::vector<std::int64_t>(axes_.size())};
  // Each attempt draws axis by axis and gives up at the first failed check: every valid config
  // is equally likely, and an attempt costs little when constraints bind early.
  constexpr int kAttempts = 10000;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::size_t axis = 0;
    for (; axis < axes_.size(); ++axis) {
      const auto& values = axes_[axis].values;
      config.values[axis] = values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)];
      if (!passes(checks[axis], config)) break;
    }
    if (axis == axes_.size()) return config;
  }
  if (rare) *rare = true;
  return depth_first_sample(rng);
}

std::optional<Config> Space::depth_first_sample(std::mt19937_64& rng) const {
  const auto checks = checks_by_axis();
  Config config{std::vector<std::int64_t>(axes_.size())};
  auto shuffled_positions = [&](std::size_t axis) {
    std::vector<std::size_t> order(axes_[axis].values.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    return order;
  };
  std::vector<std::vector<std::size_t>> order(axes_.size());
  std::vector<std::size_t> next(axes_.size(), 0);
  order[0] = shuffled_positions(0);
  std::size_t depth = 0;
  while (true) {
    if (next[depth] == order[depth].size()) {
      if (depth == 0) return std::nullopt;
      --depth;
      continue;
    }
    config.values[depth] = axes_[depth].values[order[depth][next[depth]++]];
    if (!passes(checks[depth], config)) continue;
    if (depth + 1 == axes_.size()) return config;
    ++depth;
    order[depth] = shuffled_positions(depth);
    next[depth] = 0;
  }
}

std::string Space::key(const Config& config) const {
  std::vector<NamedValue> items;
  for (std::size_t i = 0; i < axes_.size(); ++i)
    items.push_back({axes_[i].name, axes_[i].text_of(config.values.at(i))});
  return format_named_values(items);
}

std::string Space::json(const Config& config) const {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].labels.empty())
      object[axes_[i].name] = config.values.at(i);
    else
      object[axes_[i].name] = axes_[i].text_of(config.values.at(i));
  }
  return object.dump();
}

Config Space::parse(const std::string& key) const {
  Config config{std::vector<std::int64_t>(axes_.size())};
  std::vector<bool> seen(axes_.size(), false);
  for (const auto& [name, text] : parse_named_values(key)) {
    std::size_t axis = 0;
    try {
      axis = axis_index(name);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    const auto value = axes_[axis].value_of(text);
    if (!value) throw UsageError("'" + text + "' is not a value of parameter '" + name + "'");
    config.values[axis] = *value;
    seen[axis] = true;
  }
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (!seen[i]) throw UsageError("config '" + key + "' lacks parameter '" + axes_[i].name + "'");
  return config;
}

std::vector<Config> covering_sample(const Space& space, std::vector<Config> valid, std::uint64_t seed) {
  std::vector<Config> configs = std::move(valid);
  std::mt19937_64 rng(seed);
  std::shuffle(configs.begin(), configs.end(), rng);
  // What a config covers, as numbers: each axis value, and each pair of values on two axes
  // (axis indices and value positions packed into one word).
  const auto& axes = space.axes();
  const auto position = [&](std::size_t axis, std::int64_t value) -> std::uint64_t {
    return *axes[axis].index_of(value);
  };
  const auto covers = [&](const Config& c) {
    std::vector<std::uint64_t> items;
    for (std::size_t a = 0; a < c.values.size(); ++a) {
      const std::uint64_t pa = position(a, c.values[a]);
      items.push_back((std::uint64_t{a} << 52) | (std::uint64_t{0xFFF} << 40) | pa);
      for (std::size_t b = a + 1; b < c.values.size(); ++b)
        items.push_back((std::uint64_t{a} << 52) | (std::uint64_t{b} << 40) | (pa << 20) | position(b, c.values[b]));
    }
    return items;
  };
  std::unordered_set<std::uint64_t> uncovered;
  std::vector<std::vector<std::uint64_t>> covered_by;
  covered_by.reserve(configs.size());
  for (const Config& c : configs) {
    covered_by.push_back(covers(c));
    uncovered.insert(covered_by.back().begin(), covered_by.back().end());
  }
  std::vector<Config> sample;
  std::vector<bool> taken(configs.size(), false);
  while (!uncovered.empty()) {
    std::size_t best = 0, best_gain = 0;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (taken[i]) continue;
      std::size_t gain = 0;
      for (std::uint64_t item : covered_by[i]) gain += uncovered.count(item);
      if (gain > best_gain) {
        best = i;
        best_gain = gain;
      }
    }
    if (best_gain == 0) break;
    for (std::uint64_t item : covered_by[best]) uncovered.erase(item);
    taken[best] = true;
    sample.push_back(configs[best]);
  }
  return sample;
}

}  // namespace cutune
