#pragma once
// A tuning space: named axes of integer values (an axis may give its values names, such as the
// algorithm variant), constraints over them, and the canonical text form of a configuration
// that the database stores.
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace cutune {

struct Axis {
  std::string name;
  std::vector<std::int64_t> values;
  std::vector<std::string> labels;  // empty, or one name per value ("blelloch", "warp", …)
  std::string help;
  // Shapes only the family's launch plan (how the host runs the kernels), not the kernels: it is
  // not passed to the compiler, so configs that differ only in such axes share one cubin.
  bool plan_only = false;

  std::string text_of(std::int64_t value) const;  // the label if any, else the number
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

struct ConfigHash {
  std::size_t operator()(const Config& config) const noexcept;
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
  // The axes it reads, ascending; empty when unknown (then it waits until every axis is bound).
  // Enumeration and sampling check a constraint as soon as its last axis has a value.
  std::vector<std::size_t> axes;
};

class Space {
 public:
  // Fluent builder, in the spirit of nvbench's axes: space.axis("block", {128, 256}).require(…)
  Space& axis(std::string name, std::vector<std::int64_t> values, std::string help = {});
  Space& labelled_axis(std::string name, std::vector<std::string> labels, std::string help = {});
  // Marks the last axis declared as plan-only (see Axis::plan_only).
  Space& plan_only();
  Space& require(std::string description, std::function<bool(const ConfigView&)> allows);
  // A constraint written as an integer expression over the axes declared so far (see
  // core/expression.hpp), e.g. "block * ept * vec <= 8192". Labelled axes read as their value
  // numbers, and a label names its number ("algo == regtile"). Throws UsageError naming the
  // problem and its column.
  Space& require(std::string expression);
  // The same, where names that are neither axes nor labels may be constants (a spec's device
  // limits: "block <= max_threads_per_block").
  Space& require(std::string expression, const std::function<std::optional<std::int64_t>(std::string_view)>& constants);

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  std::size_t axis_index(const std::string& name) const;  // throws Error for an unknown name
  double raw_size() const;                                // product of axis sizes (a double: it can exceed 2^64)

  // The first constraint the config breaks, or nullopt when it is valid.
  std::optional<std::string> violation(const Config& config) const;
  bool valid(const Config& config) const { return !violation(config); }

  // Every valid config, in lexicographic axis order. Backtracking: a constraint is checked once
  // its last axis is bound, so a rejected prefix prunes its subtree and a product of millions of
  // raw combinations costs about as much as its valid configs.
  std::vector<Config> enumerate() const;
  void for_each_valid(const std::function<void(const Config&)>& visit) const;

  // A valid config drawn uniformly (rejection sampling, pruned early like enumerate) without
  // listing the space; in a space where valid configs are too rare for that, a randomised
  // depth-first search, which finds one whenever one exists but is not uniform. nullopt: the
  // space is empty. *rare, when given, says whether it came to the depth-first search: then every
  // draw costs the 10 000 failed attempts first, and listing the space once is the cheaper way.
  std::optional<Config> sample(std::mt19937_64& rng, bool* rare = nullptr) const;

  // Canonical "algo=warp,block=256,…" (axis order) and its JSON object form.
  std::string key(const Config& config) const;
  std::string json(const Config& config) const;
  // Parses a canonical key (any order, labels or numbers); throws UsageError naming the problem.
  Config parse(const std::string& key) const;

 private:
  // Constraint indices grouped by the axis after which they can be checked.
  std::vector<std::vector<std::size_t>> checks_by_axis() const;
  bool passes(const std::vector<std::size_t>& checks, const Config& partial) const;
  std::optional<Config> depth_first_sample(std::mt19937_64& rng) const;

  std::vector<Axis> axes_;
  std::vector<Constraint> constraints_;
};

// Valid configs among which every value that some valid config takes on an axis occurs, and every
// pair of values on two axes that some valid config takes together: a few dozen configs that
// reach every branch a template takes on its axes and their interactions two by two, where
// compiling the whole space is a nightly job. Greedy: each pick covers the most values and pairs
// not covered yet, ties broken by a shuffle drawn from `seed`, so a seed always gives one sample.
// `valid` is space.enumerate(), which the caller usually has already.
std::vector<Config> covering_sample(const Space& space, std::vector<Config> valid, std::uint64_t seed);

}  // namespace cutune
