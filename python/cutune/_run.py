"""Running `tune` in a subprocess and reading its results back from the SQLite database.

The CLI's contract (README.md, docs/kernel-spec.md) is what this module relies on:
- exit 0: success; stdout has ``run <id>: <k> evaluated, <m> already stored...``;
- exit 1: an unexpected failure, or with `tune compile` (or its old form --compile-only): some config failed
  to compile;
- exit 2: bad input, with one ``tune: error: <message>`` line on stderr, and nothing stored;
- exit 3: no CUDA driver or no GPU.
"""

import gzip
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading

from ._errors import CompilationFailedConfig, CutuneError, RuntimeFailedConfig

_ERROR_PREFIX = "tune: error: "


# ---- finding tune and the database --------------------------------------------------------------

def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_tune():
    """$CUTUNE_TUNE, else the `tune` installed beside this package, else `tune` on PATH."""
    configured = os.environ.get("CUTUNE_TUNE")
    if configured:
        if not _executable(configured):
            raise CutuneError("CUTUNE_TUNE=%s is not an executable file" % configured)
        return configured
    # Installed by cmake: <prefix>/<libdir>/python3/site-packages/cutune with <prefix>/bin/tune,
    # where <libdir> is "lib" or, on Debian with prefix /usr, "lib/<multiarch>". Only that layout
    # is trusted: walking up from anywhere could find an unrelated program called tune.
    package = os.path.dirname(os.path.abspath(__file__))
    site = os.path.dirname(package)
    python = os.path.dirname(site)
    if os.path.basename(site) == "site-packages" and os.path.basename(python).startswith("python3"):
        libdir = os.path.dirname(python)
        for prefix in (os.path.dirname(libdir), os.path.dirname(os.path.dirname(libdir))):
            candidate = os.path.join(prefix, "bin", "tune")
            if _executable(candidate):
                return candidate
    found = shutil.which("tune")
    if found:
        return found
    raise CutuneError("cannot find cutune's `tune` executable: set CUTUNE_TUNE to its path (in a build tree: "
                      "build/bin/tune), or install cutune (cmake --install) so that <prefix>/bin/tune sits beside this "
                      "package, or put tune on PATH")


def database_path(database=None):
    """The database tune would use, made explicit: --db, $CUTUNE_DB, $XDG_DATA_HOME, ~/.local/share.

    The same rule as db/store.cpp's default_database_path (empty variables count as unset). We
    always pass the result as --db, so tune and this module can never disagree on it.
    """
    if database:
        return os.path.abspath(os.fspath(database))
    if os.environ.get("CUTUNE_DB"):
        return os.path.abspath(os.environ["CUTUNE_DB"])
    if os.environ.get("XDG_DATA_HOME"):
        return os.path.join(os.environ["XDG_DATA_HOME"], "cutune", "cutune.db")
    if os.environ.get("HOME"):
        return os.path.join(os.environ["HOME"], ".local", "share", "cutune", "cutune.db")
    return os.path.abspath("cutune.db")


# ---- running it ---------------------------------------------------------------------------------

def _pump(stream, sink, keep, hide_errors):
    """Copies a child's stream to ``sink`` as it comes (``None``: nowhere), keeping every byte.

    Read in lines split on '\\n' only, so a progress line redrawn with '\\r' still redraws.
    ``hide_errors``: lines starting with "tune: error: " are kept but not shown, since they
    become the CutuneError's message and would otherwise appear twice.
    """
    for line in iter(stream.readline, b""):
        keep.append(line)
        if sink is None or (hide_errors and line.startswith(_ERROR_PREFIX.encode())):
            continue
        try:
            if hasattr(sink, "buffer"):
                sink.buffer.write(line)
            else:  # a replaced stream (Jupyter, a test's StringIO) takes text
                sink.write(line.decode("utf-8", "replace"))
            sink.flush()
        except (OSError, ValueError):
            pass
    stream.close()


