#!/usr/bin/env python3
"""Static check of CPython's error convention over the extension's C files.

The convention (DESIGN.md, Errors): a C function that fails returns NULL or -1
with a Python exception set, and returns a success value only without one.
Break it one way and the interpreter raises SystemError ("returned NULL
without setting an exception" or "returned a result with an exception set");
break it the other way and an error is silently lost.

No compiler checker knows this convention (clang-tidy has none), so this
script scans the C text: comments and string literals are blanked, function
definitions are found by brace matching, and each body is checked with rules
that are precise enough to hold the tree at zero findings:

  set-then-ok      an exception is set (PyErr_SetString, PyErr_Format, ...)
                   and the same straight-line block then returns a success
                   value (return 0, a non-NULL object, Py_RETURN_NONE, ...)
                   without PyErr_Clear in between.
  bare-null        `return NULL` (in a function returning an object) or a
                   `goto` to a label that returns NULL, guarded by a condition
                   in which no call can have set an exception: the condition
                   calls nothing (or only type checks and size macros), and
                   none of its variables was assigned from a call or passed by
                   address to one.
  malloc-null      `return NULL`/`return -1` right after a C allocation
                   (malloc, calloc, realloc, strdup) failed, without
                   PyErr_NoMemory: C allocators set no exception.
  truth            PyObject_IsTrue (and the other int predicates that return
                   -1 on error) used directly as a condition: -1 reads as true
                   and the exception is left set.
  unchecked        the result of a call whose error value is ambiguous or an
                   error indicator (PyLong_As*, PyFloat_AsDouble, PyNumber_*,
                   PySequence_*, PyObject_IsTrue, PyArg_Parse*, ...) is stored
                   and then not tested (against NULL/-1, or by PyErr_Occurred)
                   in the statements that follow.

A finding that is right as it is takes a comment on its line or the line
before: `/* NOLINT(pcs-errors): why */`. The dynamic side of the audit is
tests/test_error_convention.py, which calls every entry point with hostile
arguments and fails on any SystemError.

Usage: tools/check_errors.py [files...]   (default: every .c file under csrc/)
Exit status 1 when there are findings.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETTERS = re.compile(
    r"\b(PyErr_SetString|PyErr_Format|PyErr_SetObject|PyErr_SetNone|PyErr_NoMemory|"
    r"PyErr_SetFromErrno\w*|PyErr_BadArgument|PyErr_BadInternalCall|PyErr_Restore|"
    r"pcs_cuda_error|pcs_raise\w*|pcs_not_implemented|pcs_type_error\w*|"
    r"pcs_set_error\w*)\s*\(")
CLEAR = re.compile(r"\bPyErr_Clear\s*\(|\bPyErr_Fetch\s*\(|\bPyErr_GetRaisedException\s*\(")
SUPPRESS = "NOLINT(pcs-errors)"

# Calls that never set an exception: a condition made only of these cannot
# explain a NULL return.
NON_SETTING = re.compile(
    r"^(Py\w*_Check\w*|Py_IS_TYPE|Py_TYPE|Py_SIZE|Py\w+_GET_SIZE|Py\w+_GET_ITEM|"
    r"PyErr_Occurred|PyErr_ExceptionMatches|strcmp|strncmp|memcmp|strlen|sizeof|"
    r"isnan|isinf|isfinite|Py_IsNone|PyIndex_Check|PyCallable_Check|PyIter_Check|"
    r"PyNumber_Check|PySequence_Check|PyMapping_Check|PyObject_TypeCheck)$")
C_ALLOC = re.compile(r"\b(malloc|calloc|realloc|strdup|aligned_alloc)\s*\(")

# name -> kind of error result: 'ptr' (NULL), 'int' (-1 / negative),
# 'amb' (-1 that may be a value: needs PyErr_Occurred or a -1 test).
CHECKED = {
    **{n: "amb" for n in (
        "PyLong_AsLong", "PyLong_AsLongLong", "PyLong_AsSsize_t", "PyLong_AsSize_t",
        "PyLong_AsUnsignedLong", "PyLong_AsUnsignedLongLong", "PyLong_AsDouble",
        "PyFloat_AsDouble", "PyLong_AsInt", "PyComplex_RealAsDouble",
        "PyComplex_ImagAsDouble", "PyLong_AsUnsignedLongLongMask")},
    **{n: "ptr" for n in (
        "PyNumber_Index", "PyNumber_Long", "PyNumber_Float", "PySequence_Fast",
        "PySequence_Tuple", "PySequence_List", "PySequence_GetItem", "PyObject_GetAttr",
        "PyObject_GetAttrString", "PyObject_GetItem", "PyObject_GetIter", "PyObject_Str",
        "PyObject_Repr", "PyUnicode_AsUTF8", "PyUnicode_AsUTF8AndSize")},
    **{n: "int" for n in (
        "PySequence_Size", "PySequence_Length", "PyObject_Length", "PyObject_Size",
        "PyObject_IsTrue", "PyObject_Not", "PyObject_RichCompareBool",
        "PyArg_ParseTuple", "PyArg_ParseTupleAndKeywords", "PyArg_UnpackTuple",
        "PyObject_IsInstance", "PyObject_IsSubclass")},
}
TRUTH = {"PyObject_IsTrue", "PyObject_Not", "PyObject_RichCompareBool", "PyObject_IsInstance",
         "PyObject_IsSubclass"}
CHECKED_CALL = re.compile(r"\b(" + "|".join(sorted(CHECKED)) + r")\s*\(")

FUNC_HEAD = re.compile(
    r"(?:^|\n)([A-Za-z_][\w \t\*]*?[\s\*])([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*\{", re.S)
CONTROL = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}


def blank(src):
    """Comments and string/char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", src[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_preprocessor(text):
    """Preprocessor lines (with continuations) blanked: macros are not bodies."""
    lines = text.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = " " * len(line)
        else:
            cont = False
    return "\n".join(lines)


