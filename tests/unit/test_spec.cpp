// Kernel spec files: reading, every bad input as one clear line, plans that equal the built-in
// families' where a spec restates one, inputs, verification, and the kernel-argument check (NVRTC,
// no GPU).
#include <gtest/gtest.h>

#include <fstream>

#include "copy.hpp"
#include "core/error.hpp"
#include "npy.hpp"
#include "resample.hpp"
#include "spec_check.hpp"
#include "spec_family.hpp"
#include "temp_folder.hpp"

using namespace cutune;
using cutune::testing::TempFolder;

namespace {

const std::filesystem::path kExamples = std::filesystem::path(CUTUNE_SOURCE_DIR) / "examples";

constexpr const char* kSaxpySource = R"cu(
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void mangled(int n) {}
)cu";

constexpr const char* kSaxpySpec = R"toml(
name = "saxpy"
source = "saxpy.cu"
problems = ["n=1000"]

[[field]]
name = "n"
kind = "extent"

[[axis]]
name = "block_size_x"
values = [64, 128, 256]

[[buffer]]
name = "x"
type = "float32"
length = "n"
role = "input"
init = { kind = "uniform", low = -1.0, high = 1.0 }

[[buffer]]
name = "y"
type = "float32"
length = "n"
role = "output"
init = { kind = "uniform", low = -1.0, high = 1.0 }
tolerance = { rtol = 1e-6 }

[[step]]
launch = "saxpy"
grid = ["ceil_div(n, block_size_x)"]
block = ["block_size_x"]
args = ["int32 n", "float32 2.5", "x", "y"]

[work]
bytes = "3 * n * 4"
flops = "2 * n"
)toml";

// A scratch folder holding saxpy.cu and a spec edited by `edit` (a list of text replacements).
struct SpecFiles {
  TempFolder folder;
  std::filesystem::path spec;

  explicit SpecFiles(const std::vector<std::pair<std::string, std::string>>& edits = {},
                     const std::string& source = kSaxpySource) {
    std::ofstream(folder.file("saxpy.cu")) << source;
    std::string text = kSaxpySpec;
    for (const auto& [from, to] : edits) {
      const auto at = text.find(from);
      if (at == std::string::npos) throw std::runtime_error("test edit: '" + from + "' is not in the spec");
      text.replace(at, from.size(), to);
    }
    spec = folder.file("saxpy.toml");
    std::ofstream(spec) << text;
  }
};

// The one line a bad spec gets, or "(no error)".
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string load_error(const std::vector<std::pair<std::string, std::string>>& edits) {
  const SpecFiles files(edits);
  return error_of([&] { load_spec_family(files.spec); });
}

// Everything check_spec_family checks, as `tune` runs it before storing anything.
std::string check_error(const std::vector<std::pair<std::string, std::string>>& edits,
                        const std::string& source = kSaxpySource) {
  const SpecFiles files(edits, source);
  return error_of([&] {
    const auto family = load_spec_family(files.spec);
    check_spec_family(*family, family->space(limits_for_arch("sm_90")), family->problems({}), "sm_90");
  });
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "more than one line: " << text;
}

}  // namespace

