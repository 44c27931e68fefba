// The run-time half of a spec family: every value the engine asks for is the spec's expression
// evaluated for a problem (and a config), with the spec's file and field in every error.
#include "spec_family.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>

#include "core/error.hpp"
#include "data.hpp"
#include "element_types.hpp"
#include "npy.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

const std::vector<std::string> kAllTypes{"int32", "uint32", "int64", "float32", "float64"};

template <class F>
void dispatch(const std::string& type, F&& f) {
  if (type == "int32")
    f(std::int32_t{});
  else if (type == "uint32")
    f(std::uint32_t{});
  else if (type == "int64")
    f(std::int64_t{});
  else if (type == "float32")
    f(float{});
  else if (type == "float64")
    f(double{});
  else
    throw Error("no element type '" + type + "'");
}

// A different stream of inputs for each buffer, the same for the same seed.
std::uint64_t buffer_seed(std::uint64_t seed, const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ULL;
  return seed ^ hash;
}

template <class T>
void fill(std::span<T> out, const SpecInit& init, std::uint64_t seed) {
  if (init.kind == "uniform" || init.kind == "sorted") {
    fill_uniform(out, init.low, init.high, seed);
    if (init.kind == "sorted") std::sort(out.begin(), out.end());
  } else if (init.kind == "integers") {
    RandomStream random(seed);
    const auto low = static_cast<std::int64_t>(std::ceil(init.low)),
               high = static_cast<std::int64_t>(std::floor(init.high));
    const auto span = static_cast<std::uint64_t>(high - low) + 1;
    for (auto& v : out) v = static_cast<T>(low + static_cast<std::int64_t>(random.next() % span));
  } else if (init.kind == "constant") {
    std::fill(out.begin(), out.end(), static_cast<T>(init.value));
  } else if (init.kind == "iota") {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<T>(init.start + init.step * static_cast<double>(i));
  } else {
    throw Error("fill: unexpected init kind " + init.kind);
  }
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// The 32-bit word cuMemsetD32 repeats to give every element of `type` the value.
std::optional<std::uint32_t> memset_word(const std::string& type, double value) {
  if (type == "float32") return std::bit_cast<std::uint32_t>(static_cast<float>(value));
  if (type == "int32") return static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
  if (type == "uint32") return static_cast<std::uint32_t>(value);
  if (value == 0) return 0u;  // 8-byte types: only zero repeats as a 32-bit word
  return std::nullopt;
}

}  // namespace

SpecFamily::SpecFamily(SpecDefinition definition) : spec_(std::move(definition)) {}

std::unique_ptr<SpecFamily> load_spec_family(const std::filesystem::path& file) {
  return std::make_unique<SpecFamily>(read_spec(file));
}

// ---- space and compile options ---------------------------------------------------------------------

Space SpecFamily::space(const DeviceLimits& limits) const {
  Space s;
  for (const SpecAxis& a : spec_.axes) {
    if (a.axis.labels.empty())
      s.axis(a.axis.name, a.axis.values, a.axis.help);
    else
      s.labelled_axis(a.axis.name, a.axis.labels, a.axis.help);
    if (a.axis.plan_only) s.plan_only();
  }
  const auto limit = [&limits](std::string_view name) -> std::optional<std::int64_t> {
    if (name == "max_threads_per_block") return limits.max_threads_per_block;
    if (name == "max_shared_per_block") return limits.max_shared_per_block;
    if (name == "max_shared_per_block_optin") return limits.max_shared_per_block_optin;
    if (name == "sm_count") return limits.sm_count;
    if (name == "l2_bytes") return limits.l2_bytes;
    if (name == "cc_major") return limits.cc_major;
    if (name == "cc_minor") return limits.cc_minor;
    return std::nullopt;
  };
  for (const std::string& c : spec_.constraints) s.require(c, limit);
  if (spec_.allowed_configs) {
    const Space keys = s;  // formats a config's key: the axes alone
    s.require("listed in " + spec_.allowed_configs_file.string(),
              [keys, allowed = *spec_.allowed_configs](const ConfigView& c) {
                return allowed.count(keys.key(c.config())) != 0;
              });
  }
  return s;
}