def run(argv, echo=True):
    """Runs tune; (exit code, stdout, stderr). Echoes its output live unless ``echo`` is False.

    Ctrl-C reaches tune too (same process group); tune then stops after the config in flight, with
    every finished result committed, so we wait for it and re-raise KeyboardInterrupt. A second
    Ctrl-C kills it.
    """
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise CutuneError("cannot run %s: %s" % (argv[0], e.strerror or e)) from None
    out, err = [], []
    threads = [threading.Thread(target=_pump, args=(child.stdout, sys.stdout if echo else None, out, False)),
               threading.Thread(target=_pump, args=(child.stderr, sys.stderr if echo else None, err, True))]
    for t in threads:
        t.daemon = True
        t.start()
    try:
        code = child.wait()
    except KeyboardInterrupt:
        try:
            child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGKILL)
            child.wait()
        raise
    finally:
        for t in threads:
            t.join()
    return code, b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace")


def error_for(code, stderr):
    """The CutuneError for a failed tune: its own message when it printed one."""
    message = None
    for line in stderr.splitlines():
        if line.startswith(_ERROR_PREFIX):
            message = line[len(_ERROR_PREFIX):]
    tail = " | ".join(line for line in stderr.strip().splitlines()[-3:])
    if message is None:
        if code == 3:
            message = "no CUDA driver or no GPU (tune exited with code 3)"
        elif code < 0:
            message = "tune was killed by signal %d%s" % (-code, (": " + tail) if tail else "")
        else:
            message = "tune failed with exit code %d%s" % (code, (": " + tail) if tail else "")
    return CutuneError(message, exit_code=code, stderr=stderr)


def run_checked(argv, echo=True, allowed=(0,)):
    code, out, err = run(argv, echo)
    if code not in allowed:
        raise error_for(code, err)
    return code, out, err


def run_id_of(stdout):
    match = re.search(r"^run (\d+):", stdout, re.M)
    if not match:
        raise CutuneError("tune finished but printed no 'run <id>:' line, so its results cannot be found")
    return int(match.group(1))


def compile_summary(stdout, stderr):
    """Counts from the lines '... <k> compiled, <f> failed (...)' and the configs that failed."""
    compiled = sum(int(n) for n in re.findall(r"(\d+) compiled,", stdout))
    failed = sum(int(n) for n in re.findall(r"(\d+) failed", stdout))
    failures = []
    current = None
    for line in stderr.splitlines():
        match = re.match(r"^FAILED (.*):$", line)
        if match:
            current = {"config": match.group(1), "log": ""}
            failures.append(current)
        elif current is not None:
            current["log"] += line + "\n"
    return {"compiled": compiled, "failed": failed, "failures": failures}


# ---- reading results ----------------------------------------------------------------------------

# Our statuses as Kernel Tuner's failure markers: the same mapping as `tune db export-kt`, so the
# result dicts and an exported cache file agree. Kernel Tuner's InvalidConfig means "ruled out
# by a restriction before running"; cutune never stores such configs.
_FAILURES = {"compile_error": CompilationFailedConfig}


def failure_marker(status):
    return _FAILURES.get(status, RuntimeFailedConfig)()


def _connect(path):
    if not os.path.exists(path):
        raise CutuneError("tune reported a run but there is no database at %s" % path)
    connection = sqlite3.connect(path, timeout=10.0)
    connection.row_factory = sqlite3.Row
    return connection


