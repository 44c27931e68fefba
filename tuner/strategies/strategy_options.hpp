#pragma once
// Strategy options (`tune --strategy-option name=value`): each strategy declares its options
// where it reads them, through an OptionReader, so the name, default, range and help of an
// option live in one place, and the same declarations validate user input and list the options.
#include <map>
#include <string>
#include <vector>

namespace cutune {

// Values as the user wrote them, by option name.
using StrategyOptionValues = std::map<std::string, std::string>;

// "name=value" → {name, value}; throws UsageError for text without '=' or with an empty side.
std::pair<std::string, std::string> parse_strategy_option(const std::string& text);

struct StrategyOptionInfo {
  std::string name;
  std::string default_text;
  std::string allowed;  // "1 … 1000", "0 … 1", "adjacent | hamming"
  std::string help;
};

class OptionReader {
 public:
  OptionReader(std::string strategy, StrategyOptionValues given)
      : strategy_(std::move(strategy)), given_(std::move(given)) {}
  // Each returns the given value or the default; throws UsageError naming the strategy, the
  // option and what is allowed for a value that does not parse or lies out of range.
  std::size_t count(const std::string& name, std::size_t fallback, std::size_t min, std::size_t max,
                    const std::string& help);
  double real(const std::string& name, double fallback, double min, double max, const std::string& help);
  std::string choice(const std::string& name, const std::string& fallback, const std::vector<std::string>& choices,
                     const std::string& help);
  // Throws UsageError for a given option that no read asked for (listing the known ones).
  void finish() const;
  const std::vector<StrategyOptionInfo>& declared() const { return declared_; }

 private:
  const std::string* given(const std::string& name);
  std::string strategy_;
  StrategyOptionValues given_;
  std::vector<std::string> read_;
  std::vector<StrategyOptionInfo> declared_;
};

}  // namespace cutune
