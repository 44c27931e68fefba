#include "spec_check.hpp"

#include <fmt/format.h>

#include <iostream>
#include <regex>
#include <set>

#include "compile.hpp"
#include "core/error.hpp"
#include "cubin_symbols.hpp"
#include "element_types.hpp"

namespace cutune {
namespace {

// Traits that NVRTC evaluates at compile time, with no standard library: a kernel's parameter
// count, and each parameter's pointer-ness, pointee size, scalar size and floating-point-ness.
// param<I, F> is void past the last parameter, so a wrong count fails one check, not the compile.
// Template parameters have long names: the template's macros (F, T, N, …) are defined above.
constexpr const char* kTraits = R"cu(
namespace cutune_check {
template <class CutuneFn> struct arity { static constexpr int value = -1; };
template <class... CutuneArgs> struct arity<void (*)(CutuneArgs...)> { static constexpr int value = sizeof...(CutuneArgs); };
template <int CutuneIndex, class CutuneFn> struct param { typedef void type; };
template <class CutuneFirst, class... CutuneArgs> struct param<0, void (*)(CutuneFirst, CutuneArgs...)> {
  typedef CutuneFirst type;
};
template <int CutuneIndex, class CutuneFirst, class... CutuneArgs>
struct param<CutuneIndex, void (*)(CutuneFirst, CutuneArgs...)> {
  typedef typename param<CutuneIndex - 1, void (*)(CutuneArgs...)>::type type;
};
template <class CutuneType> struct pointer { static constexpr bool value = false; static constexpr int pointee = 0; };
template <class CutuneType> struct pointer<CutuneType*> {
  static constexpr bool value = true;
  static constexpr int pointee = sizeof(CutuneType);
};
template <> struct pointer<void*> { static constexpr bool value = true; static constexpr int pointee = 0; };
template <> struct pointer<const void*> { static constexpr bool value = true; static constexpr int pointee = 0; };
template <class CutuneType> struct scalar { static constexpr int size = sizeof(CutuneType); static constexpr bool floating = false; };
template <> struct scalar<void> { static constexpr int size = 0; static constexpr bool floating = false; };
template <> struct scalar<float> { static constexpr int size = 4; static constexpr bool floating = true; };
template <> struct scalar<double> { static constexpr int size = 8; static constexpr bool floating = true; };
}
)cu";

int scalar_bytes(const std::string& type) { return type == "int32" || type == "uint32" || type == "float32" ? 4 : 8; }

struct Check {
  std::string tag;      // CUTUNE_CHECK <n>: the static_assert's message
  std::string message;  // the error line when it fails
};

// The probe: one static_assert per launch's parameter count and per argument.
struct Probe {
  std::string code;
  std::vector<Check> checks;
  std::set<std::string> kernels;
};

Probe probe_for(const SpecFamily& family, const std::vector<SpecStep>& steps, const Problem& problem) {
  const SpecDefinition& spec = family.definition();
  Probe probe;
  probe.code = kTraits;
  for (const SpecStep& step : steps) {
    const auto* launch = std::get_if<SpecLaunch>(&step);
    if (!launch) continue;
    probe.kernels.insert(launch->kernel);
    const std::string f = "decltype(&" + launch->kernel + ")";
    const auto add = [&](const std::string& condition, const std::string& message) {
      const std::string tag = "CUTUNE_CHECK " + std::to_string(probe.checks.size());
      probe.code += "static_assert(" + condition + ", \"" + tag + "\");\n";
      probe.checks.push_back({tag, spec.file.string() + ": " + launch->where + ": " + message});
    };
    add(fmt::format("cutune_check::arity<{}>::value == {}", f, launch->arguments.size()),
        fmt::format("the spec passes {} arguments, but kernel '{}' takes another number", launch->arguments.size(),
                    launch->kernel));
    for (std::size_t i = 0; i < launch->arguments.size(); ++i) {
      const SpecArgument& a = launch->arguments[i];
      const std::string p = fmt::format("cutune_check::param<{}, {}>::type", i, f);
      const std::string what = fmt::format("argument {} ('{}')", i, a.text);
      if (a.buffer) {
        const SpecBuffer* b = nullptr;
        for (const auto& candidate : spec.buffers)
          if (candidate.name == *a.buffer) b = &candidate;
        const std::string type = family.buffer_type(*b, problem);
        const auto bytes = element_type(type, {type}).bytes;
        add(fmt::format("cutune_check::pointer<{}>::value", p), what + ": the spec passes a pointer (buffer '" +
                                                                    *a.buffer + "'), but the kernel's parameter " +
                                                                    std::to_string(i) + " is no pointer");
        add(fmt::format("cutune_check::pointer<{0}>::pointee == 0 || cutune_check::pointer<{0}>::pointee == {1}", p,
                        bytes),
            fmt::format("{}: buffer '{}' holds {} ({} bytes), but the kernel's parameter {} points to elements of "
                        "another size",
                        what, *a.buffer, type, bytes, i));
        continue;
      }
      const bool floating = a.scalar_type.starts_with("float");
      add(fmt::format("!cutune_check::pointer<{0}>::value && cutune_check::scalar<{0}>::size == {1} && "
                      "cutune_check::scalar<{0}>::floating == {2}",
                      p, scalar_bytes(a.scalar_type), floating ? "true" : "false"),
          fmt::format("{}: the spec passes {} {}-byte {} ({}), but the kernel's parameter {} is not one", what,
                      scalar_bytes(a.scalar_type) == 8 ? "an" : "a", scalar_bytes(a.scalar_type),
                      floating ? "floating-point value" : "integer", a.scalar_type, i));
    }
  }
  return probe;
}

// Compiles `source` + probe; throws UsageError for the first failed check, an unknown kernel, or a
// kernel that is not extern "C". A template that does not compile for other reasons is the
// configs' business (compile_error results): it is reported as a warning, unchecked.
void run_probe(const SpecFamily& family, const std::string& what, const std::string& program, const std::string& source,
               std::vector<std::string> options, const Probe& probe, const std::string& arch) {
  const std::string file = family.definition().file.string();
  const Compiled compiled =
      compile({program, source + "\n#line 1 \"cutune-argument-check\"\n" + probe.code, options, arch});
  if (!compiled.ok) {
    for (const std::string& kernel : probe.kernels)
      if (compiled.log.find("identifier \"" + kernel + "\" is undefined") != std::string::npos)
        throw UsageError(file + ": kernel '" + kernel + "' is not in " + what);
    for (const Check& check : probe.checks)
      if (compiled.log.find("\"" + check.tag + "\"") != std::string::npos) throw UsageError(check.message);
    for (const std::string& kernel : probe.kernels) {
      if (compiled.log.find("\"" + kernel + "\"") != std::string::npos &&
          compiled.log.find("cutune-argument-check") != std::string::npos)
        throw UsageError(file + ": kernel '" + kernel + "' in " + what +
                         " is overloaded or a template; cutune launches extern \"C\" kernels by name");
    }
    const auto first_error = compiled.log.find("error");
    std::cerr << "tune: warning: " << what << " does not compile with " << fmt::format("{}", fmt::join(options, " "))
              << ", so its kernels' arguments were not checked: "
              << compiled.log.substr(first_error == std::string::npos ? 0 : first_error, 300) << "\n";
    return;
  }
  const auto names = cubin_function_names(compiled.cubin);
  for (const std::string& kernel : probe.kernels) {
    if (std::find(names.begin(), names.end(), kernel) != names.end()) continue;
    std::string mangled;
    for (const auto& n : names)
      if (n.find(std::to_string(kernel.size()) + kernel) != std::string::npos) mangled = n;
    throw UsageError(file + ": kernel '" + kernel + "' in " + what + " has C++ linkage" +
                     (mangled.empty() ? "" : " (its symbol is " + mangled + ")") +
                     "; declare it extern \"C\": cutune launches kernels by their C names");
  }
}

}  // namespace

void check_spec_kernels(const SpecFamily& family, const Space& space, const Problem& problem, const std::string& arch) {
  const SpecDefinition& spec = family.definition();
  const std::vector<Config> configs = space.enumerate();
  if (!configs.empty()) {
    const CompileRequest request = compile_request(family, family.source(), space, configs.front(), problem, arch);
    run_probe(family, "the template " + spec.source_path.string(), request.program_name, request.source,
              request.options, probe_for(family, spec.steps, problem), arch);
  }
  if (const auto reference = family.gpu_reference(problem))
    run_probe(family, "the reference " + spec.reference->source.string(), reference->program_name, reference->source,
              reference->options, probe_for(family, spec.reference->steps, problem), arch);
}

void check_spec_family(const SpecFamily& family, const Space& space, const std::vector<Problem>& problems,
                       const std::string& arch) {
  if (space.enumerate().empty())
    throw UsageError(family.definition().file.string() + ": no config satisfies the constraints");
  family.check_plans(problems, space);
  if (!problems.empty()) check_spec_kernels(family, space, problems.front(), arch);
}

}  // namespace cutune
