#include "landscape.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "field_text.hpp"
#include "interchange_kernel_tuner.hpp"

namespace cutune {
namespace {

std::optional<std::int64_t> integer_of(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// gzread reads plain files as they are, so one reader serves .json and .json.gz.
std::string read_maybe_gzipped(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw UsageError("cannot read '" + path + "': no such file");
  std::unique_ptr<gzFile_s, decltype(&gzclose)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file) throw UsageError("cannot open '" + path + "'");
  std::string text;
  char buffer[1 << 16];
  int got = 0;
  while ((got = gzread(file.get(), buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(got));
  if (got < 0) {
    int code = 0;
    throw UsageError("cannot read '" + path + "': " + gzerror(file.get(), &code));
  }
  return text;
}

// The text a Kernel Tuner parameter value gets on our axis: strings as they are, numbers and
// booleans in JSON form.
std::string text_of(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

const RecordedEvaluation& Landscape::at(const Config& config) const {
  const auto it = index_->find(config);
  if (it == index_->end()) throw Error("config " + space_.key(config) + " is not recorded in landscape " + name_);
  return (*records_)[it->second];
}

void LandscapeBuilder::axis(std::string name, std::vector<std::string> value_texts) {
  const bool numeric =
      std::all_of(value_texts.begin(), value_texts.end(), [](const std::string& t) { return integer_of(t); });
  if (numeric) {
    std::vector<std::int64_t> values;
    for (const auto& t : value_texts) values.push_back(*integer_of(t));
    space_.axis(std::move(name), std::move(values));
  } else {
    space_.labelled_axis(std::move(name), value_texts);
  }
  texts_.push_back(std::move(value_texts));
}

void LandscapeBuilder::record(const std::vector<std::string>& value_texts, RecordedEvaluation evaluation) {
  const auto& axes = space_.axes();
  if (value_texts.size() != axes.size())
    throw UsageError(name_ + ": '" + shortened(evaluation.key, 40) + "' has " + std::to_string(value_texts.size()) +
                     " values for " + std::to_string(axes.size()) + " parameters");
  Config config{std::vector<std::int64_t>(axes.size())};
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const auto& texts = texts_[a];
    const auto at = std::find(texts.begin(), texts.end(), value_texts[a]);
    if (at == texts.end())
      throw UsageError(name_ + ": '" + shortened(evaluation.key, 40) + "' has " + shortened(axes[a].name, 40) + " = " +
                       shortened(value_texts[a], 40) + ", not one of its values");
    config.values[a] = axes[a].values[static_cast<std::size_t>(at - texts.begin())];
  }
  if (!index_.emplace(config, records_.size()).second)
    throw UsageError(name_ + ": '" + shortened(evaluation.key, 40) + "' is recorded twice");
  records_.push_back(std::move(evaluation));
}

bool Landscape::same_space_as(const Landscape& other) const {
  if (kernel_ != other.kernel_ || space_.axes().size() != other.space_.axes().size()) return false;
  for (std::size_t a = 0; a < space_.axes().size(); ++a) {
    const Axis &mine = space_.axes()[a], &theirs = other.space_.axes()[a];
    if (mine.name != theirs.name || mine.values != theirs.values || mine.labels != theirs.labels) return false;
  }
  return true;
}

WarmStartSource Landscape::as_warm_start() const {
  std::vector<const Config*> config_of(records_->size(), nullptr);
  for (const auto& [config, i] : *index_) config_of[i] = &config;
  WarmStartSource source{name_, {}};
  for (std::size_t i = 0; i < config_of.size(); ++i)
    source.results.push_back({*config_of[i], (*records_)[i].objective, (*records_)[i].cost_seconds});
  return source;
}

Landscape LandscapeBuilder::build() && {
  if (records_.empty()) throw UsageError(name_ + ": no recorded configs");
  Landscape landscape;
  landscape.name_ = name_;
  landscape.kernel_ = kernel_;
  landscape.index_ = std::make_shared<const Landscape::Index>(std::move(index_));
  landscape.records_ = std::make_shared<const std::vector<RecordedEvaluation>>(std::move(records_));
  space_.require("recorded in " + name_,
                 [index = landscape.index_](const ConfigView& c) { return index->count(c.config()) != 0; });
  landscape.space_ = std::move(space_);
  return landscape;
}

Landscape read_kernel_tuner_cache(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* suffix : {".gz", ".json"})
    if (name.size() > std::string(suffix).size() && name.ends_with(suffix))
      name.resize(name.size() - std::string(suffix).size());
  // What such a file must hold is decided in one place, for tune db import-kt too.
  try {
    const auto file = db::interchange::parse_json(read_maybe_gzipped(path), path);
    const auto cache = db::kernel_tuner::read_cache_file(file, path);
    std::vector<std::vector<db::interchange::Json>> values;
    try {
      values = db::kernel_tuner::parameter_values(file, cache.parameters);
    } catch (const db::InterchangeError& e) {
      throw db::InterchangeError(db::interchange::in_quotes(path, 120) +
                                 " is not a Kernel Tuner cache file: " + e.what());
    }
    LandscapeBuilder builder(name, cache.kernel_name.value_or(""));
    for (std::size_t p = 0; p < cache.parameters.size(); ++p) {
      std::vector<std::string> texts;
      for (const auto& v : values[p]) texts.push_back(text_of(v));
      builder.axis(cache.parameters[p], std::move(texts));
    }
    for (const auto& entry : cache.entries) {
      std::vector<std::string> texts;
      for (const auto& v : entry.values) texts.push_back(text_of(v));
      const double cost_ms = entry.compile_ms + entry.verification_ms + entry.benchmark_ms;
      builder.record(texts, {entry.key, entry.time_ms, std::isfinite(cost_ms) ? cost_ms / 1000.0 : 0.0});
    }
    return std::move(builder).build();
  } catch (const db::InterchangeError& e) {
    throw UsageError(e.what());
  }
}

Landscape landscape_from_results(const std::string& name, const std::vector<db::ProblemResult>& results) {
  // Canonical config texts: "name=value,…" with the same names in the same order in every row.
  auto split = [&](const std::string& config) {
    try {
      return parse_named_values(config);
    } catch (const UsageError& e) {
      throw UsageError(name + ": stored config '" + shortened(config, 60) + "': " + e.what());
    }
  };
  if (results.empty()) throw UsageError(name + ": no results stored");
  const auto first = split(results.front().config);
  std::vector<std::vector<std::string>> texts(first.size());
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    const auto items = split(r.config);
    if (items.size() != first.size()) throw UsageError(name + ": stored configs name different parameters");
    std::vector<std::string> row;
    for (std::size_t a = 0; a < items.size(); ++a) {
      if (items[a].name != first[a].name) throw UsageError(name + ": stored configs name different parameters");
      if (std::find(texts[a].begin(), texts[a].end(), items[a].value) == texts[a].end())
        texts[a].push_back(items[a].value);
      row.push_back(items[a].value);
    }
    rows.push_back(std::move(row));
  }
  LandscapeBuilder builder(name);
  for (std::size_t a = 0; a < first.size(); ++a) {
    auto& t = texts[a];
    // Numbers in numeric order (neighbours are then adjacent sizes), labels alphabetically.
    const bool numeric = std::all_of(t.begin(), t.end(), [](const std::string& x) { return integer_of(x); });
    std::sort(t.begin(), t.end(), [&](const std::string& x, const std::string& y) {
      return numeric ? *integer_of(x) < *integer_of(y) : x < y;
    });
    builder.axis(first[a].name, t);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::optional<double> objective;
    if (r.status == "ok") objective = r.time_ms_median;
    builder.record(rows[i], {r.config, objective, r.compile_s + r.verify_s + r.benchmark_s});
  }
  return std::move(builder).build();
}

}  // namespace cutune
