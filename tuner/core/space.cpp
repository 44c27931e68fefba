#include "space.hpp"

#include <nlohmann/json.hpp>

#include "error.hpp"

namespace cutune {

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

Space& Space::require(std::string description, std::function<bool(const ConfigView&)> allows) {
  constraints_.push_back({std::move(description), std::move(allows)});
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
  if (config.values.size() != axes_.size()) return "config has " + std::to_string(config.values.size()) + " values for " + std::to_string(axes_.size()) + " axes";
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (!axes_[i].index_of(config.values[i])) return axes_[i].name + " = " + std::to_string(config.values[i]) + " is not one of its values";
  const ConfigView view(*this, config);
  for (const auto& c : constraints_)
    if (!c.allows(view)) return c.description;
  return std::nullopt;
}

std::vector<Config> Space::enumerate() const {
  std::vector<Config> valid_configs;
  std::vector<std::size_t> digits(axes_.size(), 0);
  Config config{std::vector<std::int64_t>(axes_.size())};
  while (true) {
    for (std::size_t i = 0; i < axes_.size(); ++i) config.values[i] = axes_[i].values[digits[i]];
    if (valid(config)) valid_configs.push_back(config);
    // Odometer increment, last axis fastest.
    std::size_t axis = axes_.size();
    while (axis > 0) {
      --axis;
      if (++digits[axis] < axes_[axis].values.size()) break;
      digits[axis] = 0;
      if (axis == 0) return valid_configs;
    }
    if (axes_.empty()) return valid_configs;
  }
}

std::string Space::key(const Config& config) const {
  std::string text;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (i) text += ',';
    text += axes_[i].name + '=' + axes_[i].text_of(config.values.at(i));
  }
  return text;
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
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t end = std::min(key.find(',', start), key.size());
    const std::string item = key.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw UsageError("config item '" + item + "' is not name=value");
    const std::string name = item.substr(0, eq), text = item.substr(eq + 1);
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
    start = end + 1;
  }
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (!seen[i]) throw UsageError("config '" + key + "' lacks parameter '" + axes_[i].name + "'");
  return config;
}

}  // namespace cutune