def read_results(db_path, run_id, spec):
    """(results, info): Kernel Tuner-style result dicts and what env needs, for the run's device,
    template and problem: configs stored by earlier calls included, restricted to the current
    tune_params and restrictions."""
    connection = _connect(db_path)
    try:
        run_row = connection.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if run_row is None:
            raise CutuneError("run %d is not in %s" % (run_id, db_path))
        device = connection.execute("SELECT * FROM devices WHERE id = ?", (run_row["device_id"],)).fetchone()
        problem = connection.execute("SELECT id FROM problems WHERE family = ? AND key = ?",
                                     (spec.family, spec.problem_key)).fetchone()
        columns = {row[1] for row in connection.execute("PRAGMA table_info(results)")}
        rows = []
        if problem is not None:
            rows = connection.execute(
                "SELECT * FROM results WHERE device_id = ? AND template_id = ? AND problem_id = ? ORDER BY id",
                (run_row["device_id"], run_row["template_id"], problem["id"])).fetchall()
    finally:
        connection.close()

    results = []
    for row in rows:
        values = _config_values(row, spec)
        if values is None or not spec.accepts(values):
            continue  # measured under other tune_params or restrictions
        results.append(_result(row, values, columns, spec))
    info = {
        "run": dict(run_row),
        "device": dict(device) if device is not None else {},
        "problem_found": problem is not None,
    }
    return results, info


def _config_values(row, spec):
    """name -> value as the user gave it, or None when the row's config is not of this space."""
    try:
        config = json.loads(row["config_json"])
    except (TypeError, ValueError):
        config = None
    if not isinstance(config, dict) or not config:
        config = dict(item.split("=", 1) for item in row["config"].split(",") if "=" in item)
    if set(config) != {p.name for p in spec.params}:
        return None
    values = {}
    for p in spec.params:  # in tune_params order, as Kernel Tuner's result dicts are
        stored = config[p.name]
        if p.labelled:
            text = str(stored)
        elif isinstance(stored, int) or (isinstance(stored, str) and re.match(r"^-?\d+$", stored)):
            text = str(int(stored))
        else:
            return None
        if text not in p.by_text:
            return None
        values[p.name] = p.by_text[text]
    return values


def _ms(seconds):
    return None if seconds is None else float(seconds) * 1000.0


def _result(row, values, columns, spec):
    result = dict(values)
    status = row["status"]
    if status == "ok" and row["time_ms_median"] is not None:
        result["time"] = float(row["time_ms_median"])
    else:
        result["time"] = failure_marker(status)
    # "times" (Kernel Tuner's list of samples) is left out: cutune stores the samples' statistics,
    # not the samples, and a made-up list would give wrong spreads. They are under "cutune".
    result["compile_time"] = _ms(row["compile_s"])
    result["verification_time"] = _ms(row["verify_s"])
    result["benchmark_time"] = _ms(row["benchmark_s"])
    if row["gbs"] is not None:
        result["GB/s"] = float(row["gbs"])
    if row["gflops"] is not None:
        result["GFLOP/s"] = float(row["gflops"])
    result["timestamp"] = row["created_at"]
    verified = bool(row["verified"]) if "verified" in columns and row["verified"] is not None else spec.verified
    result["cutune"] = {
        "status": status,
        "error": row["error"],
        "time_min": row["time_ms_min"],
        "time_max": row["time_ms_max"],
        "time_stdev": row["time_ms_stdev"],
        "samples": row["samples"],
        "verified": verified and status == "ok",
        "run_id": row["run_id"],
        "config": row["config"],
    }
    return result


# ---- Kernel Tuner cache files -------------------------------------------------------------------

def cache_file_name(cache):
    """Kernel Tuner appends ".json" to a cache name that lacks it; cutune also writes .json.gz."""
    name = os.fspath(cache)
    return name if name.endswith((".json", ".json.gz")) else name + ".json"


def check_cache_file(path):
    """Refuses to overwrite a cache file that cutune did not write (Kernel Tuner's own, say)."""
    if not os.path.exists(path):
        return
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as e:
        raise CutuneError("cache file %s exists and cannot be read (%s); cutune would overwrite it" % (path, e)) from None
    if not isinstance(document, dict) or "cutune" not in document:
        raise CutuneError("cache file %s exists and was not written by cutune; cutune keeps its results in its "
                          "database and would overwrite the file: remove it or choose another name" % path)
