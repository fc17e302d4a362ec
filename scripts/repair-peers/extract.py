#!/usr/bin/env python3
"""Extracts the input/expected pairs of the two JSON repair libraries' own test suites into
fixtures/repair/peer-cases.jsonl: data only, one case a line, each naming where it came from.

Usage: scripts/repair-peers/extract.py JSON_REPAIR_GIT_DIR JSONREPAIR_GIT_DIR > cases.jsonl

The two arguments are git directories (bare clones) of mangiucugna/json_repair (PyPI
`json-repair`) and josdejong/jsonrepair (npm `jsonrepair`). Only the test files are read, as
text: Python's with `ast` (string literals only, nothing is run), TypeScript's with a reader of
string literals. A case is kept when its input is a string literal and its expected answer is a
literal too; asserts with options that change the answer (`strict`, `schema`, `logging`,
`stream_stable`) are left out.

Each line: {"id", "source": {"repo", "commit", "file", "line"}, "input", "expected"} where
`expected` is {"value": V} (the JSON value the suite expects), {"nothing": true} (the suite
expects no JSON: an empty answer) or {"error": true} (the suite expects the library to throw).
"""
import ast
import json
import re
import subprocess
import sys

PY_REPO = "mangiucugna/json_repair"
TS_REPO = "josdejong/jsonrepair"
PY_FILES_RE = re.compile(r"^tests/test_(parse_[a-z]+|json_repair)\.py$")
TS_FILES = ["src/index.test.ts"]
# Options that leave the repaired value as it is.
NEUTRAL_KWARGS = {"return_objects", "skip_json_loads", "ensure_ascii"}


def git(gitdir, *args):
    return subprocess.run(
        ["git", "--git-dir", gitdir, *args], check=True, capture_output=True, text=True
    ).stdout


def literal(node, names):
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    return ast.literal_eval(node)


