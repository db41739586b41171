#!/usr/bin/env python3
"""Checks the style limits of the C++ sources: no file over MAX_FILE lines, no function over MAX_FUNC lines.

    scripts/check_sizes.py [DIR...]        (default: src/ beside this script)
    scripts/check_sizes.py --self-test     (the parser on small cases)

Prints one line per offender ("path:line: function 'name' is N lines (limit M)") and exits 1 if there is any,
else prints a one-line summary and exits 0. Runs in well under a second (ctest: style.sizes).
Known offenders waiting for another change are listed in ALLOWED, with the reason, and printed every run.

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
# Known offenders, each with why it is not split here; printed on every run so they stay in sight. Remove an
# entry once its function is split (an entry that no longer matches an offender is reported too).
ALLOWED = {}
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


def without_templates(head):
    """The head with its template<...> parameter lists removed (they may say `class`)."""
    out, i = [], 0
    for m in re.finditer(r"\btemplate\s*<", head):
        if m.start() < i:
            continue
        out.append(head[i:m.start()])
        depth, j = 0, m.end() - 1
        while j < len(head):
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            j += 1
            if depth == 0:
                break
        i = j
    out.append(head[i:])
    return "".join(out)


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
            head = without_templates(code[head_start:i])
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


def check_file(path, rel, allowed_hits):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    problems = []
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE:
        problems.append(f"{path}:1: file is {lines} lines (limit {MAX_FILE})")
    for name, first, last in functions(strip_code(text)):
        length = last - first + 1
        if length > MAX_FUNC and (rel, name) in ALLOWED:
            allowed_hits.append(f"{rel}:{first}: function '{name}' is {length} lines, allowed: {ALLOWED[(rel, name)]}")
        elif length > MAX_FUNC:
            problems.append(f"{path}:{first}: function '{name}' is {length} lines (limit {MAX_FUNC})")
    return problems


def main(argv):
    repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    roots = argv[1:] or [os.path.join(repo, "src")]
    problems, allowed_hits, files = [], [], 0
    for root in roots:
        if not os.path.exists(root):
            print(f"check_sizes: {root}: no such file or folder", file=sys.stderr)
            return 2
        paths = [root] if os.path.isfile(root) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(EXTENSIONS))
        for p in paths:
            files += 1
            rel = os.path.relpath(os.path.abspath(p), repo)
            problems += check_file(p, rel, allowed_hits)
    for p in problems:
        print(p)
    for a in allowed_hits:
        print(a)
    if not argv[1:] and len(allowed_hits) < len(ALLOWED):
        print(f"check_sizes: {len(ALLOWED) - len(allowed_hits)} entries of ALLOWED no longer needed: remove them")
        problems.append("stale ALLOWED")
    if problems:
        print(f"check_sizes: {len(problems)} over the limits in {files} files (files <= {MAX_FILE} lines, "
              f"functions <= {MAX_FUNC}): split them")
        return 1
    allowed = f" ({len(allowed_hits)} allowed, listed above)" if allowed_hits else ""
    print(f"check_sizes: {files} files, none over {MAX_FILE} lines, no function over {MAX_FUNC} lines{allowed}")
    return 0


def self_test():
    """The parser on small cases (ctest: style.sizes_self_test): lengths, and braces that are no functions."""
    body = lambda n: "".join(f"  x += {i};\n" for i in range(n - 2))
    cases = {
        "int f(int x) {\n" + body(80) + "}\n": [("f", 80)],
        "namespace a {\nint g() {\n" + body(81) + "}\n}\n": [("g", 81)],
        # template line not counted; braces in strings, comments, raw strings and brace-init members ignored
        "template <class T>\nT h(T t) {\n  auto s = \"{{\";\n  // }\n  auto r = R\"x({)x\";\n  return t;\n}\n": [("h", 6)],
        "struct S {\n  S(int v) : a_{v}, b_(v) {\n    if (v) {\n      ++a_;\n    }\n  }\n  int a_, b_;\n};\n": [("S", 5)],
        "const int kT[] = {1, 2};\nclass C {\n  void m() const {\n  }\n};\n": [("m", 2)],
        "#if defined(X)\n#endif\nvoid k() {\n  auto l = [](int a) {\n    return a;\n  };\n}\n": [("k", 5)],
    }
    bad = 0
    for code, want in cases.items():
        got = [(n, last - first + 1) for n, first, last in functions(strip_code(code))]
        if got != want:
            bad += 1
            print(f"check_sizes self-test: {want} expected, got {got} for:\n{code}")
    print("check_sizes self-test: " + ("FAILED" if bad else f"{len(cases)} cases pass"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main(sys.argv))