TEST(SpecRead, ASmallSpecBecomesAFamily) {
  const SpecFiles files;
  const auto family = load_spec_family(files.spec);
  EXPECT_EQ(family->name(), "saxpy");
  EXPECT_EQ(family->template_file(), "saxpy.cu");
  EXPECT_EQ(family->source(), kSaxpySource);
  const auto problems = family->problems({});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].key(), "n=1000");
  EXPECT_EQ(family->problems({std::nullopt, {10, 20}}).at(1).key(), "n=20");  // --n replaces the first extent
  const Space space = family->space(limits_for_arch("sm_90"));
  ASSERT_EQ(space.enumerate().size(), 3u);
  const Config config = space.parse("block_size_x=128");
  EXPECT_EQ(family->axis_definitions(space, config), (std::vector<std::string>{"-Dblock_size_x=128"}));
  const auto plan = family->plan(problems[0], ConfigView(space, config));
  ASSERT_EQ(plan.size(), 1u);
  const auto& launch = std::get<KernelLaunch>(plan[0]);
  EXPECT_EQ(launch.grid.x, 8u);
  EXPECT_EQ(launch.block.x, 128u);
  ASSERT_EQ(launch.args.size(), 4u);
  EXPECT_EQ(std::get<std::int32_t>(launch.args[0]), 1000);
  EXPECT_EQ(std::get<float>(launch.args[1]), 2.5f);
  EXPECT_EQ(std::get<BufferArg>(launch.args[2]).buffer, "x");
  const auto buffers = family->buffers(problems[0]);
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[1].bytes, 4000);
  EXPECT_TRUE(buffers[1].initialised);  // y = a*x + y reads its output: restored before every run
  EXPECT_FALSE(family->verifies());     // no [reference], no [expected]
  EXPECT_EQ(family->work(problems[0]).flops, 2000);
}

TEST(SpecRead, TheExampleSpecsRead) {
  for (const char* spec :
       {"specs/copy.toml", "specs/resample.toml", "conv2d/conv2d.toml", "histogram/histogram.toml"}) {
    SCOPED_TRACE(spec);
    const auto family = load_spec_family(kExamples / spec);
    EXPECT_TRUE(family->verifies());
    const auto problems = family->problems({});
    EXPECT_FALSE(problems.empty());
    // Plans for every problem and config, and one compile of the template and of the reference
    // with each launch's arguments checked against its kernel (templates define macros such as F
    // that the check's own code must not trip over).
    check_spec_family(*family, family->space(limits_for_arch("sm_90")), problems, "sm_90");
  }
}

// The spec versions of copy and resample restate the C++ families on the same templates: for every
// default problem and every config, the same buffers, the same launches and arguments, the same
// work. (The GPU test tunes both and compares their best configs.)
TEST(SpecRead, CopyAndResampleSpecsPlanExactlyAsTheirCppFamilies) {
  const CopyFamily copy;
  const ResampleFamily resample;
  for (const auto& [spec_file, builtin] : {std::pair<const char*, const Family*>{"specs/copy.toml", &copy},
                                           std::pair<const char*, const Family*>{"specs/resample.toml", &resample}}) {
    SCOPED_TRACE(spec_file);
    const auto spec = load_spec_family(kExamples / spec_file);
    const Space spec_space = spec->space(limits_for_arch("sm_90"));
    const Space space = builtin->space(limits_for_arch("sm_90"));
    ASSERT_EQ(spec_space.enumerate().size(), space.enumerate().size());
    for (const Problem& problem : builtin->problems({})) {
      const Problem mirrored = spec->parse_problem(problem.key());
      ASSERT_EQ(mirrored.key(), problem.key());
      ASSERT_EQ(mirrored.match_key(), problem.match_key());
      EXPECT_EQ(spec->work(mirrored).bytes, builtin->work(problem).bytes);
      const auto spec_buffers = spec->buffers(mirrored), buffers = builtin->buffers(problem);
      ASSERT_EQ(spec_buffers.size(), buffers.size());
      for (std::size_t i = 0; i < buffers.size(); ++i)
        EXPECT_EQ(spec_buffers[i].bytes, buffers[i].bytes) << buffers[i].name;
      for (const Config& config : space.enumerate()) {
        const std::string key = space.key(config);
        const Config spec_config = spec_space.parse(key);
        EXPECT_EQ(spec->axis_definitions(spec_space, spec_config), builtin->axis_definitions(space, config)) << key;
        const auto a = spec->plan(mirrored, ConfigView(spec_space, spec_config));
        const auto b = builtin->plan(problem, ConfigView(space, config));
        ASSERT_EQ(a.size(), b.size()) << key;
        const auto& la = std::get<KernelLaunch>(a[0]);
        const auto& lb = std::get<KernelLaunch>(b[0]);
        EXPECT_EQ(la.kernel, lb.kernel);
        EXPECT_EQ(std::tie(la.grid.x, la.grid.y, la.block.x, la.dynamic_shared_bytes),
                  std::tie(lb.grid.x, lb.grid.y, lb.block.x, lb.dynamic_shared_bytes))
            << problem.key() << " " << key;
        ASSERT_EQ(la.args.size(), lb.args.size());
        for (std::size_t i = 0; i < la.args.size(); ++i) {
          EXPECT_EQ(la.args[i].index(), lb.args[i].index()) << "argument " << i << " of " << key;
          if (const auto* buffer = std::get_if<BufferArg>(&la.args[i]))
            EXPECT_EQ(buffer->buffer, std::get<BufferArg>(lb.args[i]).buffer);
          else
            EXPECT_TRUE(la.args[i] == lb.args[i] || std::holds_alternative<BufferArg>(lb.args[i]))
                << "argument " << i << " of " << problem.key() << " " << key;
        }
      }
      // The same definitions (a TOML table has no order: compared as sets).
      auto spec_definitions = spec->problem_definitions(mirrored), definitions = builtin->problem_definitions(problem);
      std::sort(spec_definitions.begin(), spec_definitions.end());
      std::sort(definitions.begin(), definitions.end());
      EXPECT_EQ(spec_definitions, definitions);
    }
  }
}

