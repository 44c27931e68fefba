"""A small TOML writer for the kernel specs this package generates.

Python's tomllib (3.11+) only reads and Debian ships no TOML writer, so this writes the subset a
kernel spec needs: strings, integers, finite floats, booleans, arrays, inline tables, tables and
arrays of tables. Strings are TOML basic strings with every character TOML forbids raw escaped,
so any text (a Windows path, a label with quotes, a kernel name) reads back unchanged; the unit
tests read every generated spec back with tomllib.
"""

import math
import re

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")

# TOML basic strings: '"' and '\' must be escaped, and so must every control character except tab
# (U+0000-U+001F, U+007F). The short forms exist for the common ones.
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def string(text):
    """A TOML basic string holding ``text`` exactly."""
    out = ['"']
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u%04X" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def key(name):
    """A key: bare when TOML allows it, else quoted."""
    return name if _BARE_KEY.match(name) else string(name)


def value(v):
    """An inline TOML value for a Python bool, int, float, str, list/tuple or dict."""
    # bool first: it is an int subclass.
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("TOML value %r: only finite floats are written" % v)
        # repr is the shortest text that reads back as the same double; TOML needs a '.' or an
        # exponent to see a float, which repr always has for finite values ("1.0", "1e-06").
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(item) for item in v) + "]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "{ " + ", ".join(key(k) + " = " + value(item) for k, item in v.items()) + " }"
    raise TypeError("no TOML form for %r (%s)" % (v, type(v).__name__))


class Document:
    """Builds a TOML document in order: top-level keys first, then tables.

    TOML requires every top-level key before the first table header, so ``top`` refuses a key once
    a table has begun rather than write a file that means something else.
    """

    def __init__(self):
        self._lines = []
        self._in_table = False

    def comment(self, text):
        for line in text.splitlines() or [""]:
            self._lines.append(("# " + line).rstrip())

    def blank(self):
        self._lines.append("")

    def top(self, name, v, comment=None):
        if self._in_table:
            raise ValueError("top-level key %r after a table" % name)
        self._pair(name, v, comment)

    def table(self, name, items):
        """``[name]`` with its key/value pairs (a dict, in order)."""
        self._in_table = True
        self._lines.append("[" + ".".join(key(part) for part in name.split(".")) + "]")
        for k, v in items.items():
            self._pair(k, v)

    def array_table(self, name, items):
        """One ``[[name]]`` element with its key/value pairs."""
        self._in_table = True
        self._lines.append("[[" + key(name) + "]]")
        for k, v in items.items():
            self._pair(k, v)

    def _pair(self, name, v, comment=None):
        line = key(name) + " = " + value(v)
        if comment:
            line += "  # " + comment
        self._lines.append(line)

    def text(self):
        return "\n".join(self._lines) + "\n"
