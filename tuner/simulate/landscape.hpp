#pragma once
// A recorded tuning landscape: every config of a space that was measured, with its objective
// and what measuring it cost. The search strategies replay against it on the CPU. It comes from
// a Kernel Tuner cache file or from our own results database; both become the same Space of
// integer axes (string and fractional values become labelled positions) in which exactly the
// recorded configs are valid.
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/space.hpp"
#include "strategies/strategy.hpp"
#include "store.hpp"

namespace cutune {

struct RecordedEvaluation {
  std::string key;                  // as the source writes it: "0,32,1,0", or "algo=warp,block=256,…"
  std::optional<double> objective;  // ms; nullopt for a config that failed
  double cost_seconds = 0;          // compile + verification + benchmark
};

class Landscape {
 public:
  const std::string& name() const { return name_; }
  // The kernel measured, where the source names it (a Kernel Tuner file's kernel_name); else empty.
  const std::string& kernel() const { return kernel_; }
  const Space& space() const { return space_; }
  const std::vector<RecordedEvaluation>& records() const { return *records_; }
  // The record of a valid config of space(); throws Error for any other.
  const RecordedEvaluation& at(const Config& config) const;
  // Whether `other` measured the same kernel over the same axes and values, so that its configs
  // are configs of this space (and can warm-start a search of it).
  bool same_space_as(const Landscape& other) const;
  // Every recorded config and its objective, in record order: a warm start for a search of a
  // landscape with the same space.
  WarmStartSource as_warm_start() const;

 private:
  friend class LandscapeBuilder;
  using Index = std::unordered_map<Config, std::size_t, ConfigHash>;
  std::string name_, kernel_;
  Space space_;
  // Shared with the space's "is recorded" constraint, which must outlive moves of the Landscape.
  std::shared_ptr<const Index> index_;
  std::shared_ptr<const std::vector<RecordedEvaluation>> records_;
};

// Collects axes and records from a source, then builds the Landscape.
class LandscapeBuilder {
 public:
  explicit LandscapeBuilder(std::string name, std::string kernel = {})
      : name_(std::move(name)), kernel_(std::move(kernel)) {}
  // An axis and the texts of its values, in order. It is numeric when every text is an integer,
  // else labelled with the texts.
  void axis(std::string name, std::vector<std::string> value_texts);
  // A record and the text of its value on each axis; throws UsageError for a text that is not
  // one of its axis's values, or a config recorded twice.
  void record(const std::vector<std::string>& value_texts, RecordedEvaluation evaluation);
  Landscape build() &&;

 private:
  std::string name_, kernel_;
  Space space_;
  std::vector<std::vector<std::string>> texts_;  // per axis
  Landscape::Index index_;
  std::vector<RecordedEvaluation> records_;
};

// A Kernel Tuner cache file (.json, or gzipped .json.gz), named after the file. Throws
// UsageError naming the file for a missing, unreadable or malformed one.
Landscape read_kernel_tuner_cache(const std::string& path);

// Results of our database for one (device, family, problem) (db::Store::problem_results):
// status "ok" succeeded, any other status failed; the axes come from the config texts.
Landscape landscape_from_results(const std::string& name, const std::vector<db::ProblemResult>& results);

}  // namespace cutune