std::vector<std::string> SpecFamily::axis_definitions(const Space& space, const Config& config) const {
  std::vector<std::string> definitions;
  for (std::size_t i = 0; i < spec_.axes.size(); ++i) {
    const SpecAxis& a = spec_.axes[i];
    if (a.axis.plan_only) continue;
    const std::int64_t value = config.values.at(i);
    if (spec_.cutune_defines)
      definitions.push_back("-DCUTUNE_" + upper(a.axis.name) + "=" + std::to_string(value));
    else
      definitions.push_back("-D" + a.axis.name + "=" +
                            (a.define_text ? space.axes()[i].text_of(value) : std::to_string(value)));
  }
  return definitions;
}

std::vector<std::string> SpecFamily::compile_options() const {
  std::vector<std::string> options = spec_.nvrtc_options;
  for (const auto& folder : spec_.include_paths) options.push_back("-I" + folder.string());
  return options;
}

// ---- problems --------------------------------------------------------------------------------------

void SpecFamily::check_problem(const Problem& problem) const {
  const auto values = slot_values(problem, nullptr);
  for (const SpecBuffer& b : spec_.buffers) {
    if (b.role == BufferRole::scratch) continue;
    const std::int64_t length = evaluate(b.length, values, problem, nullptr);
    const std::string type = buffer_type(b, problem);
    const auto check_file = [&](const std::filesystem::path& path) {
      check_npy_fits(read_npy(path.string()), path.string(), b.name, type, length);
    };
    try {
      if (b.init && b.init->kind == "npy") check_file(b.init->file);
      if (const auto it = spec_.expected.find(b.name); it != spec_.expected.end()) check_file(it->second);
    } catch (const UsageError& e) {
      throw UsageError(spec_.file.string() + ": " + b.where + ": " + e.what() + " (problem " + problem.key() + ")");
    }
  }
}

std::vector<Problem> SpecFamily::problems(const ProblemRequest& request) const {
  std::vector<Problem> defaults;
  if (spec_.problem_texts.empty()) defaults.push_back(make({}));
  for (const auto& text : spec_.problem_texts) defaults.push_back(parse_problem(text));
  // --type replaces the element type, --n the first extent, of each default problem.
  const ProblemField* type_field = spec_.schema.element_type_field();
  const ProblemField* first_extent = nullptr;
  for (const auto& f : spec_.schema.fields())
    if (f.kind == FieldKind::extent && !first_extent) first_extent = &f;
  if (request.type && !type_field) throw UsageError(name() + " has no element type field for --type");
  std::vector<Problem> list;
  std::set<std::string> keys;
  for (const Problem& p : defaults) {
    const std::vector<std::int64_t> sizes = request.sizes.empty() ? std::vector<std::int64_t>{0} : request.sizes;
    for (const std::int64_t n : sizes) {
      auto descriptor = p.descriptor();
      if (request.type) descriptor[type_field->name] = *request.type;
      if (n > 0) descriptor[first_extent->name] = n;
      Problem made = problem_from_descriptor(descriptor);
      if (keys.insert(made.key()).second) list.push_back(std::move(made));
    }
  }
  return list;
}

std::vector<std::string> SpecFamily::problem_definitions(const Problem& problem) const {
  std::vector<std::string> definitions;
  const auto values = slot_values(problem, nullptr);
  for (const auto& [name, text, expression] : spec_.defines_from_problem) {
    if (expression) {
      definitions.push_back(
          "-D" + name + "=" +
          std::to_string(evaluate(*expression, values, problem, nullptr, std::numeric_limits<std::int64_t>::min())));
      continue;
    }
    std::string value;
    for (std::size_t at = 0; at < text.size();) {
      const auto open = text.find('{', at);
      value += text.substr(at, open == std::string::npos ? std::string::npos : open - at);
      if (open == std::string::npos) break;
      const auto close = text.find('}', open);
      const std::string inside = text.substr(open + 1, close - open - 1);
      const auto dot = inside.find('.');
      const std::string field = inside.substr(0, dot), part = dot == std::string::npos ? "" : inside.substr(dot + 1);
      const ProblemField& f = *spec_.schema.field(field);
      const FieldValue& v = problem.values().at(*spec_.schema.index_of(field));
      if (part == "cuda")
        value += element_type(std::get<std::string>(v), kAllTypes).cuda_name;
      else if (part == "index")
        value +=
            std::to_string(std::find(f.choices.begin(), f.choices.end(), std::get<std::string>(v)) - f.choices.begin());
      else
        value += text_of(v);
      at = close + 1;
    }
    definitions.push_back("-D" + name + "=" + value);
  }
  return definitions;
}