def call_name(node):
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def python_cases(gitdir):
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").split() if PY_FILES_RE.match(f)]
    for path in sorted(files):
        tree = ast.parse(git(gitdir, "show", f"HEAD:{path}"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            names = {}
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                ):
                    try:
                        names[node.targets[0].id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
            for node in ast.walk(fn):
                case = python_case(node, names)
                if case is not None:
                    text, expected = case
                    yield {
                        "source": {"repo": PY_REPO, "commit": commit, "file": path, "line": node.lineno},
                        "input": text,
                        "expected": expected,
                    }


def python_case(node, names):
    """(input, expected) of `assert repair_json(X, …) == Y`, `assert loads(X) == Y` or
    `_assert_object_repairs(X, Y)`; None for anything else."""
    try:
        if isinstance(node, ast.Call) and call_name(node) == "_assert_object_repairs" and len(node.args) == 2:
            text = literal(node.args[0], names)
            return (text, {"value": literal(node.args[1], names)}) if isinstance(text, str) else None
        if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
            return None
        cmp = node.test
        if len(cmp.ops) != 1 or not isinstance(cmp.ops[0], ast.Eq):
            return None
        call = cmp.left
        if not isinstance(call, ast.Call) or call_name(call) not in ("repair_json", "loads"):
            return None
        if len(call.args) != 1 or any(k.arg not in NEUTRAL_KWARGS for k in call.keywords):
            return None
        text = literal(call.args[0], names)
        if not isinstance(text, str):
            return None
        objects = call_name(call) == "loads" or any(
            k.arg == "return_objects" and isinstance(k.value, ast.Constant) and k.value.value for k in call.keywords
        )
        want = literal(cmp.comparators[0], names)
    except (ValueError, SyntaxError, TypeError):
        return None
    if objects:
        # An empty string is the library's "nothing" in either form.
        return (text, {"nothing": True} if want == "" else {"value": want})
    if not isinstance(want, str):
        return None
    if want == "":
        return (text, {"nothing": True})
    try:
        return (text, {"value": json.loads(want)})
    except ValueError:
        return None


JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def js_string(src, i):
    """The JavaScript string literal at src[i] and the offset past it; None when there is none
    (or a template literal has a substitution)."""
    q = src[i]
    if q not in "'\"`":
        return None
    out = []
    i += 1
    while i < len(src):
        c = src[i]
        if c == q:
            return "".join(out), i + 1
        if q == "`" and src.startswith("${", i):
            return None
        if c == "\\":
            e = src[i + 1]
            if e in JS_ESCAPES and not (e == "0" and src[i + 2 : i + 3].isdigit()):
                out.append(JS_ESCAPES[e])
                i += 2
            elif e == "x":
                out.append(chr(int(src[i + 2 : i + 4], 16)))
                i += 4
            elif e == "u" and src[i + 2] == "{":
                end = src.index("}", i)
                out.append(chr(int(src[i + 3 : end], 16)))
                i = end + 1
            elif e == "u":
                unit = int(src[i + 2 : i + 6], 16)
                out.append(chr(unit))
                i += 6
            elif e == "\n":
                i += 2
            else:
                out.append(e)
                i += 2
            continue
        if c == "\n" and q != "`":
            return None
        out.append(c)
        i += 1
    return None


def js_expr(src, i):
    """A string literal, or several joined by `+`, at src[i] (after spaces); (value, end)."""
    parts = []
    while True:
        while i < len(src) and src[i] in " \t\r\n":
            i += 1
        got = js_string(src, i)
        if got is None:
            return None
        parts.append(got[0])
        i = got[1]
        j = i
        while j < len(src) and src[j] in " \t\r\n":
            j += 1
        if j < len(src) and src[j] == "+":
            i = j + 1
            continue
        return "".join(parts), i


def utf16_fix(s):
    """JavaScript strings are UTF-16: a surrogate pair written as two escapes is one character."""
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def ts_cases(gitdir):
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    for path in TS_FILES:
        src = git(gitdir, "show", f"HEAD:{path}")
        line_of = lambda at: src.count("\n", 0, at) + 1
        for m in re.finditer(r"expect\(jsonrepair\(", src):
            got = js_expr(src, m.end())
            if got is None:
                continue
            text, k = got
            rest = src[k:]
            mm = re.match(r"\s*\)\s*\)\s*\.(toBe|toEqual)\(", rest)
            if not mm:
                continue
            want = js_expr(src, k + mm.end())
            if want is None or not re.match(r"\s*\)", src[want[1] :]):
                continue
            yield ts_record(commit, path, line_of(m.start()), text, want[0])
        for m in re.finditer(r"assertRepair\(", src):
            if src[: m.start()].endswith("function "):
                continue
            got = js_expr(src, m.end())
            if got is None or not re.match(r"\s*\)", src[got[1] :]):
                continue
            yield ts_record(commit, path, line_of(m.start()), got[0], got[0])
        for m in re.finditer(r"expect\(\(\)\s*=>\s*\{?\s*(console\.log\(\{\s*output:\s*)?jsonrepair\(", src):
            got = js_expr(src, m.end())
            if got is None:
                continue
            if not re.match(r"\s*\)\s*(\}\s*\)\s*)?\}?\s*\)\s*\.toThrow", src[got[1] :]):
                continue
            yield {
                "source": {"repo": TS_REPO, "commit": commit, "file": path, "line": line_of(m.start())},
                "input": utf16_fix(got[0]),
                "expected": {"error": True},
            }


def ts_record(commit, path, line, text, want):
    want = utf16_fix(want)
    try:
        expected = {"value": json.loads(want)} if want.strip() else {"nothing": True}
    except ValueError:
        expected = {"text": want}
    return {
        "source": {"repo": TS_REPO, "commit": commit, "file": path, "line": line},
        "input": utf16_fix(text),
        "expected": expected,
    }


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    seen = set()
    n = 0
    for case in list(python_cases(sys.argv[1])) + list(ts_cases(sys.argv[2])):
        key = (case["source"]["repo"], case["input"])
        # The same input asserted twice in one suite (both implementations, both options) is one case.
        if key in seen:
            continue
        seen.add(key)
        n += 1
        case = {"id": n, **case}
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
