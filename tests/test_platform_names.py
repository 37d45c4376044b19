"""Platform knowledge lives in the platform packages (``zos/``, ``distributed/``) and reaches
the rest through the platform registry, ``mqlog/platforms.py`` (issue 41): a module of the
application layer, the Spark jobs or the CLI that branches on a platform's name (``"zos"``,
``"distributed"``) or imports a platform package directly is one more place a new platform
must be taught about.

No module does now: each platform's package exports its descriptor, the registry lists the
descriptors, and every other module asks a platform's descriptor
(``mqlog.core.descriptor.PlatformDescriptor``) rather than its name. The registry itself names a platform only in its
registry lines: the import of that platform's descriptor. (The core is kept free of platform
names by the import contracts, tests/test_layers.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("zos", "distributed")
#: the registry itself: where the platforms are named, by design
REGISTRY = "mqlog/platforms.py"
#: the modules that still name a platform, and how many times (string constants plus direct
#: imports of a platform package): none – a module added here is a step back
KNOWN: dict[str, int] = {}


def platform_names(path: Path) -> list[int]:
    """The lines of ``path`` that name a platform: a string constant that is a platform's name,
    or an import of a platform package."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and node.value in NAMES:
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if any(node.module == f"mqlog.{n}" or node.module.startswith(f"mqlog.{n}.") for n in NAMES):
                lines.append(node.lineno)
        elif isinstance(node, ast.Import):
            lines += [node.lineno for a in node.names if any(a.name.startswith(f"mqlog.{n}") for n in NAMES)]
    return sorted(lines)


def test_no_new_platform_names_outside_the_platforms():
    found = {}
    for base in ("mqlog", "spark"):
        for path in sorted((ROOT / base).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            lines = platform_names(path)
            if lines and name != REGISTRY:
                found[name] = lines
    grown = {name: lines for name, lines in found.items() if len(lines) > KNOWN.get(name, 0)}
    assert not grown, ("platform names outside the platform packages (put the knowledge in the platform's "
                       "package and reach it through mqlog/platforms.py): "
                       + "; ".join(f"{name} lines {lines} (allowed {KNOWN.get(name, 0)})" for name, lines in grown.items()))
    # a module that dropped below its count: lower KNOWN to keep the gain
    shrunk = {name: len(found.get(name, ())) for name, allowed in KNOWN.items() if len(found.get(name, ())) < allowed}
    assert not shrunk, f"fewer platform names than KNOWN allows, lower it: {shrunk}"


def test_the_check_sees_a_platform_name_and_a_platform_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('import os\nfrom mqlog.zos.config import configure\nif os.name == "distributed":\n    pass\n'
                      'import mqlog.distributed.space\nx = "zosrun"\n')
    assert platform_names(module) == [2, 3, 5]


def registry_lines(path: Path) -> list[int]:
    """The lines of the registry that name a platform other than by importing its descriptor
    (``from mqlog.<platform>.descriptor import DESCRIPTOR``, one line a platform)."""
    allowed = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.ImportFrom) and node.module in {f"mqlog.{n}.descriptor" for n in NAMES}
                and [a.name for a in node.names] == ["DESCRIPTOR"]):
            allowed.add(node.lineno)
    return [line for line in platform_names(path) if line not in allowed]


def test_the_registry_names_a_platform_only_in_its_registry_lines():
    assert registry_lines(ROOT / REGISTRY) == [], "the registry names a platform outside its registry lines"


def test_the_registry_check_sees_a_name_beside_the_registry_lines(tmp_path):
    module = tmp_path / "platforms.py"
    module.write_text('from mqlog.zos.descriptor import DESCRIPTOR as ZOS\nDEFAULT = "distributed"\n'
                      'from mqlog.distributed.config import LogConfig\n')
    assert registry_lines(module) == [2, 3]
