"""The host's boundaries, checked from the code itself (`./dev test` runs this first).

1. Crates: each host crate (and the provider SDK) depends only on the host crates
   ARCHITECTURE.md allows it (read from `cargo metadata`), no crate depends on the server
   crate, no crate but the server reaches rmcp (the application crate included), and neither
   the assets command nor the SDK reaches GDAL, wasmtime, ONNX Runtime or rmcp (normal
   dependencies, followed transitively).
2. Modules: inside each host crate, no cycle between source files. A file's references are
   its `crate::…` paths and `super::<sibling>::…` paths, each resolved to the deepest module
   file that exists; a reference to one of the file's own ancestors (the facade it belongs
   to) is the module tree, not a dependency. Test code is not the crate's structure: a file's
   `#[cfg(test)] mod …` block at its end, and files declared only for tests, are left out.
3. Edges: the server's `batch` reaches the application crate (`geomap_app`) and never the MCP
   edge (`crate::mcp`, its tools among it): both edges call the same use cases.
4. Pixels: the application crate (`host/app`) reads no pixel. It hands a scan's windows to
   `geomap_vision`'s functions and never looks inside them: no byte of an `Rgb` buffer, no
   pixel's grey, no turned or resampled picture, no call of the OCR recogniser on a box
   (`PIXEL_WORK` names each; test code is left out).

Prints what it checked; exits 1 naming every broken rule.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

SERVER = "stratigraphic-amenity"
SDK = "geomap-provider-sdk"
# What each host crate may depend on among the host crates and the provider SDK (ARCHITECTURE.md,
# "Crates"). The SDK is what third parties build against: it depends on no host crate, and only the
# provider runtime depends on it (for the one options check the SDK's test harness runs too).
ALLOWED = {
    SDK: set(),
    "geomap-model": set(),
    "geomap-store": {"geomap-model"},
    "geomap-georef": {"geomap-model"},
    "geomap-export": {"geomap-model", "geomap-georef"},
    "geomap-assets": {"geomap-model"},
    "geomap-providers": {"geomap-model", SDK},
    "geomap-vision": {"geomap-model", "geomap-assets"},
    "geomap-app": {"geomap-model", "geomap-store", "geomap-georef", "geomap-export", "geomap-vision", "geomap-providers", "geomap-assets"},
    SERVER: {"geomap-app", "geomap-model", "geomap-store", "geomap-georef", "geomap-export", "geomap-vision", "geomap-providers", "geomap-assets"},
}
# Packages a crate must not reach through its normal dependencies.
FORBIDDEN = {name: {"rmcp"} for name in ALLOWED if name != SERVER}
FORBIDDEN["geomap-assets"] = {"rmcp", "gdal", "gdal-sys", "wasmtime", "wasmtime-wasi", "ort"}
FORBIDDEN[SDK] = {"rmcp", "gdal", "gdal-sys", "wasmtime", "wasmtime-wasi", "ort"}


def crate_problems(metadata):
    packages = {package["id"]: package for package in metadata["packages"]}
    nodes = {node["id"]: node for node in metadata["resolve"]["nodes"]}
    by_name = {packages[member]["name"]: member for member in metadata["workspace_members"]}
    problems = []
    for name in sorted(set(by_name) - set(ALLOWED)):
        if packages[by_name[name]]["manifest_path"].split("/")[-3] == "host":
            problems.append(f"{name} is a host crate ARCHITECTURE.md and tests/boundaries.py do not list")

    def normal_deps(package_id):
        return [dep["pkg"] for dep in nodes[package_id]["deps"] if any(kind["kind"] is None for kind in dep["dep_kinds"])]

    for name, allowed in ALLOWED.items():
        if name not in by_name:
            problems.append(f"{name} is not a workspace member")
            continue
        direct = {packages[dep]["name"] for dep in normal_deps(by_name[name])}
        for dep in sorted(direct & set(ALLOWED) - allowed):
            problems.append(f"{name} depends on {dep}, which it may not")
        reached, stack = set(), [by_name[name]]
        while stack:
            for dep in normal_deps(stack.pop()):
                if dep not in reached:
                    reached.add(dep)
                    stack.append(dep)
        for forbidden in sorted({packages[dep]["name"] for dep in reached} & FORBIDDEN.get(name, set())):
            problems.append(f"{name} reaches {forbidden}, which it may not")
        print(f"crate {name}: depends on {', '.join(sorted(direct & set(ALLOWED))) or 'no host crate'}; {len(reached)} packages in all")
    return problems, {name: Path(packages[by_name[name]]["manifest_path"]).parent / "src" for name in ALLOWED if name in by_name}


def module_of(source_root, path):
    """`a/b.rs` and `a/b/mod.rs` are module ("a", "b"); lib.rs and main.rs are the root."""
    parts = list(path.relative_to(source_root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.split("\n"))


def without_tests(text):
    """The file's text up to its test module (`#[cfg(test)]` then `mod …` at the start of a line)."""
    found = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod \w+ \{", text, re.M)
    return text[: found.start()] if found else text


def test_only(source_root, files):
    """The modules declared `#[cfg(test)] mod name;` in their parent."""
    only = set()
    for module, path in files.items():
        for name in re.findall(r"^#\[cfg\(test\)\]\s*\n\s*(?:pub(?:\(crate\))? )?mod (\w+);", path.read_text(), re.M):
            only.add(module + (name,))
    return only


def module_cycles(crate, source_root):
    files = {module_of(source_root, path): path for path in source_root.rglob("*.rs")}
    for module in test_only(source_root, files):
        files.pop(module, None)
    graph = {}
    for module, path in files.items():
        text = without_tests(strip_comments(path.read_text()))
        targets = set()
        for reference in re.findall(r"\bcrate((?:::\w+)+)", text):
            targets.add(tuple(reference.strip(":").split("::")))
        parent = module[:-1]
        for reference in re.findall(r"\bsuper((?:::\w+)+)", text):
            names = reference.strip(":").split("::")
            targets.add(parent + tuple(names))
        for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
            for name in re.findall(r"\b(\w+)\b", group):
                targets.add((name,))
        edges = set()
        for target in targets:
            while target and target not in files:
                target = target[:-1]
            if target and target != module and module[: len(target)] != target:
                edges.add(target)
        graph[module] = edges
    cycles, state = [], {}

    def visit(module, stack):
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target) :] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    name = lambda module: "::".join(module) or "crate"
    print(f"modules of {crate}: {len(files)} files, {sum(len(edges) for edges in graph.values())} references between them")
    return [f"{crate}: module cycle {' -> '.join(name(module) for module in cycle)}" for cycle in cycles]