TEST(SpecRead, DefaultsLetsAndTextValuedAxes) {
  const std::string text_axis = R"toml(
[[axis]]
name = "alpha"
values = [0.5, 2.0]
[[axis]]
name = "mode"
labels = ["fast", "safe"]

[[let]]
name = "tiles"
value = "ceil_div(n, block_size_x)"
)toml";
  const SpecFiles files(
      {{"[[buffer]]", text_axis + "\n[[buffer]]"}, {"grid = [\"ceil_div(n, block_size_x)\"]", "grid = [\"tiles\"]"}});
  const auto family = load_spec_family(files.spec);
  const Space space = family->space(limits_for_arch("sm_90"));
  const Config config = space.parse("block_size_x=256,alpha=0.5,mode=safe");
  // Text values pass their text, as Kernel Tuner's #define; labels pass their number.
  EXPECT_EQ(family->axis_definitions(space, config),
            (std::vector<std::string>{"-Dblock_size_x=256", "-Dalpha=0.5", "-Dmode=1"}));
  const auto plan = family->plan(family->problems({}).at(0), ConfigView(space, config));
  EXPECT_EQ(std::get<KernelLaunch>(plan[0]).grid.x, 4u);
}

TEST(SpecInputs, InitialisersAndNpyFiles) {
  TempFolder folder("cutune-npy");  // SpecFiles has the test's default folder
  NpyArray x{"float32", {4}, {}};
  x.data.resize(16);
  const float values[4] = {1, 2, 3, 4};
  std::memcpy(x.data.data(), values, 16);
  write_npy(folder.file("x.npy"), x);
  const SpecFiles files({{"init = { kind = \"uniform\", low = -1.0, high = 1.0 }\n\n[[buffer]]",
                          "init = { kind = \"npy\", file = \"" + folder.file("x.npy") + "\" }\n\n[[buffer]]"},
                         {"init = { kind = \"uniform\", low = -1.0, high = 1.0 }\ntolerance",
                          "init = { kind = \"integers\", low = 3, high = 5 }\ntolerance"},
                         {"problems = [\"n=1000\"]", "problems = [\"n=4\"]"}});
  const auto family = load_spec_family(files.spec);
  const Problem problem = family->problems({}).at(0);
  HostBuffers inputs;
  inputs.at("x").resize(16);
  inputs.at("y").resize(16);
  family->generate_inputs(problem, 7, inputs);
  EXPECT_EQ(std::vector<float>(inputs.as<float>("x").begin(), inputs.as<float>("x").end()),
            (std::vector<float>{1, 2, 3, 4}));
  for (float v : inputs.as<float>("y")) EXPECT_TRUE(v == 3 || v == 4 || v == 5) << v;
  // The same file is refused for a problem whose buffer has another length, naming both.
  expect_contains(error_of([&] { family->parse_problem("n=5"); }),
                  "x.npy: 4 elements (shape (4,)), but buffer 'x' holds 5");
}

