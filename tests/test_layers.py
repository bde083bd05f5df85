"""The layers contract (ARCHITECTURE.md), checked on the source with ``ast``.

Bottom to top: the kernel, the stages, the pipeline, then the session and
the programs (app, terminal chat, index CLI). A module imports only from its
own layer or below; ``eval/`` uses the stages and nothing in ``assistant/``
or ``rewriting/`` imports it; no module reaches into an underscore module
(or an underscore name) of another package; every package has ``__all__``.
Imports inside functions count too: deferring one hides it from nobody.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("assistant", "rewriting", "eval", "app", "server")

# Layer of each module prefix: the longest matching prefix wins.
LAYERS = {
    "assistant.kernel": 0,
    "assistant.retrieval": 1,
    "assistant.readers": 1,
    "assistant.encoders": 1,
    "rewriting": 1,
    "assistant.pipeline": 2,
    "assistant.session": 3,
    "assistant.chat": 3,
    "assistant.index": 3,
    "assistant": 3,  # the package's lazy public face
    "eval": 3,
    "app": 4,
    "server": 4,  # the Gradio server app.py is served on
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _sources(*folders: str) -> list[Path]:
    files = [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))]
    return files + ([ROOT / "app.py", ROOT / "server.py"] if "app" in folders else [])


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    return _imports_in(path.read_text(encoding="utf-8"), _package(path))


def _imports_in(source: str, package: str) -> list[tuple[int, str, str | None]]:
    """(line, absolute module, imported name or None) for every import of our packages."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([module] if module else []))
            found += [(node.lineno, module, alias.name) for alias in node.names]
    return [(line, module, name) for line, module, name in found if module.split(".")[0] in OURS]


def _layer(module: str) -> int | None:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    return None


def _violations(paths, check) -> list[str]:
    return [
        f"{p.relative_to(ROOT)}:{line}: {message}"
        for p in paths
        for line, module, name in _imports(p)
        for message in [check(_module_name(p), _package(p), module, name)]
        if message
    ]


def upward(importer: str, package: str, module: str, name: str | None) -> str:
    # "from assistant.kernel import Passage" -> assistant.kernel.Passage: the
    # longest known prefix gives the layer, for a name as for a submodule.
    target = f"{module}.{name}" if name else module
    mine, theirs = _layer(importer), _layer(target)
    if mine is not None and theirs is not None and theirs > mine:
        return f"{importer} (layer {mine}) imports {target} (layer {theirs})"
    return ""


def imports_eval(importer: str, package: str, module: str, name: str | None) -> str:
    return f"{importer} imports {module}" if module.split(".")[0] == "eval" else ""


def private(importer: str, package: str, module: str, name: str | None) -> str:
    parts = module.split(".") + ([name] if name else [])
    first = next((i for i, part in enumerate(parts) if part.startswith("_") and part != "__future__"), None)
    if first is None:
        return ""
    owner = ".".join(parts[:first])
    inside = package == owner or package.startswith(owner + ".") and owner.count(".") >= 1
    return "" if inside else f"{importer} imports {'.'.join(parts[: first + 1])}, private to {owner}"


def test_layers_point_one_way():
    assert _violations(_sources("assistant", "rewriting", "eval", "app"), upward) == []


def test_nothing_in_the_product_imports_eval():
    # app.py may: it injects the live metrics into the session.
    assert _violations(_sources("assistant", "rewriting"), imports_eval) == []


def test_no_module_reaches_into_another_package_s_private_parts():
    assert _violations(_sources("assistant", "rewriting", "eval", "app", "tests", "scripts"), private) == []


@pytest.mark.parametrize(
    "package",
    ["assistant", "assistant/kernel", "assistant/retrieval", "assistant/readers", "assistant/session", "rewriting", "eval"],
)
def test_every_package_has_a_public_face(package):
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets) for n in tree.body)


def test_the_contract_sees_violations():
    # The checks above must be able to fail: each kind of breach is reported.
    source = "from ..pipeline import Assistant\nfrom eval import metrics\nfrom assistant.retrieval._bm25 import X\n"
    found = _imports_in(source, "assistant.kernel")
    assert found == [(1, "assistant.pipeline", "Assistant"), (2, "eval", "metrics"), (3, "assistant.retrieval._bm25", "X")]
    importer, package = "assistant.kernel._probe", "assistant.kernel"
    assert upward(importer, package, *found[0][1:]).endswith("(layer 0) imports assistant.pipeline.Assistant (layer 2)")
    assert imports_eval(importer, package, *found[1][1:])
    assert private(importer, package, *found[2][1:]) == (
        "assistant.kernel._probe imports assistant.retrieval._bm25, private to assistant.retrieval"
    )
    assert private("assistant.retrieval._index", "assistant.retrieval", "assistant.retrieval._bm25", "X") == ""
    assert private("tests.test_x", "tests", "rewriting", "_read_recipe")