// ---- expressions -----------------------------------------------------------------------------------

std::vector<std::int64_t> SpecFamily::slot_values(const Problem& problem, const Config* config) const {
  const auto& fields = spec_.schema.fields();
  std::vector<std::int64_t> values(spec_.axes.size() + 2 * fields.size() + spec_.lets.size(), 0);
  if (config)
    for (std::size_t i = 0; i < spec_.axes.size(); ++i) values[i] = config->values.at(i);
  for (std::size_t j = 0; j < fields.size(); ++j) {
    const FieldValue& v = problem.values().at(j);
    std::int64_t& slot = values[spec_.axes.size() + j];
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      slot = *i;
    } else {
      const auto& choices = fields[j].choices;
      slot = std::find(choices.begin(), choices.end(), std::get<std::string>(v)) - choices.begin();
      if (fields[j].kind == FieldKind::element_type)
        values[spec_.axes.size() + fields.size() + j] =
            static_cast<std::int64_t>(element_type(std::get<std::string>(v), kAllTypes).bytes);
    }
  }
  for (std::size_t k = 0; k < spec_.lets.size(); ++k) {
    const SpecLet& let = spec_.lets[k];
    if (let.reads_axes && !config) continue;
    values[spec_.axes.size() + 2 * fields.size() + k] =
        evaluate(let.value, values, problem, config, std::numeric_limits<std::int64_t>::min());
  }
  return values;
}

std::int64_t SpecFamily::evaluate(const SpecExpression& e, const std::vector<std::int64_t>& values,
                                  const Problem& problem, const Config* config, std::int64_t minimum) const {
  const auto value = e.expression.evaluate(values);
  const auto context = [&] {
    std::string text = " for problem " + problem.key();
    if (config) {
      std::vector<NamedValue> items;
      for (std::size_t i = 0; i < spec_.axes.size(); ++i)
        items.push_back({spec_.axes[i].axis.name, spec_.axes[i].axis.text_of(config->values.at(i))});
      text += ", config " + format_named_values(items);
    }
    return text;
  };
  if (!value)
    throw UsageError(spec_.file.string() + ": " + e.where + " '" + e.expression.text() +
                     "' has no value (a division by zero or an overflow)" + context());
  if (*value < minimum)
    throw UsageError(spec_.file.string() + ": " + e.where + " '" + e.expression.text() + "' is " +
                     std::to_string(*value) + ", below " + std::to_string(minimum) + context());
  return *value;
}

const SpecBuffer& SpecFamily::buffer_named(const std::string& name) const {
  for (const auto& b : spec_.buffers)
    if (b.name == name) return b;
  throw Error("spec " + spec_.name + " has no buffer '" + name + "'");
}

std::string SpecFamily::buffer_type(const SpecBuffer& buffer, const Problem& problem) const {
  if (buffer.type_field.empty()) return buffer.fixed_type;
  return problem.text(buffer.type_field);
}

// ---- buffers and plans -----------------------------------------------------------------------------

std::vector<BufferSpec> SpecFamily::buffers(const Problem& problem) const {
  const auto values = slot_values(problem, nullptr);
  std::vector<BufferSpec> specs;
  for (const SpecBuffer& b : spec_.buffers) {
    if (b.role == BufferRole::scratch) continue;
    const std::int64_t length = evaluate(b.length, values, problem, nullptr);
    const auto bytes = static_cast<std::int64_t>(element_type(buffer_type(b, problem), kAllTypes).bytes);
    specs.push_back({b.name, length * bytes, b.role, b.role == BufferRole::output && b.init.has_value()});
  }
  return specs;
}

std::vector<BufferSpec> SpecFamily::scratch(const Problem& problem, const ConfigView& config) const {
  const auto values = slot_values(problem, &config.config());
  std::vector<BufferSpec> specs;
  for (const SpecBuffer& b : spec_.buffers) {
    if (b.role != BufferRole::scratch) continue;
    const std::int64_t length = evaluate(b.length, values, problem, &config.config());
    const auto bytes = static_cast<std::int64_t>(element_type(buffer_type(b, problem), kAllTypes).bytes);
    specs.push_back({b.name, length * bytes, BufferRole::scratch});
  }
  return specs;
}

std::vector<Step> SpecFamily::plan(const Problem& problem, const ConfigView& config) const {
  return steps_for(spec_.steps, problem, &config.config());
}

