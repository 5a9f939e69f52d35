"""Delta debugging over a failing case: greedily applies smaller variants of the program and its
inputs, keeping each one that still fails the same way, until none does (or the budget ends).

Variants, in order: drop a Tile op; drop a `tile.map` output; replace a body node by one of its
operands of the same type, or by a constant (0, 1); drop unused inputs; shrink a size (to 1, or
halve it) consistently over the axes it is tied to; set input elements to 0 or 1.
"""
from __future__ import annotations

import copy
import time
from typing import Any, Callable, Iterator

import numpy as np

from floats import float_bits, is_float
from generator import Case, decode_input

Predicate = Callable[[Case], bool]


def shrink(case: Case, still_fails: Predicate, budget_s: float = 30.0,
           max_trials: int = 400) -> tuple[Case, int]:
    """The smallest variant found that still fails, and how many variants were tried."""
    deadline = time.monotonic() + budget_s
    trials = 0
    current = case
    progress = True
    while progress and time.monotonic() < deadline and trials < max_trials:
        progress = False
        for candidate in variants(current):
            if time.monotonic() >= deadline or trials >= max_trials:
                break
            trials += 1
            if still_fails(candidate):
                current = candidate
                progress = True
                break
    return current, trials


def variants(case: Case) -> Iterator[Case]:
    yield from drop_ops(case)
    yield from drop_map_outputs(case)
    yield from replace_nodes(case)
    yield from drop_unused_inputs(case)
    yield from shrink_sizes(case)
    yield from simplify_values(case)


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
                yield resize(case, group, new)


def resize(case: Case, group: list[tuple[str, int]], new: int) -> Case:
    c = copy.deepcopy(case)
    args = {a["name"]: a for a in c["program"]["args"]}
    for name, ax in group:
        args[name]["shape"][ax] = new
        if name in c["inputs"]:
            entry = c["inputs"][name]
            data = decode_input(entry)
            data = np.take(data, np.arange(new), axis=ax)
            c["inputs"][name] = {"type": entry["type"], "shape": list(data.shape),
                                 "hex": np.ascontiguousarray(data).tobytes().hex()}
    return c


def simplify_values(case: Case) -> Iterator[Case]:
    """Sets one input element at a time to 0 (then 1), starting from the smallest inputs."""
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
                        continue
                elif int(flat[i]) == value:
                    continue
                c = copy.deepcopy(case)
                new = flat.copy()
                new[i] = value
                c["inputs"][name] = {"type": entry["type"], "shape": entry["shape"],
                                     "hex": np.ascontiguousarray(new).tobytes().hex()}
                yield c
                break
