"""The one exception type of the package, and Kernel Tuner's failure markers.

Kept in a module of its own so that every other module can import it without import cycles.
"""


class CutuneError(Exception):
    """A cutune call that cannot go on: bad arguments, or `tune` refusing its input.

    ``str(error)`` is one line. When `tune` refused the input (exit code 2), it is exactly the text
    after ``tune: error: `` on its stderr, so Python users read the same message as CLI users.
    ``exit_code`` is tune's exit code (2: bad input, 3: no CUDA driver or GPU, 1: an unexpected
    failure), or None when the Python layer found the problem before running tune.
    """

    def __init__(self, message, exit_code=None, stderr=""):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr


class ErrorConfig(str):
    """The "time" of a config that has no time, as Kernel Tuner marks it.

    Kernel Tuner's markers are str subclasses that print as their class name, so code written for
    Kernel Tuner tests ``isinstance(r["time"], float)`` (its own get_best_config does) or prints the
    name. Ours also compare equal to the name (Kernel Tuner's hold an empty string), so that
    ``r["time"] == "CompilationFailedConfig"`` and a json.dump of the results say what happened.
    """

    def __new__(cls):
        return super().__new__(cls, cls.__name__)

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    """Ruled out before it ran (Kernel Tuner: by restrictions). cutune stores no such configs."""


class CompilationFailedConfig(ErrorConfig):
    """NVRTC refused it (cutune status compile_error)."""


class RuntimeFailedConfig(ErrorConfig):
    """It compiled but did not run correctly: load_error, launch_error, runtime_fault, timeout,
    wrong_result (the mapping `tune db export-kt` uses too)."""
