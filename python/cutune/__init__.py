"""cutune from Python: Kernel Tuner's ``tune_kernel`` on cutune's engine.

A Kernel Tuner script runs on cutune after changing only its import::

    from cutune import tune_kernel          # was: from kernel_tuner import tune_kernel
    results, env = tune_kernel("vector_add", kernel_string, size, [c, a, b, n], {"block_size_x": [128, 256]},
                               answer=[a + b, None, None, None])

Design (decided by the project lead)
------------------------------------
A thin pure-Python layer that drives the ``tune`` executable in a subprocess. ``tune_kernel``
writes a kernel spec (TOML, docs/kernel-spec.md) with the kernel source and one ``.npy`` file per
array into a temporary folder, runs ``tune --kernel-file <spec>``, and reads the results back
from the SQLite database with Python's sqlite3 module. Why:

- no extension module to build per Python version (the CPU machines have 3.11, the GPU machine
  3.12): the package is plain Python plus numpy, and works wherever ``tune`` runs;
- the engine already isolates GPU work in worker processes (a faulting kernel cannot take the
  Python process down with it);
- the CLI's error contract becomes Python's: tune's one ``tune: error: <message>`` line and exit
  code 2 (bad input) raise ``CutuneError`` carrying exactly that message; exit code 3 (no CUDA
  driver or GPU) raises ``CutuneError`` too.

``tune`` is found through $CUTUNE_TUNE, else beside this package when installed
(``<prefix>/bin/tune``), else on PATH.

What is supported, and how it differs from Kernel Tuner
-------------------------------------------------------
- kernel_source: CUDA code or a file name (files beside it can be #included). cutune launches
  kernels by unmangled name; as Kernel Tuner's CUDA backends do, a source without ``extern "C"``
  anywhere is wrapped in ``extern "C" { ... }``, so the kernels Kernel Tuner finds, cutune finds.
- problem_size: an int or up to 3 ints. arguments: numpy arrays (int32, uint32, int64, float32,
  float64) and numpy scalars; Python ints and floats are taken as int32 and float32 (Kernel
  Tuner asks for numpy scalars; the engine checks each scalar's size against the kernel).
- tune_params: integer lists, or lists of floats/strings/bools, whose ``str()`` is the #define
  value as in Kernel Tuner. Results give the values back as they were given.
- grid_div_x/y/z, block_size_names, restrictions (strings, translated to cutune's expressions and
  checked to mean the same; functions evaluated in Python), answer + atol (numpy.allclose's
  rule: |actual - expected| <= 1e-5 |expected| + atol for floats, exact for integers),
  compiler_options, cmem_args (written as the __constant__ symbol's initialiser), smem_args
  ({"size": int or expression}), metrics, cache (a Kernel Tuner cache file, written after tuning
  with ``tune db export-kt``), strategy (brute_force, random_sample, genetic_algorithm, bayes_opt,
  simulated_annealing, greedy_ils, or any cutune strategy name), strategy_options (max_fevals,
  time_limit, seed), iterations (a fixed number of timed samples; left out, cutune samples until
  the mean is known to 0.5 %, between 10 and 200 samples).
- verify= (a Python check function) cannot run inside the engine and raises CutuneError, as do
  other Kernel Tuner options given a value other than their default (texmem_args, defines,
  observers, objective, ...).
- cutune's own options: ``database=`` (default: tune's, i.e. $CUTUNE_DB or
  ~/.local/share/cutune/cutune.db), ``seed=``, ``compile_only=True`` with ``arch="sm_90"``
  (compile every config, no GPU needed), ``spec_dir=`` (write the spec there and keep it, to rerun
  it with ``tune --kernel-file`` by hand).

Results
-------
``(results, env)`` as Kernel Tuner returns them. ``results``: one dict per config stored for this
kernel source, problem and device -- cutune resumes from its database, so configs measured by
earlier calls are included and not measured again -- holding the tune parameters, ``time`` (the
median in ms; Kernel Tuner's is a mean of 7 runs), ``compile_time``, ``verification_time``,
``benchmark_time`` (ms), ``timestamp``, metrics, and ``cutune``: status, error text, min/max/stdev
of the samples, sample count, whether the result was verified. A failed config's ``time`` is
Kernel Tuner's marker: ``CompilationFailedConfig`` (compile_error) or ``RuntimeFailedConfig``
(load_error, launch_error, runtime_fault, timeout, wrong_result), str subclasses that compare equal
to their names. Kernel Tuner's ``times`` (every sample) is left out: cutune keeps statistics, not
samples. Without ``answer`` nothing is verified, and ``env["verified"]`` says so.

The input data are not part of a result's identity (as in a Kernel Tuner cache file): a second
call with other arrays of the same sizes resumes from the first call's measurements.
"""

