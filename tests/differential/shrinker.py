"""Delta debugging over a failing case: greedily applies smaller variants of the program and its
inputs, keeping each one that still fails the same way, until none does (or the budget ends).

Variants, in order: drop a Tile op; drop a `tile.map` output; replace a body node by one of its
operands of the same type, or by a constant (0, 1); drop unused inputs; shrink a size (to 1, or
halve it) consistently over the axes it is tied to; set input elements to 0 or 1.

Shrinking never raises: a variant family that raises is abandoned (the exception is recorded in
`errors`), a variant whose inputs do not match its arguments (`consistent`) is never tried, and a
predicate that raises counts as "does not fail the same way".
"""
from __future__ import annotations

import copy
import time
import traceback
from typing import Any, Callable, Iterator, Optional

import numpy as np

from floats import float_bits, is_float
from generator import Case, decode_input

Predicate = Callable[[Case], bool]


def shrink(case: Case, still_fails: Predicate, budget_s: float = 30.0,
           max_trials: int = 400, errors: Optional[list[str]] = None) -> tuple[Case, int]:
    """The smallest variant found that still fails, and how many variants were tried. Never
    raises: exceptions of the variant families and of the predicate are appended to `errors`
    (when given) and shrinking goes on without that family / candidate."""
    errors = [] if errors is None else errors
    deadline = time.monotonic() + budget_s
    trials = 0
    current = case
    progress = True
    while progress and time.monotonic() < deadline and trials < max_trials:
        progress = False
        for candidate in variants(current, errors):
            if time.monotonic() >= deadline or trials >= max_trials:
                break
            trials += 1
            try:
                fails = bool(still_fails(candidate))
            except Exception:  # a candidate the harness cannot run does not fail "the same way"
                errors.append("predicate: " + traceback.format_exc())
                fails = False
            if fails:
                current = candidate
                progress = True
                break
    return current, trials


def variants(case: Case, errors: Optional[list[str]] = None) -> Iterator[Case]:
    """Every candidate of every family, in order; only consistent ones (see `consistent`). A
    family that raises is abandoned for this round (recorded in `errors`)."""
    for family in FAMILIES:
        it = family(case)
        while True:
            try:
                candidate = next(it)
            except StopIteration:
                break
            except Exception:
                if errors is not None:
                    errors.append(f"{family.__name__}: " + traceback.format_exc())
                break
            if candidate is not None and consistent(candidate):
                yield candidate


def consistent(case: Case) -> bool:
    """Whether every input argument has a stored input of its type and shape whose data decodes
    to exactly that shape (and nothing else is stored)."""
    try:
        args = {a["name"]: a for a in case["program"]["args"]}
        wanted = {n for n, a in args.items() if a["role"] == "in"}
        if set(case["inputs"]) != wanted:
            return False
        for name, entry in case["inputs"].items():
            arg = args[name]
            if entry["type"] != arg["type"] or entry["shape"] != arg["shape"]:
                return False
            data = decode_input(entry)
            want = tuple(arg["shape"]) if arg["shape"] is not None else ()
            if data.shape != want:
                return False
        return True
    except Exception:
        return False


# ----------------------------------------------------------------------------- helpers

def used_args(program: dict[str, Any]) -> set[str]:
    names = set()
    for op in program["ops"]:
        for key, value in op.items():
            if key in ("op", "body", "yields", "kind", "mode"):
                continue
            if isinstance(value, str):
                names.add(value)
            elif isinstance(value, list):
                names.update(v for v in value if isinstance(v, str))
    return names


def prune(case: Case) -> Case:
    """Removes arguments no op uses (and their inputs)."""
    program = case["program"]
    used = used_args(program)
    program["args"] = [a for a in program["args"] if a["name"] in used]
    case["inputs"] = {k: v for k, v in case["inputs"].items() if k in used}
    return case


