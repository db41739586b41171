#!/usr/bin/env python3
"""Checks the style limits of the C++ sources: no file over MAX_FILE lines, no function over MAX_FUNC lines.

    scripts/check_sizes.py [DIR...]        (default: src/ beside this script)

Prints one line per offender ("path:line: function 'name' is N lines (limit M)") and exits 1 if there is any,
else prints a one-line summary and exits 0. Runs in well under a second (ctest: style.sizes).

A function is a brace block opened outside any other function (at namespace or class level) whose head -- the
text since the previous ';', '{' or '}' -- has a parameter list and is not a class, struct, enum, union,
namespace or an initialiser ('= {'). Its length counts from the line of its name to the closing brace, so
lambdas and local classes count towards the function around them. Braces in comments, strings, character
literals and raw strings are ignored; macros that open blocks (PYBIND11_MODULE, TEST) count as functions.
"""
import os
import re
import sys

MAX_FILE = 500
MAX_FUNC = 80
EXTENSIONS = (".cpp", ".h", ".cu", ".cuh", ".hpp", ".cc")
NON_FUNCTION = re.compile(r"\b(class|struct|enum|union|namespace)\b")


def strip_code(text):
    """The text with comments and string/char literal contents blanked (newlines kept, so lines still count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    code = "".join(out)
    # Preprocessor lines (with their continuations) blanked too: their parentheses are no function heads.
    return re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"), code)


INIT_LIST = re.compile(r"\)\s*:[^;]*[\w>]\s*$")  # `) : a_(x), b_` -- the head before a brace initialiser
SPECIFIERS = re.compile(r"\b(const|noexcept|override|final|mutable|try)\s*$")


def functions(code):
    """(name, first line, last line) of each outermost function body in stripped code."""
    found = []
    stack = []  # per open brace: True when it is a function body or inside one
    head_start = 0  # offset where the current head (text since the last ; { }) begins
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";":
            head_start = i + 1
        elif c == "{":
            inside = bool(stack) and stack[-1] is not False
            head = code[head_start:i]
            if not inside and INIT_LIST.search(head) and not SPECIFIERS.search(head):
                stack.append("init")  # b_{y} in a constructor's initialiser list: the head goes on after it
                continue
            is_func = (not inside and "(" in head and not NON_FUNCTION.search(head.split("(")[0])
                       and not re.search(r"=\s*$", head) and not re.search(r"\b(class|struct)\b[^()]*$", head))
            if is_func:
                name_m = re.search(r"([~\w:<>]+)\s*\(", head)
                name = name_m.group(1) if name_m else "?"
                # The function starts at the line of its name (not at template<...> or blank lines before).
                first = line - head[name_m.start():].count("\n") if name_m else line
                stack.append((name, first))
            else:
                stack.append(True if inside else False)
            head_start = i + 1
        elif c == "}":
            top = stack.pop() if stack else False
            if isinstance(top, tuple):
                found.append((top[0], top[1], line))
            if top != "init":
                head_start = i + 1
    return found


def check_file(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    problems = []
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE:
        problems.append(f"{path}:1: file is {lines} lines (limit {MAX_FILE})")
    for name, first, last in functions(strip_code(text)):
        length = last - first + 1
        if length > MAX_FUNC:
            problems.append(f"{path}:{first}: function '{name}' is {length} lines (limit {MAX_FUNC})")
    return problems


def main(argv):
    roots = argv[1:] or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]
    problems, files = [], 0
    for root in roots:
        if not os.path.exists(root):
            print(f"check_sizes: {root}: no such file or folder", file=sys.stderr)
            return 2
        paths = [root] if os.path.isfile(root) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(EXTENSIONS))
        for p in paths:
            files += 1
            problems += check_file(p)
    for p in problems:
        print(p)
    if problems:
        print(f"check_sizes: {len(problems)} over the limits in {files} files (files <= {MAX_FILE} lines, "
              f"functions <= {MAX_FUNC}): split them")
        return 1
    print(f"check_sizes: {files} files, none over {MAX_FILE} lines, no function over {MAX_FUNC} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
