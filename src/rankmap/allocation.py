"""Allocations: the nodes a job got, in the order the scheduler lists them.

``--nodes`` accepts node ids and ranges (``0-15,32-47``) or a file with one id (or range)
per line (``#`` comments allowed). Default: the whole machine in node-id order. Cores of the
allocation are numbered node by node: core ``c`` is core ``c % cores_per_node`` of node
``nodes[c // cores_per_node]``.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .errors import RankmapError
from .allocation_names import is_id_text, parse_named_allocation
from .machines import Machine
from .node_allocation import Allocation
from .validate import check_input_file, read_lines, show

__all__ = ["Allocation", "parse_allocation", "whole_machine"]


def whole_machine(machine: Machine) -> Allocation:
    """Every node of the machine, in id order.

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    Allocation
        Every node, in id order, with the machine's cores per node.
    """
    return Allocation(np.arange(machine.n_nodes, dtype=np.int64), machine.cores_per_node)


_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$", re.ASCII)


def _parse_id_list(items: list[str], machine: Machine, where: str,
                   item_lines: list[int] | None = None) -> list[int]:
    """Node ids of ``items`` (ids and ranges); ``item_lines``, each item's line in a node
    file, puts the line of a bad item into the message."""
    ids: list[int] = []
    for k, item in enumerate(items):
        if item_lines is not None:
            where_all, where = where, f"{where}: line {item_lines[k]}"
        m = _RANGE.match(item)
        if not m:
            raise RankmapError(f"bad node {show(item.strip(), 40)} in {where}: expected an id "
                               "or a range like 32-47")
        lo_t, hi_t = m.group(1), m.group(2) if m.group(2) is not None else m.group(1)
        if max(len(lo_t), len(hi_t)) > 18:
            raise RankmapError(f"node {show(item.strip(), 40)} in {where} is outside the machine "
                               f"(ids 0-{machine.n_nodes - 1})")
        lo, hi = int(lo_t), int(hi_t)
        if hi < lo:
            raise RankmapError(f"bad node range {item.strip()!r} in {where}: end before start")
        if hi >= machine.n_nodes:
            raise RankmapError(f"node {hi} in {where} is outside the machine "
                               f"(ids 0-{machine.n_nodes - 1})")
        ids.extend(range(lo, hi + 1))
        if item_lines is not None:
            where = where_all
        if len(ids) > machine.n_nodes:
            raise RankmapError(f"{where} lists more nodes than the machine has "
                               f"({machine.n_nodes}): some are repeated")
    return ids


def parse_allocation(text: str | None, machine: Machine) -> Allocation:
    """Build the allocation from ``--nodes`` (None: the whole machine).

    Parameters
    ----------
    text : str or None
        The ``--nodes`` value: ids and ranges (``0-15,32-47``), a file of ids, host lists,
        Cray names, a topology CSV, ``random:N[:seed=S]``, ``contiguous:N[:start=S]``; None
        for the whole machine (blank text is an error: a list that came out empty).
    machine : Machine
        The machine.

    Returns
    -------
    Allocation
        The allocated nodes in scheduler order.

    Raises
    ------
    RankmapError
        A malformed value, an unknown or repeated node.
    """
    if text is None:
        return whole_machine(machine)
    if not isinstance(text, str):
        raise RankmapError(f"bad allocation {show(text)}: give node ids as text such as "
                           "'0-15,32' (or build Allocation(nodes, cores_per_node))")
    if not text.strip():
        # "$(cat nodes.txt)" of an empty file: never silently the whole machine
        raise RankmapError(f"--nodes {show(text)} lists no nodes (leave --nodes out for the "
                           "whole machine)")
    text = text.strip()
    alloc = parse_named_allocation(text, machine)  # host lists, Cray names, topology files
    if alloc is not None:
        return _checked(alloc, text)
    if os.path.isfile(text) and not is_id_text(text):   # --nodes 3 is node 3; ./3 the file
        items, item_lines = [], []
        for lineno, line in enumerate(read_lines(text, "node file"), start=1):
            words = line.split("#", 1)[0].replace(",", " ").split()
            items += words
            item_lines += [lineno] * len(words)
        if not items:
            raise RankmapError(f"node file {show(text)} lists no nodes")
        ids = _parse_id_list(items, machine, f"node file {show(text)}", item_lines)
        source = f"file {text}"
    else:
        if os.path.isdir(text):
            raise RankmapError(f"--nodes {show(text)} is a folder; give a node file")
        if "/" in text or text.endswith((".txt", ".csv")):
            check_input_file(text, "node file")      # not found, or a device such as /dev/zero
            raise RankmapError(f"node file {show(text)} not found")
        # commas or white space, as a node file: --nodes "$(cat ids.txt)" with one id a line;
        # an empty item between commas stays an error (an empty variable in "$A,$B")
        items = [it for piece in re.sub(r"\s*-\s*", "-", text).split(",")
                 for it in (piece.split() or [""])]
        ids = _parse_id_list(items, machine, "--nodes")
        source = text if len(text) < 60 else text[:57] + "..."
    alloc = Allocation(np.array(ids, dtype=np.int64), machine.cores_per_node, source=source)
    return _checked(alloc, text)


def _checked(alloc: Allocation, text: str) -> Allocation:
    nodes = alloc.nodes
    if len(nodes) == 0:
        raise RankmapError(f"--nodes {show(text)} selects no nodes")
    uniq, counts = np.unique(nodes, return_counts=True)
    if (counts > 1).any():
        raise RankmapError(f"node {int(uniq[counts > 1][0])} is listed twice in --nodes")
    return alloc