def gc_body(op: dict[str, Any]) -> None:
    """Drops body nodes the yields do not reach (block arguments stay) and renumbers."""
    nodes = op["body"]
    live = set()
    stack = list(op["yields"])
    while stack:
        i = stack.pop()
        if i in live:
            continue
        live.add(i)
        stack.extend(nodes[i].get("args", []))
    keep = [i for i, n in enumerate(nodes) if n["op"] == "arg" or i in live]
    index = {old: new for new, old in enumerate(keep)}
    new_nodes = []
    for i in keep:
        n = dict(nodes[i])
        if "args" in n:
            n["args"] = [index[a] for a in n["args"]]
        new_nodes.append(n)
    op["body"] = new_nodes
    op["yields"] = [index[y] for y in op["yields"]]


# ----------------------------------------------------------------------------- variants

def drop_ops(case: Case) -> Iterator[Case]:
    ops = case["program"]["ops"]
    if len(ops) < 2:
        return
    for i in range(len(ops)):
        c = copy.deepcopy(case)
        del c["program"]["ops"][i]
        yield prune(c)


def drop_map_outputs(case: Case) -> Iterator[Case]:
    for k, op in enumerate(case["program"]["ops"]):
        if op["op"] != "map" or len(op["outs"]) < 2:
            continue
        for j in range(len(op["outs"])):
            c = copy.deepcopy(case)
            o = c["program"]["ops"][k]
            del o["outs"][j]
            del o["yields"][j]
            gc_body(o)
            yield prune(c)


def replace_nodes(case: Case) -> Iterator[Case]:
    for k, op in enumerate(case["program"]["ops"]):
        if op["op"] != "map":
            continue
        for i in reversed(range(len(op["body"]))):
            node = op["body"][i]
            if node["op"] in ("arg", "constant"):
                continue
            replacements = [a for a in node["args"] if op["body"][a]["type"] == node["type"]]
            for r in replacements:
                yield substitute(case, k, i, r)
            t = node["type"]
            for value in (0.0, 1.0) if is_float(t) else (0, 1):
                bits = int(float_bits(np.array([value]), t)[0]) if is_float(t) else value
                c = copy.deepcopy(case)
                c["program"]["ops"][k]["body"][i] = {"op": "constant", "type": t, "bits": bits}
                gc_body(c["program"]["ops"][k])
                yield c


def substitute(case: Case, k: int, i: int, r: int) -> Case:
    """Every use of node i becomes node r."""
    c = copy.deepcopy(case)
    op = c["program"]["ops"][k]
    for n in op["body"]:
        if "args" in n:
            n["args"] = [r if a == i else a for a in n["args"]]
    op["yields"] = [r if y == i else y for y in op["yields"]]
    gc_body(op)
    return c


def drop_unused_inputs(case: Case) -> Iterator[Case]:
    for k, op in enumerate(case["program"]["ops"]):
        if op["op"] != "map":
            continue
        used = {a for n in op["body"] for a in n.get("args", [])} | set(op["yields"])
        for i, node in enumerate(op["body"]):
            if node["op"] == "arg" and i not in used:
                c = copy.deepcopy(case)
                o = c["program"]["ops"][k]
                index = node["index"]
                del o["ins"][index]
                del o["body"][i]
                for n in o["body"]:
                    if n["op"] == "arg" and n["index"] > index:
                        n["index"] -= 1
                    if "args" in n:
                        n["args"] = [a - 1 if a > i else a for a in n["args"]]
                o["yields"] = [y - 1 if y > i else y for y in o["yields"]]
                yield prune(c)
                return