def edge_problems(server_root):
    """`batch` calls the application, never the MCP edge."""
    batch = strip_comments((server_root / "batch.rs").read_text())
    problems = []
    if "geomap_app::" not in batch:
        problems.append("batch does not call the application crate (geomap_app)")
    if re.search(r"\bcrate::mcp\b|\bsuper::mcp\b|\bmcp::tools\b", batch):
        problems.append("batch reaches the MCP edge (crate::mcp): it must call geomap_app's use cases")
    print("edges: batch calls geomap_app" + ("" if not problems else ", and breaks a rule"))
    return problems


# What reading pixels looks like in Rust source, each with what it is.
PIXEL_WORK = {
    r"\.pixels\s*\[": "indexes an RGB buffer's bytes",
    r"\.pixels\.(?:iter\w*|chunks\w*|get\w*|as_slice|to_vec|fill)\b": "walks an RGB buffer's bytes",
    r"\bchunks_exact\(3\)": "walks RGB triples",
    r"\bgrey\(": "reads a pixel's grey",
    r"\.turned_about\(": "turns a picture",
    r"\.recognise\(": "runs the OCR recogniser on boxes of pixels",
}


def pixel_problems(app_root):
    """The application crate reads no pixel: each source file's non-test code against `PIXEL_WORK`."""
    problems, files = [], sorted(app_root.rglob("*.rs"))
    for path in files:
        text = without_tests(strip_comments(path.read_text()))
        for number, line in enumerate(text.split("\n"), start=1):
            for pattern, what in PIXEL_WORK.items():
                if re.search(pattern, line):
                    problems.append(f"{path.relative_to(app_root.parent)}:{number} {what}: pixel work belongs in geomap_vision")
    print(f"pixels: {len(files)} files of the application crate read no pixel" + ("" if not problems else ", but some do"))
    return problems


def main():
    workspace = Path(__file__).resolve().parent.parent
    output = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout
    problems, roots = crate_problems(json.loads(output))
    for crate, source_root in roots.items():
        problems += module_cycles(crate, source_root)
    problems += edge_problems(roots[SERVER])
    problems += pixel_problems(roots["geomap-app"])
    for problem in problems:
        print(f"BOUNDARY: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
