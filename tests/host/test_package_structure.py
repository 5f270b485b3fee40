"""The packages' structure: no import cycle in the host package, every module imports on its
own, no module imports another module's private name, and the gateware and the boards do not
import the host (they share only ``latscope_defs`` with it).

Import statements are read from the source (every one, at module level or inside a
function), so a cycle that only a rarely called function closes is found too."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Package name -> its directory: the packages pyproject.toml installs.
PACKAGES = {
    "latscope": ROOT / "host" / "latscope",
    "latscope_defs": ROOT / "defs" / "latscope_defs",
    "latscope_gateware": ROOT / "gateware" / "latscope_gateware",
    "latscope_boards": ROOT / "boards" / "latscope_boards",
}
#: Directories whose Python files must not import a private name of another module.
PUBLIC_ONLY = [
    ROOT / "host",
    ROOT / "defs",
    ROOT / "gateware",
    ROOT / "boards",
    ROOT / "bench",
    ROOT / "examples",
]


def modules(package):
    """{module name: source path} of a package, subpackages included."""
    directory = PACKAGES[package]
    found = {}
    for path in sorted(directory.rglob("*.py")):
        parts = [package, *path.relative_to(directory).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(path, name=None):
    """The modules the import statements of the file ``path`` name, wherever they stand:
    ``from a.b import c`` names ``a.b.c`` if that is a module of ``known`` and ``a.b``
    otherwise. ``name``: the file's module name (resolves relative imports)."""
    package = None
    if name is not None:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level and package is None:
                module = "." * node.level + (node.module or "")
            elif node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:
                yield node, module, alias.name


def import_graph(package="latscope"):
    """{module: set of modules of the package it imports}."""
    known = modules(package)
    graph = {}
    for name, path in known.items():
        edges = graph.setdefault(name, set())
        for _, module, imported in imports(path, name):
            if imported is not None and f"{module}.{imported}" in known:
                edges.add(f"{module}.{imported}")
            elif module in known:
                edges.add(module)
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    state = {}  # module -> "open" (on the path) or "done"
    path = []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return path[path.index(target) :] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_in_the_host_package():
    cycle = find_cycle(import_graph("latscope"))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


#: Run in one fresh interpreter: imports the modules of argv[3] (what the packages import from
#: elsewhere) and checks that none of the packages of argv[2] came with them; then imports each
#: module of argv[1] in a forked child of its own. So every module still imports with none of
#: the packages loaded, at the cost of a fork instead of an interpreter that loads numpy and
#: Amaranth again. Prints a line for each module that does not import.
_IMPORT_EACH_ALONE = """
import importlib, os, sys
modules, packages, others = (argument.split() for argument in sys.argv[1:])
for name in others:
    try:
        importlib.import_module(name)
    except Exception:
        pass                        # not installed: the module that imports it fails below
loaded = {name.partition(".")[0] for name in sys.modules} & set(packages)
assert not loaded, f"importing {others} loaded {loaded}"
for module in modules:
    if os.fork() == 0:
        try:
            importlib.import_module(module)
        except BaseException as error:
            print(f"{module}: {type(error).__name__}: {error}", flush=True)
            os._exit(1)
        os._exit(0)
    os.wait()
"""


def outside_imports():
    """The modules the packages import from elsewhere (stdlib and third party), by their full
    names: loaded once before the forks, so that each fork imports only the project's own
    (scipy.stats alone takes about a second)."""
    names = set()
    for package in PACKAGES:
        for path in modules(package).values():
            for _, module, imported in imports(path):
                if module and not module.startswith("."):
                    # ``from scipy import stats``: stats may be a submodule (the script
                    # ignores names that are not modules).
                    names.update([module, f"{module}.{imported}"] if imported else [module])
    return sorted(name for name in names if name.partition(".")[0] not in PACKAGES)


def test_every_module_imports_on_its_own():
    names = [name for package in PACKAGES for name in modules(package)]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(path.parent) for path in PACKAGES.values()]
            + [p for p in [os.environ.get("PYTHONPATH")] if p]
        ),
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _IMPORT_EACH_ALONE,
            " ".join(names),
            " ".join(PACKAGES),
            " ".join(outside_imports()),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and not result.stdout, result.stdout + result.stderr


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(directory):
    """``file:line: name`` of every private name a file under ``directory`` imports from
    another module (``from m import _x``, ``import m._x``)."""
    found = []
    for path in sorted(directory.rglob("*.py")):
        for node, module, imported in imports(path, _module_name(path)):
            if module == "__future__":
                continue
            names = [imported] if imported is not None else module.split(".")
            if any(_private(name) for name in names if name):
                found.append(
                    f"{path.relative_to(ROOT)}:{node.lineno}: "
                    f"{module}{'.' + imported if imported else ''}"
                )
    return found


def _module_name(path):
    """The module name of a file of one of the packages (None: a script)."""
    for package, directory in PACKAGES.items():
        if directory in path.parents:
            parts = [package, *path.relative_to(directory).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return None


@pytest.mark.parametrize("directory", PUBLIC_ONLY, ids=lambda path: path.name)
def test_no_module_imports_a_private_name(directory):
    found = private_imports(directory)
    assert not found, "private names imported from another module:\n" + "\n".join(found)


@pytest.mark.parametrize("package", ["latscope_gateware", "latscope_boards"])
def test_gateware_and_boards_do_not_import_the_host(package):
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {module}"
        for name, path in modules(package).items()
        for node, module, _ in imports(path, name)
        if module == "latscope" or module.startswith("latscope.")
    ]
    assert not found, "imports of the host package:\n" + "\n".join(found)


#: The architecture page: the path of an event, naming every host module (issue 24).
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def names_module(text, name, path):
    """Whether ``text`` names the module ``name`` (dotted, not as the start of a longer
    dotted name: ``latscope.analysis`` is not named by ``latscope.analysis.batch``) or its
    file ``path`` (relative to the repository)."""
    dotted = r"(?<![\w.])" + re.escape(name) + r"(?!\w|\.\w)"
    return bool(re.search(dotted, text)) or path.as_posix() in text


def test_names_module_matches_whole_names_only():
    path = Path("host/latscope/analysis/__init__.py")
    assert names_module("`latscope.analysis`: the tables.", "latscope.analysis", path)
    assert not names_module("`latscope.analysis.batch`", "latscope.analysis", path)
    assert not names_module("`latscope.analysis2`", "latscope.analysis", path)
    assert names_module("see host/latscope/analysis/__init__.py", "latscope.analysis", path)


def test_architecture_page_names_every_host_module():
    text = ARCHITECTURE.read_text()
    missing = [
        name
        for name, path in modules("latscope").items()
        if not names_module(text, name, path.relative_to(ROOT))
    ]
    assert not missing, f"host modules not named in {ARCHITECTURE.name}: " + ", ".join(missing)