def axis_groups(op: dict[str, Any], args: dict[str, Any]) -> list[list[tuple[str, int]]]:
    """Sets of (argument, axis) whose sizes must stay equal (size-1 broadcast axes excluded)."""
    groups: list[list[tuple[str, int]]] = []
    if op["op"] == "map":
        out = args[op["outs"][0]]["shape"]
        rank = len(out)
        for ax in range(rank):
            g = [(o, ax) for o in op["outs"]]
            for name in op["ins"]:
                shape = args[name]["shape"]
                if shape is None:
                    continue
                j = ax - (rank - len(shape))
                if j >= 0 and shape[j] == out[ax] and not (shape[j] == 1):
                    g.append((name, j))
            groups.append(g)
    elif op["op"] in ("softmax", "reduce"):
        rank = len(args[op["in"]]["shape"])
        for ax in range(rank):
            g = [(op["in"], ax)]
            if op["op"] == "softmax":
                g.append((op["out"], ax))
            elif ax != op["axis"]:
                g.append((op["out"], ax if op["keepdims"] or ax < op["axis"] else ax - 1))
            groups.append(g)
    elif op["op"] == "norm":
        rank = len(args[op["in"]]["shape"])
        same = [op[k] for k in ("in", "out", "residual", "residual_out") if op[k]]
        for ax in range(rank):
            g = [(n, ax) for n in same]
            if ax == rank - 1:
                g += [(op[k], 0) for k in ("weight", "bias") if op[k]]
            groups.append(g)
    elif op["op"] == "rope":
        rank = len(args[op["in"]]["shape"])
        for ax in range(rank - 1):
            g = [(op["in"], ax), (op["out"], ax)]
            if ax == rank - 2:
                g += [(op["cos"], 0), (op["sin"], 0)]
            groups.append(g)
    return groups


def shrink_sizes(case: Case) -> Iterator[Case]:
    program = case["program"]
    args = {a["name"]: a for a in program["args"]}
    for k, op in enumerate(program["ops"]):
        for group in axis_groups(op, args):
            size = args[group[0][0]]["shape"][group[0][1]]
            for new in sorted({1, size // 2}):
                if new >= size or new < 1:
                    continue
                variant = resize(case, group, new)
                if variant is not None:
                    yield variant


def resize(case: Case, group: list[tuple[str, int]], new: int) -> Optional[Case]:
    """The case with every (argument, axis) of `group` set to size `new`: an input keeps its
    first `new` slices along that axis. None when the result would not be consistent (an axis
    already smaller than `new`, or inputs that do not match their arguments)."""
    try:
        return _resize(case, group, new)
    except Exception:  # inputs that cannot be decoded or sliced: no such variant
        return None


def _resize(case: Case, group: list[tuple[str, int]], new: int) -> Optional[Case]:
    c = copy.deepcopy(case)
    args = {a["name"]: a for a in c["program"]["args"]}
    for name, ax in dict.fromkeys(group):
        arg = args[name]
        if arg["shape"] is None or not 0 <= ax < len(arg["shape"]) or arg["shape"][ax] < new:
            return None
        shape = list(arg["shape"])  # a new list: nothing else may see the old one change
        shape[ax] = new
        arg["shape"] = shape
        if name in c["inputs"]:
            entry = c["inputs"][name]
            data = decode_input(entry)  # its own shape: the old one
            data = np.take(data, np.arange(new), axis=ax)
            c["inputs"][name] = {"type": entry["type"], "shape": list(data.shape),
                                 "hex": np.ascontiguousarray(data).tobytes().hex()}
    return c if consistent(c) else None


def simplify_values(case: Case) -> Iterator[Case]:
    """Sets one input element at a time to 0, else 1, starting from the smallest inputs. An
    element that is +0 is left alone and one that is 1 only tries 0 (0 is simpler than 1), so
    a predicate that ignores values cannot make the shrinker swap 0 and 1 for ever."""
    for name, entry in sorted(case["inputs"].items(),
                              key=lambda kv: len(kv[1]["hex"])):
        data = decode_input(entry)
        if data.size > 64:
            continue
        for i in range(data.size):
            for value in (0, 1):
                flat = data.reshape(-1)
                if is_float(entry["type"]):
                    if float(flat[i]) == value and not np.signbit(flat[i]):
                        break  # already this simple
                elif int(flat[i]) == value:
                    break
                c = copy.deepcopy(case)
                new = flat.copy()
                new[i] = value
                c["inputs"][name] = {"type": entry["type"], "shape": copy.copy(entry["shape"]),
                                     "hex": np.ascontiguousarray(new).tobytes().hex()}
                yield c


FAMILIES = [drop_ops, drop_map_outputs, replace_nodes, drop_unused_inputs, shrink_sizes,
            simplify_values]