TEST(SpecVerify, ToleranceAndExactComparisons) {
  const SpecFiles files;
  const auto family = load_spec_family(files.spec);
  const Problem problem = family->problems({std::nullopt, {2}}).at(0);
  HostBuffers expected, actual;
  expected.at("y").resize(8);
  actual.at("y").resize(8);
  expected.as<float>("y")[0] = 1.0f;
  actual.as<float>("y")[0] = 1.0f + 5e-7f;  // within rtol 1e-6
  EXPECT_TRUE(family->compare(problem, expected, actual).ok);
  actual.as<float>("y")[1] = 1e-3f;
  const Verdict verdict = family->compare(problem, expected, actual);
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(verdict.first_bad_index, 1);
}

// ---- bad input: one line naming the file and the field, before anything is stored --------------

TEST(SpecBadInput, UnknownNamesKeysAndKinds) {
  expect_contains(load_error({{"length = \"n\"", "length = \"n * m\""}}),
                  "saxpy.toml: buffer 'x': length: expression 'n * m': unknown name 'm' at column 5");
  expect_contains(load_error({{"grid = [\"ceil_div(n, block_size_x)\"]", "grid = [\"ceil_div(n, block)\"]"}}),
                  "step 1 (launch 'saxpy'): grid[0]: expression 'ceil_div(n, block)': unknown name 'block'");
  // Lengths of inputs and outputs depend on the problem only: an axis is unknown there.
  expect_contains(load_error({{"length = \"n\"", "length = \"n * block_size_x\""}}), "unknown name 'block_size_x'");
  expect_contains(load_error({{"role = \"input\"", "rol = \"input\""}}), "buffer 'x': unknown key 'rol'");
  expect_contains(load_error({{"kind = \"extent\"", "kind = \"size\""}}), "field 'n': unknown kind 'size'");
  expect_contains(load_error({{"args = [\"int32 n\"", "args = [\"int33 n\""}}), "is no buffer and no typed scalar");
  expect_contains(load_error({{"name = \"saxpy\"", "name = \"scan\""}}), "'scan' is a built-in family's name");
  expect_contains(load_error({{"problems = [\"n=1000\"]", "problems = [\"m=1000\"]"}}), "unknown problem field 'm'");
  expect_contains(load_error({{"[work]", "constraints = [\"block_size_x < nosuch\"]\n[work]"}}), "line");
}

TEST(SpecBadInput, ConstraintsNameAxesAndLimits) {
  const SpecFiles ok(std::vector<std::pair<std::string, std::string>>{
      {"problems = [\"n=1000\"]",
       "problems = [\"n=1000\"]\nconstraints = [\"block_size_x * 2 <= max_threads_per_block\"]"}});
  EXPECT_EQ(load_spec_family(ok.spec)->space(limits_for_arch("sm_90")).enumerate().size(), 3u);
  expect_contains(
      load_error({{"problems = [\"n=1000\"]", "problems = [\"n=1000\"]\nconstraints = [\"block_size_x <= nosuch\"]"}}),
      "constraints: constraint 'block_size_x <= nosuch': unknown parameter 'nosuch'");
}

TEST(SpecBadInput, MissingFiles) {
  expect_contains(load_error({{"source = \"saxpy.cu\"", "source = \"nope.cu\""}}), "source: no file");
  expect_contains(load_error({{"init = { kind = \"uniform\", low = -1.0, high = 1.0 }\n\n[[buffer]]",
                               "init = { kind = \"npy\", file = \"missing.npy\" }\n\n[[buffer]]"}}),
                  "buffer 'x': init: no file");
  expect_contains(error_of([] { load_spec_family("/nonexistent/spec.toml"); }), "no such kernel spec file");
  TempFolder folder;
  std::ofstream(folder.file("broken.toml")) << "name = \"x\"\n[[axis\n";
  expect_contains(error_of([&] { load_spec_family(folder.file("broken.toml")); }), "broken.toml: line 2");
}