import os
import re
import sys
import tempfile

from ._errors import CompilationFailedConfig, CutuneError, ErrorConfig, InvalidConfig, RuntimeFailedConfig
from . import _run
from . import _spec

__version__ = "0.1.0"

__all__ = ["tune_kernel", "compile_kernel", "CutuneError", "ErrorConfig", "InvalidConfig", "CompilationFailedConfig",
           "RuntimeFailedConfig", "__version__"]

# Kernel Tuner strategy names -> cutune's. Kernel Tuner's default (None) is brute force; cutune's
# default (bayes_opt) also covers the whole space when no budget is given.
_STRATEGIES = {"brute_force": "brute_force", "random_sample": "random_sampling",
               "genetic_algorithm": "genetic_algorithm", "simulated_annealing": "simulated_annealing",
               "greedy_ils": "greedy_ils", "bayes_opt": "bayes_opt"}
_CUTUNE_STRATEGIES = ("bayes_opt", "brute_force", "random_sampling", "greedy_ils", "simulated_annealing", "genetic_algorithm",
                      "auc_bandit", "nlopt_sbplx", "nlopt_neldermead", "nlopt_bobyqa", "nlopt_direct_l", "nlopt_crs2",
                      "nlopt_isres")

# Kernel Tuner options that cutune does not implement, with the values that mean "not used":
# passing one of those is fine (scripts often spell out defaults), anything else is refused by name.
_UNSUPPORTED_DEFAULTS = {"platform": (0, None), "texmem_args": (None,), "compiler": (None,), "defines": (None,),
                         "log": (None,), "simulation_mode": (False, None), "observers": (None, []),
                         "objective": (None, "time"), "objective_higher_is_better": (None, False)}


def _unsupported(given, extra):
    """CutuneError naming every Kernel Tuner option given a value cutune cannot honour, and every
    keyword that is no option at all."""
    refused = [name for name, value in given.items()
               if not any(value is d or (d is not None and type(value) is type(d) and value == d)
                          for d in _UNSUPPORTED_DEFAULTS[name])]
    if refused:
        raise CutuneError("Kernel Tuner option(s) not supported by cutune: %s" % ", ".join(sorted(refused)))
    if extra:
        raise CutuneError("unknown option(s), neither Kernel Tuner's nor cutune's: %s" % ", ".join(sorted(extra)))


