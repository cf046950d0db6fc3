"""The package's style rules (README "Architecture"), checked by reading the source with ``ast``.

* every public module (no ``_`` in its path) declares ``__all__``, and every name in it exists;
* every function in ``__all__``, and every public method of a class in ``__all__``, has a
  numpydoc docstring: a ``Parameters`` section when it takes parameters and a ``Returns`` (or
  ``Yields``) section when it returns a value (properties need a docstring only; a method
  overriding a fully documented method of a rankmap base class inherits its sections and
  needs a docstring saying what it does differently);
* no module imports a private name (``_x``) from another module;
* nothing is called ``Mapping`` (it would shadow ``typing.Mapping``).

Every public module follows them: there is no list of modules exempted while being documented
(the last one emptied on 2026-11-23).
"""

from __future__ import annotations

import ast
import importlib
import pathlib

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "rankmap"

#: modules whose public functions do not all have numpydoc sections yet (issue 12: to finish)
def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def public_modules() -> dict[str, ast.Module]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(SRC).with_suffix("").parts
        if not any(part.startswith("_") and part != "__init__" for part in parts):
            out[module_name(p)] = ast.parse(p.read_text(), str(p))
    return out


def all_names(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]
    return None


def defined_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def parameters(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def returns_value(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` itself (not a nested function) returns something other than None."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None and \
                not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def documented_methods() -> dict[str, ast.ClassDef]:
    """Every class of the package, by name."""
    out: dict[str, ast.ClassDef] = {}
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, node)
    return out


def base_names(cls: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr for b in cls.bases
            if isinstance(b, (ast.Name, ast.Attribute))]


def inherits_docs(fn: ast.FunctionDef, cls: ast.ClassDef | None, methods) -> bool:
    """Whether ``fn`` overrides a fully documented method of a base class (or its bases)."""
    todo, seen = list(base_names(cls)) if cls else [], set()
    while todo:
        base = todo.pop()
        if base in seen or base not in methods:
            continue
        seen.add(base)
        parent = next((m for m in methods[base].body
                       if isinstance(m, ast.FunctionDef) and m.name == fn.name), None)
        if parent is not None and ast.get_docstring(parent) and \
                not docstring_problems(parent, "", None, methods):
            return True
        todo.extend(base_names(methods[base]))
    return False


def docstring_problems(fn: ast.FunctionDef, where: str, cls: ast.ClassDef | None = None,
                       methods=None) -> list[str]:
    doc = ast.get_docstring(fn)
    if not doc:
        return [f"{where}: no docstring"]
    if any((d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else "")
           in ("property", "cached_property") for d in fn.decorator_list):
        return []
    if methods is not None and cls is not None and inherits_docs(fn, cls, methods):
        return []
    out = []
    if parameters(fn) and "\nParameters\n----------" not in doc:
        out.append(f"{where}: no 'Parameters' section")
    if returns_value(fn) and "\nReturns\n-------" not in doc and "\nYields\n------" not in doc:
        out.append(f"{where}: no 'Returns' section")
    return out


def module_docstring_problems(module: str, tree: ast.Module, methods=None) -> list[str]:
    defs = {n.name: n for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    out = []
    for name in all_names(tree) or []:
        node = defs.get(name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += docstring_problems(node, f"{module}.{name}")
        elif isinstance(node, ast.ClassDef):
            if not ast.get_docstring(node):
                out.append(f"{module}.{name}: class without docstring")
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        not m.name.startswith("_"):
                    out += docstring_problems(m, f"{module}.{name}.{m.name}", node, methods)
    return out


def test_every_public_module_has_all():
    bad = []
    for module, tree in public_modules().items():
        names = all_names(tree)
        if names is None:
            bad.append(f"{module}: no __all__")
            continue
        subpackage = PKG.joinpath(*module.split(".")[1:])
        missing = [n for n in names if n not in defined_names(tree)
                   and not (subpackage / f"{n}.py").exists()]
        if missing and "__getattr__" in defined_names(tree):
            # a lazily loading package (PEP 562): the name must really resolve
            loaded = importlib.import_module(module)
            missing = [n for n in missing if not hasattr(loaded, n)]
        if missing:
            bad.append(f"{module}: __all__ names undefined {missing}")
    assert not bad, "\n".join(bad)


def test_public_functions_have_numpydoc_docstrings():
    bad = []
    methods = documented_methods()
    for module, tree in public_modules().items():
        bad += module_docstring_problems(module, tree, methods)
    assert not bad, "\n".join(bad)


def test_no_private_names_imported_across_modules():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ImportFrom) and (node.level or
                                                     (node.module or "").startswith("rankmap")):
                bad += [f"{module_name(p)}:{node.lineno} imports {a.name} from {node.module}"
                        for a in node.names if a.name.startswith("_")
                        and not a.name.startswith("__")]
    assert not bad, "\n".join(bad)


def test_nothing_is_called_mapping():
    bad = []
    for p in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ClassDef) and node.name == "Mapping":
                bad.append(f"{module_name(p)}:{node.lineno} defines class Mapping")
            if isinstance(node, (ast.ImportFrom, ast.Import)):
                bad += [f"{module_name(p)}:{node.lineno} binds Mapping" for a in node.names
                        if (a.asname or a.name) == "Mapping"]
    assert not bad, "\n".join(bad)