def match_paren(text, i, open_c="(", close_c=")"):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def functions(text):
    """(name, return type, body start, body end) for each top-level definition."""
    depth, i, n = 0, 0, len(text)
    tops = []  # offsets where depth is 0
    spans = []
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                spans.append(i)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                spans[-1] = (spans[-1], i)
        i += 1
    prev_end = 0
    for s, e in [x for x in spans if isinstance(x, tuple)]:
        head = text[prev_end:s + 1]
        prev_end = e + 1
        m = None
        for m in FUNC_HEAD.finditer(head):
            pass
        if not m or m.end() != len(head):
            continue
        name, ret = m.group(2), " ".join(m.group(1).split())
        if name in CONTROL or "=" in ret or "struct" == ret.strip():
            continue
        yield name, ret, m.group(3), s, e


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def calls_in(expr):
    return [m.group(1) for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", expr)
            if m.group(1) not in CONTROL]


def statement_start(body, pos):
    """Offset after the previous ';', '{' or '}' before pos."""
    k = max(body.rfind(";", 0, pos), body.rfind("{", 0, pos), body.rfind("}", 0, pos))
    return k + 1


def guard_of(body, pos):
    """The condition of the `if (...)` whose statement holds pos, or None."""
    s = statement_start(body, pos)
    seg = body[s:pos]
    m = re.search(r"\bif\s*\(", seg)
    if not m:
        # `if (c) { ...; return NULL; }`: the block's opening if
        brace = body.rfind("{", 0, pos)
        if brace >= 0 and body.rfind("}", brace, pos) < 0:
            head = body[statement_start(body, brace):brace]
            m2 = re.search(r"\bif\s*\(", head)
            if m2:
                st = statement_start(body, brace) + m2.end() - 1
                return body[st + 1:match_paren(body, st)], statement_start(body, brace)
        return None, s
    st = s + m.end() - 1
    return body[st + 1:match_paren(body, st)], s


def idents(expr):
    return set(re.findall(r"\b([A-Za-z_]\w*)\b", expr)) - CONTROL - {"NULL", "Py_None"}


def explained_by_call(body, upto, cond, params):
    """True when cond may reflect an exception set by a call."""
    if "PyErr_Occurred" in cond:
        return True
    cs = [c for c in calls_in(cond) if not NON_SETTING.match(c)]
    if cs:
        return True
    before = body[:upto]
    # `if (!arg) return NULL;` on a parameter: f(g(x)) hands g's failure on
    if re.fullmatch(r"\s*!\s*(\w+)\s*", cond) and re.search(r"\b%s\s*[,)]" % re.escape(
            cond.strip().lstrip("!").strip()), params):
        return True
    for v in idents(cond):
        # v = call(...), v assigned through &v or as an array/struct passed to a call
        for m in re.finditer(r"\b%s\b(\s*\[[^\]]*\])?\s*=[^=][^;]*\(" % re.escape(v), before):
            rhs = before[m.start():before.find(";", m.start())]
            if any(not NON_SETTING.match(c) for c in calls_in(rhs.split("=", 1)[1])):
                return True
        if re.search(r"&\s*%s\b|\(\s*%s\s*[,)]|,\s*%s\s*[,)]" % ((re.escape(v),) * 3), before):
            return True  # passed to a call that may fill it (and set an exception)
    return False