std::vector<Step> SpecFamily::steps_for(const std::vector<SpecStep>& steps, const Problem& problem,
                                        const Config* config) const {
  const auto values = slot_values(problem, config);
  const auto length_of = [&](const SpecBuffer& b) { return evaluate(b.length, values, problem, config); };
  std::vector<Step> plan;
  for (const SpecStep& step : steps) {
    if (const auto* m = std::get_if<SpecMemset>(&step)) {
      const SpecBuffer& b = buffer_named(m->buffer);
      const std::string type = buffer_type(b, problem);
      const auto bytes = static_cast<std::int64_t>(element_type(type, kAllTypes).bytes);
      const std::int64_t length = length_of(b);
      const std::int64_t offset = m->offset ? evaluate(*m->offset, values, problem, config) : 0;
      const std::int64_t count = m->count ? evaluate(*m->count, values, problem, config) : length - offset;
      if (offset + count > length)
        throw UsageError(spec_.file.string() + ": " + m->where + ": elements " + std::to_string(offset) + ".." +
                         std::to_string(offset + count) + " are beyond the buffer's " + std::to_string(length) +
                         " for problem " + problem.key());
      const auto word = memset_word(type, m->value);
      if (!word)
        throw UsageError(spec_.file.string() + ": " + m->where + ": a memset of " + type +
                         " can only set 0 (it repeats a 32-bit word)");
      plan.emplace_back(MemsetStep{m->buffer, *word, count * bytes, offset * bytes, false});
      continue;
    }
    const auto& l = std::get<SpecLaunch>(step);
    KernelLaunch launch;
    launch.kernel = l.kernel;
    const auto dim = [&](const std::vector<SpecExpression>& d) {
      Dim3 out;
      unsigned* parts[] = {&out.x, &out.y, &out.z};
      for (std::size_t i = 0; i < d.size(); ++i) {
        const std::int64_t v = evaluate(d[i], values, problem, config, 1);
        if (v > std::numeric_limits<std::int32_t>::max())
          throw UsageError(spec_.file.string() + ": " + d[i].where + " '" + d[i].expression.text() + "' is " +
                           std::to_string(v) + ", beyond any launch dimension, for problem " + problem.key());
        *parts[i] = static_cast<unsigned>(v);
      }
      return out;
    };
    launch.grid = dim(l.grid);
    launch.block = dim(l.block);
    launch.dynamic_shared_bytes =
        l.shared
            ? static_cast<unsigned>(std::min<std::int64_t>(evaluate(*l.shared, values, problem, config), UINT32_MAX))
            : 0;
    for (const SpecArgument& a : l.arguments) {
      if (a.buffer) {
        const SpecBuffer& b = buffer_named(*a.buffer);
        const std::int64_t offset = a.element_offset ? evaluate(*a.element_offset, values, problem, config) : 0;
        const auto bytes = static_cast<std::int64_t>(element_type(buffer_type(b, problem), kAllTypes).bytes);
        launch.args.emplace_back(std::in_place_type<BufferArg>, BufferArg{*a.buffer, offset * bytes});
        continue;
      }
      const std::string where = l.where + ": argument '" + a.text + "'";
      if (a.big_unsigned) {
        launch.args.push_back(static_cast<std::uint64_t>(*a.big_unsigned));
        continue;
      }
      if (a.float_literal) {
        if (a.scalar_type == "float32")
          launch.args.push_back(static_cast<float>(*a.float_literal));
        else
          launch.args.push_back(*a.float_literal);
        continue;
      }
      const std::int64_t v = evaluate(*a.value, values, problem, config, std::numeric_limits<std::int64_t>::min());
      const auto out_of_range = [&] {
        return UsageError(spec_.file.string() + ": " + where + ": " + std::to_string(v) + " does not fit " +
                          a.scalar_type + " for problem " + problem.key());
      };
      if (a.scalar_type == "int32") {
        if (v < INT32_MIN || v > INT32_MAX) throw out_of_range();
        launch.args.push_back(static_cast<std::int32_t>(v));
      } else if (a.scalar_type == "uint32") {
        if (v < 0 || v > UINT32_MAX) throw out_of_range();
        launch.args.push_back(static_cast<std::uint32_t>(v));
      } else if (a.scalar_type == "int64") {
        launch.args.push_back(v);
      } else if (a.scalar_type == "uint64") {
        if (v < 0) throw out_of_range();
        launch.args.push_back(static_cast<std::uint64_t>(v));
      } else if (a.scalar_type == "float32") {
        launch.args.push_back(static_cast<float>(v));
      } else {
        launch.args.push_back(static_cast<double>(v));
      }
    }
    plan.emplace_back(std::move(launch));
  }
  return plan;
}

