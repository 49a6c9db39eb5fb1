#!/usr/bin/env python3
"""The house's size limits, checked in seconds: no C file over 800 lines and no
function over 120 (from its signature's first line to its closing brace), in
every C file `make lint` covers (the Makefile passes them: LINT_SRCS).

    scripts/house.py FILE.c FILE.h ...

Prints one line per file or function over its limit, with where it is and what
to do, and exits 1; exits 0 and prints nothing when all are within. The
sources are clang-formatted (`make lint-format` checks that first), so a
function is what .clang-format's Linux braces make of one: a line that is
exactly "{" after its signature, ended by the next line that is exactly "}".
"""

import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120


def functions(lines):
    """[(name, first line, last line)], 1-based, of every function definition."""
    out, start = [], None
    for i, line in enumerate(lines):
        if line == "{" and i > 0:
            # The signature: back over the lines that continue it (indented
            # parameters, return type on a line of its own), never past a
            # blank line, a comment, a directive or the end of another item.
            j = i - 1
            while j > 0 and lines[j - 1][:1] not in ("", "}", "#", "/", " ", "*") \
                    and not lines[j - 1].endswith((";", "*/")):
                j -= 1
            start = j
        elif line == "}" and start is not None:
            m = re.search(r"(\w+)\s*\(", " ".join(lines[start:i]))
            out.append((m.group(1) if m else "?", start + 1, i + 1))
            start = None
    return out


def check(path):
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    bad = []
    if len(lines) > MAX_FILE_LINES:
        bad.append(f"{path}: {len(lines)} lines, over {MAX_FILE_LINES}: split it by concern "
                   f"(one module a .c/.h pair: docs/DESIGN.md)")
    for name, first, last in functions(lines):
        n = last - first + 1
        if n > MAX_FUNCTION_LINES:
            bad.append(f"{path}:{first}: {name}() is {n} lines, over {MAX_FUNCTION_LINES}: "
                       f"give its steps functions of their own")
    return bad


def main(argv):
    bad = [b for path in argv[1:] for b in check(path)]
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