def check_function(path, text, name, ret, params, s, e, findings):
    body = text[s:e + 1]
    # Functions that return Python objects (PyObject *, PcsTensor *, ...);
    # C helpers returning other pointers (pcs_block *) follow no convention.
    ptr = re.search(r"\b(PyObject|Pcs[A-Z]\w*)\s*\*", ret) is not None
    is_int = re.fullmatch(r"(static )?(inline )?int", ret) is not None
    if not ptr and not is_int:
        return

    def report(pos, rule, msg):
        line = line_of(text, s + pos)
        raw = RAW[path].split("\n")
        ctx = raw[line - 1] + (raw[line - 2] if line >= 2 else "")
        if SUPPRESS in ctx:
            return
        findings.append("%s:%d: [%s] %s() %s" % (os.path.relpath(path, ROOT), line, rule, name, msg))

    # set-then-ok: a setter followed, in straight-line code of the same block,
    # by a success return.
    for m in SETTERS.finditer(body):
        if m.group(1) == "PyErr_Restore":
            continue
        prefix = body[statement_start(body, m.start()):m.start()]
        if re.search(r"\b(return|if|else|while|for)\b|[?:=]", prefix):
            continue  # returned at once, or set under a condition of its own
        end = body.find(";", match_paren(body, m.end() - 1))
        depth, j = 0, end + 1
        while j < len(body):
            c = body[j]
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and body.startswith("return", j) and not re.match(r"\w", body[j - 1]):
                stmt = body[j:body.find(";", j)]
                val = stmt[len("return"):].strip()
                between = body[end:j]
                if CLEAR.search(between) or re.search(r"\bgoto\b|\bif\b|\belse\b|\bcase\b", between):
                    break
                ok_ptr = ptr and val not in ("NULL", "") and not re.match(r"^\(?\w+\s*\*?\)?\s*NULL$", val)
                ok_int = is_int and re.fullmatch(r"[0-9]+", val) is not None
                if ok_ptr or ok_int:
                    report(j, "set-then-ok", "returns `%s` with an exception set" % val)
                break
            elif depth == 0 and re.match(r"Py_RETURN_(NONE|TRUE|FALSE)", body[j:j + 16]) \
                    and not re.match(r"\w", body[j - 1]):
                between = body[end:j]
                if not (CLEAR.search(between) or re.search(r"\bgoto\b|\bif\b|\belse\b", between)):
                    report(j, "set-then-ok", "returns a value with an exception set")
                break
            j += 1

    # error returns: return NULL (objects) or return -1 after malloc.
    labels = {}
    for m in re.finditer(r"(?m)^\s*([A-Za-z_]\w*)\s*:(?!:)", body):
        nxt = re.search(r"\breturn\b\s*([^;]*);", body[m.end():])
        if nxt and m.group(1) not in ("default",):
            labels[m.group(1)] = nxt.group(1).strip()
    sites = [(m.start(), "NULL") for m in re.finditer(r"\breturn\s+NULL\s*;", body)] if ptr else []
    sites += [(m.start(), "-1") for m in re.finditer(r"\breturn\s+-1\s*;", body)] if is_int else []
    sites += [(m.start(), labels[m.group(1)]) for m in re.finditer(r"\bgoto\s+(\w+)\s*;", body)
              if labels.get(m.group(1)) in (("NULL",) if ptr else ("-1",))]
    for pos, val in sites:
        cond, st = guard_of(body, pos)
        stmt_before = body[statement_start(body, st - 1) if st else 0:st]
        if cond is not None and C_ALLOC.search(stmt_before + cond) is None:
            # the allocation may be a few statements up: `p = malloc(..); if (!p)`
            vs = idents(cond)
            alloc_var = [v for v in vs if re.search(r"\b%s\s*=\s*(\([^)]*\)\s*)?(malloc|calloc|realloc|strdup)\s*\(" % re.escape(v), body[:pos])]
        else:
            alloc_var = [1] if cond is not None else []
        if alloc_var and "PyErr_NoMemory" not in body[st:pos] and not SETTERS.search(body[st:pos]):
            report(pos, "malloc-null", "returns %s after a C allocation failed, without PyErr_NoMemory" % val)
            continue
        if not ptr or val != "NULL":
            continue
        if cond is None:
            # an unconditional return NULL: the statement before must be a call or a setter
            prev = body[statement_start(body, statement_start(body, pos) - 1):statement_start(body, pos)]
            if not calls_in(prev) and not re.search(r"\bcase\b|\bdefault\b|\belse\b", body[statement_start(body, pos):pos]):
                report(pos, "bare-null", "returns NULL after `%s` which sets no exception" % " ".join(prev.split())[:60])
            continue
        between = body[st:pos]
        if SETTERS.search(between) or calls_in(between.split(")", 1)[-1] if False else ""):
            continue
        tail = body[body.find(")", st) if False else st:pos]
        if SETTERS.search(tail):
            continue
        if explained_by_call(body, st, cond, params):
            continue
        # calls inside the guarded block before the return
        inner = body[st:pos]
        inner_calls = [c for c in calls_in(inner[inner.find(cond) + len(cond):] if cond in inner else "")
                       if not NON_SETTING.match(c) and c not in ("Py_DECREF", "Py_XDECREF", "Py_CLEAR", "free")]
        if inner_calls:
            continue
        report(pos, "bare-null", "returns NULL when `%s`, which no call explains" % " ".join(cond.split())[:70])

    # unchecked results of error-ambiguous calls
    for m in CHECKED_CALL.finditer(body):
        kind = CHECKED[m.group(1)]
        stmt_s = statement_start(body, m.start())
        stmt = body[stmt_s:m.start()]
        close = match_paren(body, m.end() - 1)
        after = body[close + 1:close + 2 + 40].lstrip()
        if m.group(1) in TRUTH and (re.match(r"(\?|&&|\|\||\))", after)
                                    or re.search(r"(&&|\|\||!|\bif\s*\()\s*$", stmt)):
            if not re.match(r"\)\s*(<|>|==|!=)", after) and not re.match(r"(<|>|==|!=)", after):
                report(m.start(), "truth", "uses %s as a truth value: -1 (error) reads as true"
                       % m.group(1))
                continue
        if re.search(r"\b(if|while|return)\b|[!?]|&&|\|\|", stmt) or re.match(r"(==|!=|<|>|\?|&&|\|\|)", after):
            continue  # tested where it is called, or handed to the caller
        am = re.search(r"([A-Za-z_]\w*(?:->\w+|\.\w+)*(?:\s*\[[^\]]*\])?)\s*=\s*(\([^()]*\)\s*)?$", stmt)
        if not am:
            if re.search(r"[,(]\s*$", stmt):
                continue  # an argument of another call: that call's contract
            report(m.start(), "unchecked", "ignores the result of %s" % m.group(1))
            continue
        var = re.escape(am.group(1).strip())
        nxt = body[close:close + 1200]  # about the next 30 lines
        pats = [r"PyErr_Occurred", r"!\s*%s\b" % var, r"\b%s\s*(==|!=)\s*NULL" % var,
                r"\bif\s*\(\s*%s\s*\)" % var, r"\b%s\s*(<|<=|==|!=)\s*-?\s*[01](\.0)?\b" % var,
                r"\b%s\s*(&&|\|\||\?)" % var, r"\breturn\s+%s\s*;" % var]
        if kind == "amb":
            pats = [r"PyErr_Occurred", r"\breturn\s+%s\s*;" % var]
        if not any(re.search(p, nxt) for p in pats):
            report(m.start(), "unchecked", "does not test %s's result (%s) for an error" %
                   (m.group(1), am.group(1).strip()))


RAW = {}


def main(argv):
    files = argv or sorted(set(glob.glob(os.path.join(ROOT, "csrc", "**", "*.c"), recursive=True)))
    findings = []
    for path in files:
        raw = open(path, encoding="utf-8").read()
        RAW[path] = raw
        text = blank_preprocessor(blank(raw))
        for name, ret, params, s, e in functions(text):
            check_function(path, text, name, ret, params, s, e, findings)
    for f in findings:
        print(f)
    print("check_errors: %d finding(s) in %d files" % (len(findings), len(files)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