TEST(SpecBadInput, NpyOfTheWrongTypeOrShape) {
  TempFolder folder("cutune-npy");
  NpyArray doubles{"float64", {1000}, std::vector<std::byte>(8000)};
  write_npy(folder.file("doubles.npy"), doubles);
  expect_contains(
      check_error({{"init = { kind = \"uniform\", low = -1.0, high = 1.0 }\n\n[[buffer]]",
                    "init = { kind = \"npy\", file = \"" + folder.file("doubles.npy") + "\" }\n\n[[buffer]]"}}),
      "dtype float64 (<f8), but buffer 'x' holds float32");
  NpyArray short_one{"float32", {10, 10}, std::vector<std::byte>(400)};
  write_npy(folder.file("short.npy"), short_one);
  expect_contains(
      check_error({{"init = { kind = \"uniform\", low = -1.0, high = 1.0 }\n\n[[buffer]]",
                    "init = { kind = \"npy\", file = \"" + folder.file("short.npy") + "\" }\n\n[[buffer]]"}}),
      "100 elements (shape (10, 10)), but buffer 'x' holds 1000");
}

TEST(SpecBadInput, ExpressionsThatFailForAProblemOrConfig) {
  expect_contains(
      check_error({{"grid = [\"ceil_div(n, block_size_x)\"]", "grid = [\"n / (block_size_x - 64)\"]"}}),
      "grid[0] 'n / (block_size_x - 64)' has no value (a division by zero or an overflow) for problem n=1000, "
      "config block_size_x=64");
  expect_contains(check_error({{"length = \"n\"", "length = \"n - 2000\""}}),
                  "buffer 'x': length 'n - 2000' is -1000, below 0");
  expect_contains(check_error({{"block = [\"block_size_x\"]", "block = [\"block_size_x - 64\"]"}}), "is 0, below 1");
}

TEST(SpecBadInput, KernelsAndArgumentsAreCheckedAgainstTheTemplate) {
  expect_contains(check_error({{"launch = \"saxpy\"", "launch = \"saxpyy\""}}),
                  "kernel 'saxpyy' is not in the template");
  expect_contains(
      check_error({{"args = [\"int32 n\", \"float32 2.5\", \"x\", \"y\"]", "args = [\"int32 n\", \"x\", \"y\"]"}}),
      "the spec passes 3 arguments, but kernel 'saxpy' takes another number");
  expect_contains(
      check_error({{"args = [\"int32 n\"", "args = [\"int64 n\""}}),
      "argument 0 ('int64 n'): the spec passes an 8-byte integer (int64), but the kernel's parameter 0 is not one");
  expect_contains(check_error({{"\"float32 2.5\"", "\"int32 2\""}}), "argument 1 ('int32 2')");
  expect_contains(check_error({{"args = [\"int32 n\", \"float32 2.5\", \"x\", \"y\"]",
                                "args = [\"int32 n\", \"float32 2.5\", \"int32 n\", \"y\"]"}}),
                  "argument 2 ('int32 n')");
  expect_contains(
      check_error({{"type = \"float32\"\nlength = \"n\"\nrole = \"input\"",
                    "type = \"float64\"\nlength = \"n\"\nrole = \"input\""}}),
      "buffer 'x' holds float64 (8 bytes), but the kernel's parameter 2 points to elements of another size");
  expect_contains(check_error({{"launch = \"saxpy\"", "launch = \"mangled\""},
                               {"args = [\"int32 n\", \"float32 2.5\", \"x\", \"y\"]", "args = [\"int32 n\"]"}}),
                  "kernel 'mangled' in the template");
  EXPECT_EQ(check_error({}), "(no error)");
}