def _strategy_args(strategy, strategy_options, seed):
    argv = []
    if strategy is not None:
        if strategy in _STRATEGIES:
            argv += ["--strategy", _STRATEGIES[strategy]]
        elif strategy in _CUTUNE_STRATEGIES:
            argv += ["--strategy", strategy]
        else:
            raise CutuneError("strategy %r is not supported; Kernel Tuner names: %s; cutune names: %s"
                              % (strategy, ", ".join(sorted(_STRATEGIES)), ", ".join(_CUTUNE_STRATEGIES)))
    options = dict(strategy_options or {})
    unknown = sorted(set(options) - {"max_fevals", "time_limit", "seed"})
    if unknown:
        raise CutuneError("strategy_options not supported by cutune: %s (supported: max_fevals, time_limit, seed)"
                          % ", ".join(unknown))
    if "max_fevals" in options:
        n = options["max_fevals"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise CutuneError("strategy_options max_fevals must be a positive int, not %r" % (n,))
        argv += ["--max-evals", str(n)]
    if "time_limit" in options:
        t = options["time_limit"]
        if not isinstance(t, (int, float)) or isinstance(t, bool) or t <= 0:
            raise CutuneError("strategy_options time_limit must be a positive number of seconds, not %r" % (t,))
        argv += ["--time-limit", repr(float(t))]
    if "seed" in options:
        if seed is not None and seed != options["seed"]:
            raise CutuneError("seed=%r and strategy_options seed=%r disagree" % (seed, options["seed"]))
        seed = options["seed"]
    if seed is not None:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise CutuneError("seed must be an int >= 0, not %r" % (seed,))
        argv += ["--seed", str(seed)]
    return argv


def _replace_param_occurrences(text, values):
    # Kernel Tuner's rule for string metrics: each word that names a value is replaced by its text.
    return "".join(str(values[part]) if part in values else part for part in re.split("([a-zA-Z0-9_]+)", text))


def _apply_metrics(results, metrics):
    if metrics is None:
        return
    if not isinstance(metrics, dict):
        raise CutuneError("metrics must be a dict of name -> expression string or function")
    for result in results:
        if not isinstance(result["time"], float):
            continue
        for name, how in metrics.items():
            if isinstance(how, str):
                result[name] = eval(_replace_param_occurrences(how, result))
            elif callable(how):
                result[name] = how(result)
            else:
                raise CutuneError("metric %r must be an expression string or a function" % name)


def _config_string(result, keys):
    # Kernel Tuner's get_config_string: floats with 3 decimals, time in ms.
    parts = []
    for k in keys:
        if k not in result:
            continue
        v = result[k]
        text = "%.3f" % v if isinstance(v, float) else str(v)
        parts.append("%s=%s%s" % (k, text, "ms" if k == "time" and isinstance(v, float) else ""))
    return ", ".join(parts)


def _best(results):
    timed = [r for r in results if isinstance(r["time"], float)]
    return min(timed, key=lambda r: r["time"]) if timed else None


def _prepare(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x, grid_div_y, grid_div_z,
             restrictions, answer, atol, verify, lang, block_size_names, compiler_options, cmem_args, smem_args):
    if verify is not None:
        raise CutuneError("verify= (a Python check function) is not supported: cutune verifies inside its engine; "
                          "give answer= (and atol=) instead")
    if lang is not None and str(lang).upper() != "CUDA":
        raise CutuneError("lang=%r is not supported: cutune tunes CUDA kernels" % (lang,))
    return _spec.build_spec(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=grid_div_x,
                            grid_div_y=grid_div_y, grid_div_z=grid_div_z, restrictions=restrictions, answer=answer,
                            atol=atol, block_size_names=block_size_names, compiler_options=compiler_options,
                            cmem_args=cmem_args, smem_args=smem_args)


class _SpecFolder:
    """A temporary folder for the spec, or the caller's ``spec_dir`` (kept)."""

    def __init__(self, spec_dir):
        self._temporary = None if spec_dir else tempfile.TemporaryDirectory(prefix="cutune-spec-")
        self.path = os.path.abspath(spec_dir) if spec_dir else self._temporary.name

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self._temporary is not None:
            self._temporary.cleanup()


def compile_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                   grid_div_z=None, restrictions=None, answer=None, atol=1e-6, lang=None, block_size_names=None,
                   compiler_options=None, cmem_args=None, smem_args=None, arch="sm_90", spec_dir=None, quiet=True,
                   **options):
    """Compiles every config with NVRTC for ``arch`` (no GPU needed) and says how that went.

    Returns {"arch", "compiled", "failed", "failures": [{"config": "name=value,...", "log": ...}],
    "ok": bool, "output": tune's stdout}. Failed compiles are a result, not an exception; bad input
    raises CutuneError.
    """
    _unsupported({k: v for k, v in options.items() if k in _UNSUPPORTED_DEFAULTS},
                 [k for k in options if k not in _UNSUPPORTED_DEFAULTS])
    spec = _prepare(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x, grid_div_y, grid_div_z,
                    restrictions, answer, atol, None, lang, block_size_names, compiler_options, cmem_args, smem_args)
    if not isinstance(arch, str) or not re.match(r"^sm_\d+[a-z]?$", arch):
        raise CutuneError("arch must look like sm_90, not %r" % (arch,))
    tune = _run.find_tune()
    with _SpecFolder(spec_dir) as folder:
        path = spec.write(folder)
        code, out, err = _run.run_checked([tune, "--kernel-file", path, "--compile-only", "--arch", arch],
                                          echo=not quiet, allowed=(0, 1))
    summary = _run.compile_summary(out, err)
    if code == 1 and summary["failed"] == 0:
        raise _run.error_for(code, err)  # exit 1 without failed configs: an unexpected failure
    summary.update({"arch": arch, "ok": code == 0, "output": out})
    return summary


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=None, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=False, observers=None,
                objective=None, objective_higher_is_better=None, *, database=None, seed=None, compile_only=False,
                arch="sm_90", spec_dir=None, **options):
    """Tunes a CUDA kernel as Kernel Tuner's tune_kernel does, on cutune's engine.

    Returns ``(results, env)``; see the package documentation for what they hold and for how each
    option maps. Raises CutuneError (one line) for bad input, whether found here or by tune.

    ``iterations``: Kernel Tuner's default is 7 runs averaged; left as None, cutune's stopping
    rule decides (10 to 200 samples, until the mean is known to 0.5 %), and a number fixes the
    sample count (``tune --samples``).

    The positional order is Kernel Tuner's; cutune's own options are keyword-only.
    """
    _unsupported({"platform": platform, "texmem_args": texmem_args, "compiler": compiler, "defines": defines,
                  "log": log, "simulation_mode": simulation_mode, "observers": observers, "objective": objective,
                  "objective_higher_is_better": objective_higher_is_better}, list(options))
    if verify is not None:
        raise CutuneError("verify= (a Python check function) is not supported: cutune verifies inside its engine; "
                          "give answer= (and atol=) instead")
    if compile_only:
        summary = compile_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x, grid_div_y,
                                 grid_div_z, restrictions, answer, atol, lang, block_size_names, compiler_options,
                                 cmem_args, smem_args, arch=arch, spec_dir=spec_dir, quiet=quiet)
        env = {"kernel_name": kernel_name, "problem_size": problem_size, "tune_params": tune_params, "arch": arch,
               "compile_only": summary, "cutune_version": __version__}
        return [], env

    spec = _prepare(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x, grid_div_y, grid_div_z,
                    restrictions, answer, atol, verify, lang, block_size_names, compiler_options, cmem_args, smem_args)
    if not isinstance(device, int) or isinstance(device, bool) or device < 0:
        raise CutuneError("device must be a CUDA device ordinal (an int >= 0), not %r" % (device,))
    if iterations is not None and (not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1):
        raise CutuneError("iterations must be a positive int, not %r" % (iterations,))
    strategy_argv = _strategy_args(strategy, strategy_options, seed)
    db = _run.database_path(database)
    cache_path = None
    if cache is not None:
        cache_path = os.path.abspath(_run.cache_file_name(cache))
        _run.check_cache_file(cache_path)  # before tuning, not after an hour of it
    tune = _run.find_tune()

    with _SpecFolder(spec_dir) as folder:
        path = spec.write(folder)
        argv = [tune, "--kernel-file", path, "--device", str(device), "--db", db] + strategy_argv
        if iterations is not None:
            argv += ["--samples", str(iterations)]
        if quiet:
            argv.append("--quiet")
        _, out, _ = _run.run_checked(argv, echo=not quiet)
    run_id = _run.run_id_of(out)
    results, info = _run.read_results(db, run_id, spec)
    _apply_metrics(results, metrics)

    device_row, run_row = info["device"], info["run"]
    if cache_path is not None:
        if not info["problem_found"]:
            raise CutuneError("no results of problem %s were stored, so there is no cache file to write" % spec.problem_key)
        _run.run_checked([tune, "db", "export-kt", cache_path, "--family", spec.family, "--device", device_row["uuid"],
                          "--problem", spec.problem_key, "--db", db], echo=False)

    best = _best(results)
    env = {
        "kernel_name": kernel_name,
        "problem_size": problem_size,
        "tune_params": tune_params,
        "iterations": iterations,
        "compiler_options": list(compiler_options or []),
        "device_name": device_row.get("name"),
        "device_uuid": device_row.get("uuid"),
        "compute_capability": "%s%s" % (device_row.get("cc_major"), device_row.get("cc_minor")),
        "strategy": run_row.get("strategy"),
        "strategy_options": dict(strategy_options or {}),
        "seed": run_row.get("seed"),
        "database": db,
        "run_id": run_id,
        "problem_key": spec.problem_key,
        "cutune_version": run_row.get("tool_version") or __version__,
        "verified": spec.verified,
        "best_config": best,
    }
    if cache_path is not None:
        env["cache"] = cache_path

    if verbose:
        keys = list(_param_names(spec)) + ["time"] + list(metrics or {})
        for r in results:
            print(_config_string(r, keys))
    if not quiet:
        if best is not None:
            print("best performing configuration:")
            print(_config_string(best, list(_param_names(spec)) + ["time"] + list(metrics or {})))
        else:
            print("no results to report")
        if not spec.verified:
            print("note: no answer= was given, so the results are not verified", file=sys.stderr)
        sys.stdout.flush()
    return results, env


def _param_names(spec):
    return [p.name for p in spec.params]
