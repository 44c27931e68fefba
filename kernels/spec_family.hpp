#pragma once
// A kernel family declared by a spec file (docs/kernel-spec.md) instead of C++: the user's CUDA
// template, axes and constraints, typed problem fields, buffers with initialisers, a launch plan of
// memsets and launches whose sizes and arguments are expressions, verification by a reference plan
// on the GPU or by expected outputs from .npy files, and a work model. Everything the engine needs
// from a Family is derived from the declaration, so a spec family is tuned, stored, looked up and
// reported exactly like a built-in one.
//
// The spec is read and checked once (spec_reader.cpp); every expression is parsed then, so an
// unknown name is an error at load time naming the file and the field. What depends on a problem or
// a config (lengths, grids, arguments) is checked by check_plans() before anything is stored.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/expression.hpp"
#include "family.hpp"

namespace cutune {

// An expression of the spec and where it was written ("step 2 (launch 'saxpy'): grid[0]"), for
// errors that name the field.
struct SpecExpression {
  std::string where;
  Expression expression = Expression::constant(0);
};

// A kernel argument: a buffer (a pointer to element `element_offset`) or a typed scalar.
struct SpecArgument {
  std::string text;  // as written, for messages
  std::optional<std::string> buffer;
  std::optional<SpecExpression> element_offset;
  std::string scalar_type;                    // int32, uint32, int64, uint64, float32, float64
  std::optional<SpecExpression> value;        // integer expression
  std::optional<double> float_literal;        // "float32 2.5"
  std::optional<std::uint64_t> big_unsigned;  // "uint64 18446744073709551615": beyond any expression
};

struct SpecLaunch {
  std::string where;
  std::string kernel;
  std::vector<SpecExpression> grid, block;
  std::optional<SpecExpression> shared;
  std::vector<SpecArgument> arguments;
};

struct SpecMemset {
  std::string where;
  std::string buffer;
  double value = 0;
  std::optional<SpecExpression> count, offset;  // elements; default: the whole buffer from 0
};

using SpecStep = std::variant<SpecLaunch, SpecMemset>;

struct SpecInit {
  std::string kind;  // uniform, integers, sorted, constant, iota, npy
  double low = 0, high = 1, value = 0, start = 0, step = 1;
  std::filesystem::path file;  // npy
};

struct SpecBuffer {
  std::string where;
  std::string name;
  std::string type_field;  // an element_type field whose value is the buffer's type, or ""
  std::string fixed_type;  // the type when type_field is ""
  SpecExpression length;
  BufferRole role = BufferRole::input;
  std::optional<SpecInit> init;
  std::optional<double> rtol, atol;  // outputs: tolerance; none: exact
};

// A named expression ([[let]]): later expressions read it by name. One that reads an axis, or a
// let that does, is known only where configs are (plans, scratch), not in lengths or work.
struct SpecLet {
  std::string name;
  SpecExpression value;
  bool reads_axes = false;
};

// -D<name>=<value> from the problem: a text with {field}, {field.cuda}, {field.index} placeholders,
// or an integer expression over the problem fields.
struct SpecDefine {
  std::string name;
  std::string text;
  std::optional<SpecExpression> expression;
};

struct SpecAxis {
  Axis axis;
  // Values given as floats or strings (Kernel Tuner's tune_params): a labelled axis whose -D
  // definition is the label's text, not its value number.
  bool define_text = false;
};

struct SpecReference {
  std::filesystem::path source;
  std::string source_text;
  std::vector<std::string> nvrtc_options;
  std::vector<SpecStep> steps;
};

// The whole declaration, as read from the file.
struct SpecDefinition {
  std::filesystem::path file;  // absolute
  std::string name, summary;
  std::filesystem::path source_path;
  std::string source_text;
  std::vector<std::string> kernels;
  std::vector<std::string> nvrtc_options;
  std::vector<std::filesystem::path> include_paths;
  bool cutune_defines = false;  // defines = "cutune"
  ProblemSchema schema;
  std::vector<std::string> problem_texts;
  std::vector<SpecDefine> defines_from_problem;
  std::vector<SpecAxis> axes;
  std::vector<SpecLet> lets;
  std::vector<std::string> constraints;
  std::optional<std::set<std::string>> allowed_configs;  // canonical config keys
  std::filesystem::path allowed_configs_file;
  std::vector<SpecBuffer> buffers;
  std::vector<SpecStep> steps;
  std::optional<SpecReference> reference;
  std::map<std::string, std::filesystem::path> expected;  // output buffer → .npy
  std::optional<SpecExpression> work_bytes, work_flops;
};

// Reads and checks a spec file. Throws UsageError "<file>: <field>: <what is wrong>" for anything
// malformed: TOML syntax, missing or unknown keys, unknown names in expressions, missing files.
SpecDefinition read_spec(const std::filesystem::path& file);

class SpecFamily : public Family {
 public:
  explicit SpecFamily(SpecDefinition definition);

