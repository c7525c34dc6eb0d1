"""pybind11's TypeError for a call that matches no signature ("randn(): incompatible function arguments. The
following argument types are supported: ..." over several lines, the overloads and the call's reprs) as one
line in the bindings' form: "gaugelab.randn: rows must be an integer (got str '2')", or the argument that
is missing or unknown. Every bound function, constructor and field setter of gaugelab._core is wrapped
(the package's __init__ does it); the binding files declare their scalar arguments as C++ types, and this
is the one place their refusals are put into words."""
from __future__ import annotations

import functools
import numbers
import re

import numpy as np

MISMATCH = re.compile(r"^[\w.]*\(\): incompatible (function|constructor) arguments")
OVERLOAD = re.compile(r"^\s+\d+\. (.*)$", re.M)


def _shown(v) -> str:
    text = repr(v)
    return f"{type(v).__name__} {text[:40] + '...' if len(text) > 40 else text}"


def _split(params: str) -> list:
    """'a: int, b: x[y, z] = 1' -> ['a: int', 'b: x[y, z] = 1'] (commas inside brackets kept)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += 1 if ch in "[(" else -1 if ch in "])" else 0
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + ([cur.strip()] if cur.strip() else [])


def signature(line: str) -> list:
    """One overload's parameters [(name, type, has_default)], self left out."""
    start = line.index("(")
    depth = 0
    for end in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[end], 0)
        if depth == 0:
            break
    params = []
    for p in _split(line[start + 1:end]):
        name, _, rest = p.partition(":")
        kind, _, default = rest.partition("=")
        params.append((name.strip(), kind.strip(), bool(default.strip())))
    return [p for p in params if p[0] != "self"]


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) or (hasattr(type(v), "__index__") and not isinstance(v, float))


# pybind11's type names for the C++ scalar types -> (what the message says it must be, whether v is one).
KINDS = {
    "int": ("an integer", _is_int),
    "typing.SupportsInt": ("an integer", _is_int),
    "typing.SupportsIndex": ("an integer", _is_int),
    "float": ("a number", lambda v: isinstance(v, (numbers.Real, np.floating, np.integer)) and not isinstance(v, str)),
    "typing.SupportsFloat": ("a number", lambda v: isinstance(v, (numbers.Real, np.floating, np.integer))),
    "bool": ("True or False", lambda v: isinstance(v, (bool, np.bool_, numbers.Number)) or v is None),
    "str": ("a string", lambda v: isinstance(v, str)),
}


def _kind(kind: str, module):
    """(what it must be, test) of a parameter type, or None where any value may be given. A union
    ("typing.SupportsFloat | typing.SupportsIndex", pybind11 3's float) is its first member's words and the
    test of any member."""
    if " | " in kind:
        rules = [_kind(k, module) for k in kind.split(" | ")]
        if any(r is None for r in rules):
            return None
        return rules[0][0], lambda v: any(r[1](v) for r in rules)
    if kind in KINDS:
        return KINDS[kind]
    cls = getattr(module, kind.rsplit(".", 1)[-1], None) if kind.startswith("gaugelab.") else None
    if isinstance(cls, type):
        return f"a gaugelab.{cls.__name__}", lambda v: isinstance(v, cls)
    return None


def _problem(params, args, kwargs, module, value_name):
    """What is wrong with the call against one overload, as (rank, the message's tail): rank 0 a value of the
    wrong kind (the call fits the overload otherwise), 1 the arguments themselves; None if nothing is found."""
    names = [p[0] for p in params if not p[0].startswith("*")]
    listing = f"(the arguments are {', '.join(names)})" if names else "(it takes no arguments)"
    if len(args) > len(names) and not any(p[0].startswith("*") and not p[0].startswith("**") for p in params):
        return 1, f"takes at most {len(names)} positional arguments {listing} (got {len(args)})"
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound:
            return 1, f"{k} must be given once (got it by position and by keyword)"
        if k not in names and not any(p[0].startswith("**") for p in params):
            return 1, f"{k} is not an argument {listing}"
        bound[k] = v
    for name, kind, has_default in params:
        if name.startswith("*"):
            continue
        if name not in bound:
            if not has_default:
                return 1, f"{name} is missing {listing}"
            continue
        rule = _kind(kind, module)
        if rule is not None and not rule[1](bound[name]):
            return 0, f"{value_name or name} must be {rule[0]} (got {_shown(bound[name])})"
    return None


def one_line(fn: str, message: str, args, kwargs, module, value_name: str | None = None) -> TypeError:
    """pybind11's multi-line mismatch message of the call fn(*args, **kwargs) as one TypeError line."""
    overloads = [signature(m) for m in OVERLOAD.findall(message) if "(" in m]
    if value_name:  # a field's setter: the value is its last parameter (the object is "self" or "arg0")
        overloads = [o[-1:] for o in overloads]
    found = [p for p in (_problem(o, args, kwargs, module, value_name) for o in overloads) if p]
    if found:
        return TypeError(f"gaugelab.{fn}: {min(found, key=lambda p: p[0])[1]}")
    first = OVERLOAD.search(message)
    return TypeError(f"gaugelab.{fn}: the arguments must match {first.group(1) if first else 'its signature'} "
                     f"(got {', '.join(type(a).__name__ for a in args)})")


def _mismatch(e: TypeError) -> bool:
    return bool(MISMATCH.match(str(e)))


def function(fn: str, f, module):
    """f with pybind11's mismatch TypeError put in one line."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except TypeError as e:
            if not _mismatch(e):
                raise
            raise one_line(fn, str(e), args, kwargs, module) from None
    return call


def bound_class(cls, module) -> None:
    """The class's constructor and its fields' setters with pybind11's mismatch TypeError put in one line."""
    init = cls.__init__

    def __init__(self, *args, **kwargs):
        try:
            init(self, *args, **kwargs)
        except TypeError as e:
            if not _mismatch(e):
                raise
            raise one_line(cls.__name__, str(e), args, kwargs, module) from None

    __init__.__doc__ = init.__doc__
    cls.__init__ = __init__
    for name, attr in list(vars(cls).items()):
        if isinstance(attr, property) and attr.fset is not None:
            cls_field = f"{cls.__name__}.{name}"

            def fset(self, value, _set=attr.fset, _who=cls_field):
                try:
                    _set(self, value)
                except TypeError as e:
                    if not _mismatch(e):
                        raise
                    raise one_line(_who, str(e), (value,), {}, module, value_name="value") from None

            setattr(cls, name, property(attr.fget, fset, attr.fdel, attr.__doc__))
