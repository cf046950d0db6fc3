"""The package's layers import one way (README "Architecture"), found by reading the source.

* the import graph of ``rankmap`` (every ``import`` / ``from ... import`` in every module,
  function-level imports included) has no cycle;
* no module imports a module of a higher layer;
* no module fills a container of another module (``other.NAME.append(...)``, ``.update``,
  ``[key] = ...``): nothing is registered by importing something;
* nothing is assigned onto a machine or allocation object from outside its class
  (``machine.x = ...``, ``allocation.x = ...``).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "rankmap"

#: lowest first; a module may import its own layer and those below (README "Architecture")
LAYERS = [
    ("core", ["rankmap", "rankmap.errors", "rankmap.units", "rankmap.specs", "rankmap.validate",
              "rankmap.threads", "rankmap.defaults"]),
    ("kernels", ["rankmap.kernels"]),
    ("machines", ["rankmap.machines"]),
    ("routing", ["rankmap.routing"]),
    ("patterns/allocation", ["rankmap.patterns", "rankmap.allocation", "rankmap.node_allocation",
                             "rankmap.allocation_names"]),
    ("mappers", ["rankmap.mappers"]),
    ("metrics", ["rankmap.metrics", "rankmap.timing"]),
    ("evaluation", ["rankmap.evaluation"]),
    ("selection", ["rankmap.selection", "rankmap.selection.in_node"]),
    ("readwrite", ["rankmap.io"]),
    ("analysis", ["rankmap.counters", "rankmap.study"]),
    ("viz", ["rankmap.plots", "rankmap.report"]),
    ("integrations", ["rankmap.mpi", "rankmap.pmpi", "rankmap.simgrid", "rankmap.launch",
                      "rankmap.launcher_words"]),
    ("cli", ["rankmap.cli", "rankmap.__main__"]),
]


def module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    if best is None or (best == 0 and module not in LAYERS[0][1]):
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS and the README")
    return best


def modules() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(), str(p)) for p in sorted(PKG.rglob("*.py"))}


def imports_of(module: str, tree: ast.Module, known: set[str]) -> set[str]:
    is_pkg = module in known and any(m.startswith(module + ".") for m in known) or \
        (PKG / pathlib.Path(*module.split(".")[1:]) / "__init__.py").exists()
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                root = base[:len(base) - (node.level - 1)]
                target = ".".join(root + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = []
            for a in node.names:
                sub = f"{target}.{a.name}"
                names.append(sub if sub in known else target)
        else:
            continue
        for n in names:
            if n == "rankmap" or n.startswith("rankmap."):
                while n not in known and "." in n:
                    n = n.rsplit(".", 1)[0]
                if n in known and n != module:
                    out.add(n)
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports_of(m, t, known) for m, t in mods.items()}


def test_every_module_has_a_layer(graph):
    for m in graph:
        layer_of(m)


def test_no_lower_layer_imports_a_higher_one(graph):
    bad = sorted(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
                 for m, deps in graph.items() for d in deps
                 if m != "rankmap" and layer_of(d) > layer_of(m))
    assert not bad, "\n".join(bad)


def test_import_graph_is_acyclic(graph):
    # the top-level package re-exports nothing but its version: leave it out of the walk
    g = {m: {d for d in deps if d != "rankmap"} for m, deps in graph.items() if m != "rankmap"}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(g.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def _imported_module_aliases(tree: ast.Module, module: str, known: set[str]) -> set[str]:
    """Local names bound to other rankmap modules or to names imported from them."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("rankmap")):
            out.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update((a.asname or a.name).split(".")[0] for a in node.names
                       if a.name.startswith("rankmap"))
    return out


def test_nothing_registers_into_another_module(graph):
    mods = modules()
    bad = []
    for m, tree in mods.items():
        foreign = _imported_module_aliases(tree, m, set(mods))
        for node in ast.walk(tree):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("append", "extend", "update", "insert", "add", "setdefault"):
                target = node.func.value
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    if isinstance(t, ast.Subscript):
                        target = t.value
            while isinstance(target, ast.Attribute):
                target = target.value
            if isinstance(target, ast.Name) and target.id in foreign and target.id.isupper():
                bad.append(f"{m}:{node.lineno} fills {target.id} of another module")
    assert not bad, "\n".join(bad)


def test_nothing_is_assigned_onto_machines_or_allocations():
    bad = []
    for m, tree in modules().items():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) and \
                            el.value.id in ("machine", "allocation", "alloc", "m"):
                        bad.append(f"{m}:{node.lineno} assigns {el.value.id}.{el.attr}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "setattr" and node.args and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id in ("machine", "allocation", "alloc"):
                bad.append(f"{m}:{node.lineno} setattr on {node.args[0].id}")
    assert not bad, "\n".join(bad)


_MUTATORS = ("append", "extend", "update", "insert", "add", "setdefault", "pop", "clear")


def _is_mutable_literal(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
        value.func.id in ("dict", "list", "set", "defaultdict", "OrderedDict")


def test_no_module_level_registry_is_filled():
    """A public module-level table (an UPPER-case dict, list or set) is written out where it is
    defined and never changed afterwards, so importing a module cannot fill a registry: tables
    of plugins are built once (``MappingProxyType``/tuple) by the module that lists them.
    Private module state (``_PENDING`` temporary files, ``_READING`` recursion guards) is
    runtime bookkeeping, not a registry, and is not checked."""
    bad = []
    for m, tree in modules().items():
        tables = set()
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) and node.value else []
            if targets and _is_mutable_literal(node.value):
                tables.update(t.id for t in targets if isinstance(t, ast.Name) and
                              t.id.isupper() and not t.id.startswith("_"))
        if not tables:
            continue
        for node in ast.walk(tree):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in _MUTATORS:
                target = node.func.value
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for t in (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                          else [node.target]):
                    if isinstance(t, ast.Subscript):
                        target = t.value
            elif isinstance(node, ast.Global):
                bad.extend(f"{m}:{node.lineno} rebinds {n}" for n in node.names if n in tables)
            if isinstance(target, ast.Name) and target.id in tables:
                bad.append(f"{m}:{node.lineno} changes the table {target.id}")
    assert not bad, "\n".join(bad)


def test_no_registration_calls_at_import():
    """No module calls a ``register*`` function (anywhere, so not at import time either:
    module level or decorator); the interpreter's exit handlers (``atexit.register``, the
    installed script's) are no registry of ours."""
    bad = []
    for m, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                    else ""
                exit_handler = (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                and f.value.id == "atexit")
                if name.startswith("register") and not exit_handler:
                    bad.append(f"{m}:{node.lineno} calls {name}")
    assert not bad, "\n".join(bad)


def test_capabilities_are_not_guessed():
    """Machines are asked by type (``isinstance(machine, GridMachine)``) or by attributes
    every machine has, never probed with ``hasattr``/``getattr`` (issue 12)."""
    bad = []
    for m, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("hasattr", "getattr") and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id == "machine":
                bad.append(f"{m}:{node.lineno} {node.func.id}(machine, ...)")
    assert not bad, "\n".join(bad)