  std::string name() const override { return spec_.name; }
  std::string summary() const override { return spec_.summary; }
  std::string template_file() const override { return spec_.source_path.filename().string(); }
  std::string source() const override { return spec_.source_text; }
  std::optional<std::string> spec_file() const override { return spec_.file.string(); }

  Space space(const DeviceLimits& limits) const override;
  std::vector<std::string> axis_definitions(const Space& space, const Config& config) const override;
  std::vector<std::string> compile_options() const override;
  const ProblemSchema& problem_schema() const override { return spec_.schema; }
  void check_problem(const Problem& problem) const override;
  std::vector<Problem> problems(const ProblemRequest& request) const override;
  std::vector<std::string> problem_definitions(const Problem& problem) const override;

  std::vector<BufferSpec> buffers(const Problem& problem) const override;
  std::vector<BufferSpec> scratch(const Problem& problem, const ConfigView& config) const override;
  std::vector<Step> plan(const Problem& problem, const ConfigView& config) const override;

  void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const override;
  HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const override;
  std::optional<GpuReference> gpu_reference(const Problem& problem) const override;
  bool verifies() const override { return spec_.reference.has_value() || !spec_.expected.empty(); }
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override;
  std::optional<std::vector<OutputRule>> output_rules(const Problem& problem,
                                                      const HostBuffers& expected) const override;
  Work work(const Problem& problem) const override;

  const SpecDefinition& definition() const { return spec_; }

  // Evaluates every length, grid, block, shared-memory size, memset range and argument for each
  // problem and each config of the space, so that a spec whose expressions fail (division by zero,
  // a negative or oversized value) is refused before anything is stored. Throws UsageError
  // "<file>: <field> '<expression>': <what> for problem <key>[, config <config>]".
  void check_plans(const std::vector<Problem>& problems, const Space& space) const;

  // The element type of a buffer for a problem.
  std::string buffer_type(const SpecBuffer& buffer, const Problem& problem) const;

 private:
  // Slot values for expressions: the axes, then the problem fields, then sizeof of the
  // element-type fields, then the lets (the layout spec_reader.cpp parses against). Without a
  // config, the lets that read axes stay 0: no problem-only expression reads them.
  std::vector<std::int64_t> slot_values(const Problem& problem, const Config* config) const;
  std::int64_t evaluate(const SpecExpression& e, const std::vector<std::int64_t>& values, const Problem& problem,
                        const Config* config, std::int64_t minimum = 0) const;
  std::vector<Step> steps_for(const std::vector<SpecStep>& steps, const Problem& problem, const Config* config) const;
  const SpecBuffer& buffer_named(const std::string& name) const;

  SpecDefinition spec_;
};

// A spec family read from a file (kernel spec); throws UsageError as read_spec.
std::unique_ptr<SpecFamily> load_spec_family(const std::filesystem::path& file);

}  // namespace cutune
