#!/usr/bin/env python3
"""Checks that no two sources of one unity-built target define a file-local name twice.

Every build unity-batches the server library, the client library and the test executables
(CMakeLists.txt, LATCH_UNITY_BUILD): several sources share one compiler run, so the anonymous
namespaces of a batch are one namespace. Two files that each define `Token` there stop the
build; two that each define a different overload of `ParseInt64` compile, and a call in the
second file may silently take the first file's overload (it happened: the reply reader's
lenient ParseInt64 took over the request parser's, which then accepted "$04"). Which files
share a batch depends on the batch size and the file list, so this check reads every source
of a target and fails on any name that two of its files define file-locally (in an anonymous
namespace, or `static` at namespace scope), within the same enclosing namespace. The fix is
to name the helper after its file, or to share one helper from a header.

  scripts/check_unity_names.py     check, print each clash with both places; exit 1 on any
"""
import collections
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One group per unity-built target: its sources. Test executables glob their folder
# (tests/CMakeLists.txt); the server library globs server/src recursively.
def groups():
    out = {
        # server/CMakeLists.txt: the test kit and the libraft wrapper are libraries of their own.
        "latch_server": [f for f in glob.glob(os.path.join(ROOT, "server/src/**/*.cpp"),
                                              recursive=True)
                         if "/testing/kit/" not in f
                         and not re.search(r"/cluster/raft_(node|loop)\.cpp$|/main\.cpp$", f)],
        "latch_client": glob.glob(os.path.join(ROOT, "client/src/*.cpp")),
    }
    for d in sorted(os.listdir(os.path.join(ROOT, "tests"))):
        files = glob.glob(os.path.join(ROOT, "tests", d, "*.cpp"))
        if files and d != "fuzz":
            out["tests/" + d] = files
    return out


def strip(text):
    """Blanks comments, string and character literals (keeping line breaks)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        elif c == "#":  # preprocessor line (with continuations)
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0 or text[k - 1] != "\\":
                    break
                j = k + 1
            i = n if k < 0 else k
        else:
            out.append(c)
            i += 1
    return "".join(out)


IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"const", "constexpr", "static", "inline", "auto", "void", "int", "bool", "char",
            "unsigned", "long", "double", "float", "struct", "class", "enum", "noexcept",
            "override", "final", "thread_local", "extern", "volatile", "signed", "short",
            "consteval", "constinit", "decltype", "operator", "template", "typename"}


def drop_templates(head):
    """Removes `template <...>` prefixes and every <...> argument list."""
    out, depth = [], 0
    for c in head:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def declared_name(head, has_body):
    """The name a namespace-scope declaration defines, or None."""
    h = " ".join(drop_templates(head).split())
    h = re.sub(r"^template\s*", "", h)
    # Aliases (`using T = ...`, typedef, `namespace fs = ...`) may be declared again to the
    # same thing, and to another thing they stop the build: never a silent takeover.
    if not h or h.startswith(("using ", "typedef ", "namespace ", "static_assert", "extern \"")):
        return None
    m = re.match(r"(?:\w+\s+)*?(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)", h)
    if m and "(" not in h.split(m.group(1), 1)[0]:
        return m.group(1) if has_body or "=" in h else None
    cut = len(h)
    for stop in "=[{":
        k = h.find(stop)
        if 0 <= k < cut:
            cut = k
    paren = h.find("(")
    if 0 <= paren < cut:
        cut = paren
    words = [w for w in IDENT.findall(h[:cut]) if w not in KEYWORDS]
    if not words or "operator" in h[:cut + 1]:
        return None
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", words[-1]):
        return None  # a macro at namespace scope: TEST(...), INSTANTIATE_TEST_SUITE_P(...)
    return words[-1]


def file_locals(path):
    """[(enclosing namespace, name, line)] of the names `path` defines file-locally."""
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    found, stack, head, start, i, n = [], [], [], None, 0, len(text)
    while i < n:
        c = text[i]
        if all(s is not None for s in stack) and c in ";{":
            stmt = "".join(head).strip()
            line = text.count("\n", 0, start if start is not None else i) + 1
            m = re.match(r"(?:inline\s+)?namespace\s*([\w:]*)\s*$", stmt)
            if c == "{" and m:
                stack.append(m.group(1))
                head, start, i = [], None, i + 1
                continue
            local = "" in stack or re.match(r"(?:\w+\s+)*static\b", stmt)
            name = declared_name(stmt, c == "{") if stmt else None
            if local and name:
                found.append(("::".join(s for s in stack if s), name, line))
            if c == "{":  # skip the body, then a trailing `;` (a class or a braced init)
                depth, i = 1, i + 1
                while i < n and depth:
                    depth += {"{": 1, "}": -1}.get(text[i], 0)
                    i += 1
                rest = text[i:i + 200].lstrip()
                if rest.startswith(";"):
                    i = text.index(";", i) + 1
                elif re.match(r"\w", rest) and not re.match(r"\s*\w+\s*[(:]", rest):
                    # `struct {...} name;` or `} kTable = ...;`: the statement goes on.
                    pass
                head, start = [], None
                continue
            head, start, i = [], None, i + 1
            continue
        if c == "}" and stack:
            stack.pop()
            head, start, i = [], None, i + 1
            continue
        if not head and not c.isspace():
            start = i
        if head or not c.isspace():
            head.append(c)
        i += 1
    return found


def main():
    clashes = 0
    for target, files in sorted(groups().items()):
        seen = collections.defaultdict(list)
        for path in sorted(files):
            for ns, name, line in file_locals(path):
                seen[(ns, name)].append((os.path.relpath(path, ROOT), line))
        for (ns, name), places in sorted(seen.items()):
            if len({p for p, _ in places}) < 2:
                continue
            clashes += 1
            where = ", ".join(f"{p}:{line}" for p, line in places)
            print(f"{target}: {ns + '::' if ns else ''}{name} is file-local in several "
                  f"files: {where}")
    if clashes:
        print(f"{clashes} name(s) clash in unity batches: name each helper after its file, "
              "or share one from a header")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
