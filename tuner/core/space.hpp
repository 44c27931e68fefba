#pragma once
// A tuning space: named axes of integer values (an axis may give its values names, such as the
// algorithm variant), constraints over them, and the canonical text form of a configuration
// that the database stores.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cutune {

struct Axis {
  std::string name;
  std::vector<std::int64_t> values;
  std::vector<std::string> labels;  // empty, or one name per value ("blelloch", "warp", …)
  std::string help;

  std::string text_of(std::int64_t value) const;              // the label if any, else the number
  std::optional<std::int64_t> value_of(const std::string& text) const;
  std::optional<std::size_t> index_of(std::int64_t value) const;
};

class Space;

// A configuration: one value per axis, in axis order.
struct Config {
  std::vector<std::int64_t> values;
  bool operator==(const Config&) const = default;
  auto operator<=>(const Config&) const = default;
};

// Read access by parameter name, for constraints and families.
class ConfigView {
 public:
  ConfigView(const Space& space, const Config& config) : space_(space), config_(config) {}
  ConfigView(const Space&, Config&&) = delete;  // would dangle: a view must not outlive its config
  std::int64_t operator[](const std::string& name) const;
  const Config& config() const { return config_; }

 private:
  const Space& space_;
  const Config& config_;
};

struct Constraint {
  std::string description;  // shown when a user-named config is rejected, e.g. "ept % vec == 0"
  std::function<bool(const ConfigView&)> allows;
};

class Space {
 public:
  // Fluent builder, in the spirit of nvbench's axes: space.axis("block", {128, 256}).require(…)
  Space& axis(std::string name, std::vector<std::int64_t> values, std::string help = {});
  Space& labelled_axis(std::string name, std::vector<std::string> labels, std::string help = {});
  Space& require(std::string description, std::function<bool(const ConfigView&)> allows);

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  std::size_t axis_index(const std::string& name) const;  // throws Error for an unknown name
  double raw_size() const;  // product of axis sizes (a double: it can exceed 2^64)

  // The first constraint the config breaks, or nullopt when it is valid.
  std::optional<std::string> violation(const Config& config) const;
  bool valid(const Config& config) const { return !violation(config); }

  // Every valid config, in lexicographic axis order.
  std::vector<Config> enumerate() const;

  // Canonical "algo=warp,block=256,…" (axis order) and its JSON object form.
  std::string key(const Config& config) const;
  std::string json(const Config& config) const;
  // Parses a canonical key (any order, labels or numbers); throws UsageError naming the problem.
  Config parse(const std::string& key) const;

 private:
  std::vector<Axis> axes_;
  std::vector<Constraint> constraints_;
};

}  // namespace cutune