void SpecFamily::check_plans(const std::vector<Problem>& problems, const Space& space) const {
  const std::vector<Config> configs = space.enumerate();
  for (const Problem& problem : problems) {
    buffers(problem);
    if (spec_.reference) steps_for(spec_.reference->steps, problem, nullptr);
    work(problem);
    for (const Config& config : configs) {
      const ConfigView view(space, config);
      scratch(problem, view);
      plan(problem, view);
    }
  }
}

// ---- inputs, references, verification --------------------------------------------------------------

void SpecFamily::generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const {
  for (const SpecBuffer& b : spec_.buffers) {
    if (!b.init || b.role == BufferRole::scratch) continue;
    auto& bytes = inputs.at(b.name);
    const std::string type = buffer_type(b, problem);
    if (b.init->kind == "npy") {
      const NpyArray array = read_npy(b.init->file.string());
      check_npy_fits(array, b.init->file.string(), b.name, type,
                     static_cast<std::int64_t>(bytes.size() / element_type(type, kAllTypes).bytes));
      bytes = array.data;
      continue;
    }
    dispatch(type, [&](auto zero) {
      using T = decltype(zero);
      fill(inputs.as<T>(b.name), *b.init, buffer_seed(seed, b.name));
    });
  }
}

HostBuffers SpecFamily::reference(const Problem& problem, const HostBuffers&) const {
  HostBuffers expected;
  for (const auto& [name, path] : spec_.expected) {
    const SpecBuffer& b = buffer_named(name);
    const NpyArray array = read_npy(path.string());
    const std::int64_t length = evaluate(b.length, slot_values(problem, nullptr), problem, nullptr);
    check_npy_fits(array, path.string(), name, buffer_type(b, problem), length);
    expected.at(name) = array.data;
  }
  return expected;
}

std::optional<GpuReference> SpecFamily::gpu_reference(const Problem& problem) const {
  if (!spec_.reference) return std::nullopt;
  GpuReference reference;
  reference.program_name = spec_.reference->source.filename().string();
  reference.source = spec_.reference->source_text;
  reference.options = problem_definitions(problem);
  for (auto& o : compile_options()) reference.options.push_back(std::move(o));
  for (const auto& o : spec_.reference->nvrtc_options) reference.options.push_back(o);
  reference.plan = steps_for(spec_.reference->steps, problem, nullptr);
  return reference;
}

Verdict SpecFamily::compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const {
  for (const SpecBuffer& b : spec_.buffers) {
    if (b.role != BufferRole::output || !expected.contains(b.name)) continue;
    Verdict verdict;
    dispatch(buffer_type(b, problem), [&](auto zero) {
      using T = decltype(zero);
      if (b.rtol || b.atol)
        verdict = compare_close<T>(b.name, expected.as<T>(b.name), actual.as<T>(b.name), b.rtol.value_or(0),
                                   b.atol.value_or(0));
      else
        verdict = compare_exact<T>(b.name, expected.as<T>(b.name), actual.as<T>(b.name));
    });
    if (!verdict.ok) return verdict;
  }
  return {};
}

std::optional<std::vector<OutputRule>> SpecFamily::output_rules(const Problem& problem,
                                                                const HostBuffers& expected) const {
  std::vector<OutputRule> rules;
  for (const SpecBuffer& b : spec_.buffers) {
    if (b.role != BufferRole::output) continue;
    OutputRule rule{b.name, buffer_type(b, problem)};
    rule.checked = expected.contains(b.name);  // as compare(): outputs without expected values are not checked
    if (b.rtol || b.atol) {
      rule.exact = false;
      rule.rtol = b.rtol.value_or(0);
      rule.atol = b.atol.value_or(0);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

Work SpecFamily::work(const Problem& problem) const {
  const auto values = slot_values(problem, nullptr);
  Work w;
  if (spec_.work_bytes) w.bytes = static_cast<double>(evaluate(*spec_.work_bytes, values, problem, nullptr));
  if (spec_.work_flops) w.flops = static_cast<double>(evaluate(*spec_.work_flops, values, problem, nullptr));
  return w;
}

}  // namespace cutune
