#include "family.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "templates.hpp"
#include "verify.hpp"

namespace cutune {

const std::vector<std::byte>& HostBuffers::at(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw Error("no host buffer named '" + name + "'");
  return it->second;
}

void Family::check_problem(const Problem&) const {}

Problem Family::make(const std::vector<std::pair<std::string, FieldValue>>& values) const {
  Problem problem = problem_schema().make(values);
  check_problem(problem);
  return problem;
}

Problem Family::parse_problem(std::string_view text) const {
  Problem problem;
  try {
    problem = problem_schema().parse(text);
  } catch (const UsageError& e) {
    throw UsageError(name() + " problem '" + std::string(text) + "': " + e.what());
  }
  check_problem(problem);  // its messages name the problem themselves
  return problem;
}

Problem Family::problem_from_descriptor(const nlohmann::json& descriptor) const {
  Problem problem = problem_schema().from_descriptor(descriptor);
  check_problem(problem);
  return problem;
}

std::vector<std::string> Family::axis_definitions(const Space& space, const Config& config) const {
  return config_definitions(space, config);
}

std::vector<BufferSpec> Family::scratch(const Problem&, const ConfigView&) const { return {}; }

std::string Family::source() const {
  std::string text;
  for (const std::string& header : template_headers()) {
    text += template_source(header);
    text += '\n';
  }
  if (!text.empty()) text += "#line 1 \"" + template_file() + "\"\n";
  return text + std::string(template_source(template_file()));
}

std::vector<std::string> config_definitions(const Space& space, const Config& config) {
  std::vector<std::string> definitions;
  for (std::size_t i = 0; i < space.axes().size(); ++i) {
    if (space.axes()[i].plan_only) continue;  // the kernels never see it
    std::string name = space.axes()[i].name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    definitions.push_back("-DCUTUNE_" + name + "=" + std::to_string(config.values.at(i)));
  }
  return definitions;
}

std::unique_ptr<Family> make_scan_family();
std::unique_ptr<Family> make_reduce_family();
std::unique_ptr<Family> make_copy_family();
std::unique_ptr<Family> make_resample_family();
std::unique_ptr<Family> make_powersum_family();
std::unique_ptr<Family> make_avgmatvec_family();
std::unique_ptr<Family> make_matmul_family();

const std::vector<std::unique_ptr<Family>>& families() {
  static const std::vector<std::unique_ptr<Family>> all = [] {
    std::vector<std::unique_ptr<Family>> list;
    list.push_back(make_scan_family());
    list.push_back(make_reduce_family());
    list.push_back(make_resample_family());
    list.push_back(make_copy_family());
    list.push_back(make_powersum_family());
    list.push_back(make_avgmatvec_family());
    list.push_back(make_matmul_family());
    return list;
  }();
  return all;
}

const Family& family_named(const std::string& name) {
  std::string known;
  for (const auto& f : families()) {
    if (f->name() == name) return *f;
    known += (known.empty() ? "" : ", ") + f->name();
  }
  throw UsageError("unknown kernel '" + name + "' (known: " + known + ")");
}

nlohmann::json stored_step(const MemsetStep& step) {
  return {{"memset", step.buffer},
          {"word", step.word},
          {"bytes", step.bytes},
          {"byte_offset", step.byte_offset},
          {"stream_write", step.stream_write}};
}

namespace {

template <class T>
bool breaks_rule(T e, T a, const OutputRule& rule) {
  if (rule.exact) return !(a == e);
  const double de = static_cast<double>(e), da = static_cast<double>(a);
  return !(std::fabs(da - de) <= rule.rtol * std::fabs(de) + rule.atol);
}

template <class F>
void dispatch_rule_type(const std::string& type, F&& f) {
  if (type == "int32")
    f(std::int32_t{});
  else if (type == "uint32")
    f(std::uint32_t{});
  else if (type == "int64")
    f(std::int64_t{});
  else if (type == "uint64")
    f(std::uint64_t{});
  else if (type == "float32")
    f(float{});
  else if (type == "float64")
    f(double{});
  else
    throw Error("output rule of unknown element type " + type);
}

}  // namespace

OutputCheck check_outputs(const std::vector<OutputRule>& rules, const HostBuffers& expected,
                          const HostBuffers& actual) {
  bool identical = true;
  std::optional<RuleBreak> first_break;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    const OutputRule& rule = rules[r];
    const auto& e = expected.at(rule.buffer);
    const auto& a = actual.at(rule.buffer);
    identical = identical && e.size() == a.size() && std::memcmp(e.data(), a.data(), e.size()) == 0;
    if (!rule.checked || first_break) continue;
    dispatch_rule_type(rule.element_type, [&](auto zero) {
      using T = decltype(zero);
      const auto want = expected.as<T>(rule.buffer);
      const auto got = actual.as<T>(rule.buffer);
      const std::size_t n = std::min(want.size(), got.size());
      std::size_t i = 0;
      while (i < n && !breaks_rule(want[i], got[i], rule)) ++i;
      if (i == n && want.size() == got.size()) return;
      RuleBreak b{r, static_cast<std::int64_t>(i)};
      if (i < want.size()) std::memcpy(b.expected.data(), &want[i], sizeof(T));
      if (i < got.size()) std::memcpy(b.actual.data(), &got[i], sizeof(T));
      first_break = b;
    });
  }
  if (identical || !first_break) return {};
  return {false, first_break};
}

Verdict verdict_of(const std::vector<OutputRule>& rules, const OutputCheck& check) {
  if (check.pass) return {};
  if (!check.first_break) return {false, "the outputs differ from the expected ones", std::nullopt};
  const RuleBreak& b = *check.first_break;
  const OutputRule& rule = rules.at(b.rule);
  std::string message;
  dispatch_rule_type(rule.element_type, [&](auto zero) {
    using T = decltype(zero);
    T e, a;
    std::memcpy(&e, b.expected.data(), sizeof(T));
    std::memcpy(&a, b.actual.data(), sizeof(T));
    if (rule.exact)
      message = fmt::format("{}[{}]: expected {}, got {}", rule.buffer, b.index, e, a);
    else
      message = fmt::format("{}[{}]: expected {}, got {} (rtol {}, atol {})", rule.buffer, b.index,
                            static_cast<double>(e), static_cast<double>(a), rule.rtol, rule.atol);
  });
  return {false, message, b.index};
}

}  // namespace cutune
