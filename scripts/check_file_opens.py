#!/usr/bin/env python3
"""Checks that every file src/ reads is opened through the file gate (src/common/file_gate.h).

    scripts/check_file_opens.py [DIR...]     (default: src/ beside this script)
    scripts/check_file_opens.py --self-test  (the rules on small cases)

Why: a FIFO hangs a blocking open(), /dev/zero is read until memory runs out; the gate opens non-blocking,
checks on the descriptor that the path ends at a regular file and caps the size. Any other way of opening a
file for reading skips that, so it is refused here:
  - std::ifstream / std::fstream, and fopen() with a mode that reads ("r", "r+", "w+", "a+");
  - open()/::open() unless its flags name O_WRONLY, O_CREAT or O_DIRECTORY (writes, lock files, folders to fsync);
  - libarchive's archive_read_open_filename/_filenames (it opens by name; hand it a gated descriptor).
Writes (std::ofstream, fopen "w"/"a", open with O_WRONLY|O_CREAT) are fine. There is no allowlist: a new reader
goes through the gate. Prints one line per offender ("path:line: why") and exits 1 if any (ctest: style.file_opens).
"""
import os
import re
import sys

EXTENSIONS = (".cpp", ".h", ".cu", ".cuh", ".hpp", ".cc")
GATE = os.path.join("common", "file_gate.h")
RULES = [
    (re.compile(r"\bstd::(i|)fstream\b"), "std::ifstream/fstream reads around the file gate (common/file_gate.h)"),
    (re.compile(r"\bfopen\s*\([^;]*?\"(r|[rwa]\+)"), "fopen() for reading: use the file gate (common/file_gate.h)"),
    (re.compile(r"\barchive_read_open_filenames?\s*\("), "libarchive opens by name: pass a gated descriptor (archive_read_open_fd)"),
]
OPEN_CALL = re.compile(r"(?<![\w.>])(::)?open\s*\(")
WRITE_FLAGS = re.compile(r"\bO_(WRONLY|CREAT|DIRECTORY)\b")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def offenders(text, name):
    found = []
    lines = strip_comments(text).split("\n")
    for no, line in enumerate(lines, 1):
        for rule, why in RULES:
            if rule.search(line):
                found.append(f"{name}:{no}: {why}")
        m = OPEN_CALL.search(line)
        if m:
            # The call's arguments may continue on the next lines: look up to the closing ';'.
            call = line[m.start():]
            k = no
            while ";" not in call and k < len(lines):
                call += lines[k]
                k += 1
            is_declaration = re.match(r"\s*(static\s+)?[\w:<>]+\s+open\s*\(", line) is not None
            if not is_declaration and "O_" in call and not WRITE_FLAGS.search(call):
                found.append(f"{name}:{no}: open() for reading: use open_regular_file (common/file_gate.h)")
    return found


def check(dirs):
    found = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                path = os.path.join(root, f)
                if not f.endswith(EXTENSIONS) or path.endswith(GATE):
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found += offenders(fh.read(), os.path.relpath(path))
    return found


def self_test():
    bad = {
        "std::ifstream f(path);": 1,
        "FILE* f = std::fopen(p.c_str(), \"rb\");": 1,
        "int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);": 1,
        "int fd = open(p.c_str(),\n    O_RDONLY);": 1,
        "archive_read_open_filename(a, path.c_str(), 1 << 20);": 1,
        "FILE* f = fopen(p, \"a+\");": 1,
    }
    good = [
        "std::ofstream f(tmp, std::ios::binary);",
        "f_ = std::fopen(path.c_str(), \"a\");",
        "int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);",
        "int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);",
        "static SafeTensors open(const std::string& path);",
        "auto f = SafeTensors::open(path);",
        "// std::ifstream in a comment",
        "void fsync_file(const fs::path& path) { fsync_fd_path(path, O_WRONLY | O_NONBLOCK); }",
        "archive_read_open_fd(a, fd, 1 << 20);",
    ]
    ok = True
    for code, n in bad.items():
        got = offenders(code, "t.cpp")
        if len(got) != n:
            print(f"self-test: expected {n} offender(s) in {code!r}, got {got}")
            ok = False
    for code in good:
        got = offenders(code, "t.cpp")
        if got:
            print(f"self-test: expected none in {code!r}, got {got}")
            ok = False
    print("self-test passed" if ok else "self-test FAILED")
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    dirs = argv[1:] or [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")]
    found = check(dirs)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} file open(s) around the file gate")
        return 1
    print("every file read in src/ goes through common/file_gate.h")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
