"""ARCHITECTURE.md names only what exists, and its crates table says what tests/boundaries.py enforces.

Plain Python: no server, no packages. What is checked, on the page without its fenced code blocks:

1. Paths. A backquoted token is a repository path when it contains `/` or ends in one of
   PATH_SUFFIXES; it must exist relative to the repository root (write paths from the root:
   `host/app/src/units.rs`, not `units.rs`). A trailing `/` names a folder. Not repository paths,
   so not checked (see `not_a_path`): tokens with whitespace or a placeholder (`<>{}*$…`, as in
   `tests/test_*.py`, `providers/<name>/`, `$GEOMAP_DATA_ROOT/cache/providers/`); URIs and other
   `scheme:` names (`geomap://maps/…`, `geomap:provider@0.1.0`); absolute paths (HTTP routes such
   as `/mcp`, the sandbox's `/assets/…`, JSON pointers such as `/cursor`); paths outside the
   repository (`../shared/…`, the workplace's); what builds and `./dev` create (GENERATED);
   versioned schema names (`geomap-error/v1`); MCP method names (`tools/list`); Rust paths.
2. Rust paths. A backquoted `a::b::c` (maybe ending in `()` or `!`) must resolve. After a crate
   name (a `geomap_*` crate, `stratigraphic_amenity`, `geomap_provider_sdk`: CRATES) each segment
   is a module of that crate, a file `b.rs` or a folder `b/` beside the module before it; from the
   first segment that is not a module on, each is declared somewhere in that crate's sources
   (`fn struct enum trait type const static mod union macro_rules!`, an enum variant, a `pub`
   field, or a name a `pub use` re-exports). A path that starts otherwise (`mcp::tools::Tool`,
   `App::start`) is tried in every crate of CRATES, its first segment a module anywhere in the
   crate or a declared item. Paths into other projects' crates (EXTERNAL: `std::…`, `cap_std::…`)
   are not checked. Write paths as the sources declare them: a glob re-export is not followed.
3. Names. A backquoted CamelCase identifier (`AppError`, `ProviderPool`) is declared in some crate
   of CRATES or is a class of the Python tests (`Server` in tests/conftest.py), and a backquoted
   `name!` is a `macro_rules!` of CRATES, unless it is one of EXTERNAL_NAMES (another project's
   identifiers the page names).
4. The table under "## Crates" has one row per crate of tests/boundaries.py's `ALLOWED`, with
   exactly its allowed host crates ("may depend on") and its `FORBIDDEN` packages ("must not
   reach").
5. The page has at most MAX_WORDS words (whitespace-separated, code blocks and tables included).
"""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"
MAX_WORDS = 5000

PATH_SUFFIXES = (".rs", ".py", ".toml", ".wit", ".sql", ".md", ".yml", ".yaml", ".txt", ".lock")
# Made by cargo and ./dev, ignored by git: absent from a fresh clone.
GENERATED = ("target/", "tests/.venv/", "tests/.cache/", "tests/node_modules/")
MCP_METHOD = re.compile(r"(tools|resources|prompts|notifications|elicitation|completion|logging)/\w+")
SCHEMA_NAME = re.compile(r"geomap-[a-z-]+/v\d+")
RUST_PATH = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+(?:\(\)|!)?")
CAMEL_CASE = re.compile(r"[A-Z][a-z0-9]+[A-Za-z0-9]*")
MACRO = re.compile(r"[a-z_]\w*!")
# Other projects' crates, whose paths the page may name without this test reading them.
EXTERNAL = {
    "std", "core", "alloc", "tokio", "tokio_util", "futures", "serde", "serde_json", "schemars", "rmcp", "hyper", "http",
    "cap_std", "rusqlite", "tokio_postgres", "gdal", "gdal_sys", "wasmtime", "wasmtime_wasi", "ort", "image",
    "fast_image_resize", "reqwest", "rustls", "jsonschema", "clap", "tracing", "tracing_subscriber", "wit_bindgen",
}
# Other projects' identifiers the page names in backquotes.
EXTERNAL_NAMES = {"TraditionalGisOrder"}


def load_boundaries():
    spec = importlib.util.spec_from_file_location("boundaries", ROOT / "tests" / "boundaries.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prose(text: str) -> str:
    """The page without its fenced code blocks (drawings, not names to check)."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.S | re.M)


def backquoted(text: str) -> list[str]:
    """The code spans of the page (one may run over a line break inside a paragraph)."""
    return [" ".join(span.split()) for span in re.findall(r"`((?:[^`\n]|\n(?!\s*\n))+)`", prose(text))]


def not_a_path(token: str) -> bool:
    return (
        any(c.isspace() for c in token)
        or any(c in token for c in "<>{}*$…")
        or ":" in token  # URIs, `scheme:` names and Rust paths
        or token.startswith(("/", "../"))
        or token.startswith(GENERATED)
        or SCHEMA_NAME.fullmatch(token) is not None
        or MCP_METHOD.fullmatch(token) is not None
    )


def looks_like_path(token: str) -> bool:
    return ("/" in token or token.endswith(PATH_SUFFIXES)) and not not_a_path(token)


def crates() -> dict[str, Path]:
    """Rust name → source folder of every host crate and the SDK, from their manifests."""
    found = {}
    for manifest in [*sorted((ROOT / "host").glob("*/Cargo.toml")), ROOT / "sdk" / "Cargo.toml"]:
        name = re.search(r'^name\s*=\s*"([^"]+)"', manifest.read_text(), re.M).group(1)
        found[name.replace("-", "_")] = manifest.parent / "src"
    return found


def code(path: Path) -> str:
    """A source file without its line comments (so prose in doc comments declares nothing)."""
    return re.sub(r"(?<![:\"])//.*$", "", path.read_text(), flags=re.M)


def enum_variants(text: str) -> set[str]:
    """The variants of every enum: the capitalised names that start a line directly inside its braces."""
    names = set()
    for start in re.finditer(r"\benum\s+\w+[^{;]*\{", text):
        end, depth = start.end(), 1
        while end < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        depth = 0
        for line in text[start.end() : end - 1].split("\n"):
            variant = re.match(r"\s*([A-Z]\w*)\b", line)
            if depth == 0 and variant:
                names.add(variant.group(1))
            depth += sum(line.count(c) for c in "{([") - sum(line.count(c) for c in "})]")
    return names


def declared(source: Path) -> set[str]:
    """Every name the crate's sources declare, re-export, or use as an enum variant or pub field."""
    names = set()
    for path in source.rglob("*.rs"):
        text = code(path)
        names.update(re.findall(r"\b(?:fn|struct|enum|trait|type|const|static|mod|union)\s+([A-Za-z_]\w*)", text))
        names.update(re.findall(r"\bmacro_rules!\s*([A-Za-z_]\w*)", text))
        names.update(re.findall(r"\bpub(?:\([^)]*\))?\s+([a-z_]\w*)\s*:", text))
        for reexport in re.findall(r"\bpub\s+use\s+([^;]+);", text):
            names.update(re.findall(r"[A-Za-z_]\w*", reexport))
        names.update(enum_variants(text))
    return names


def python_names() -> set[str]:
    """The classes and functions the Python tests and helpers define."""
    names = set()
    for path in [*(ROOT / "tests").glob("*.py"), *(ROOT / "tests" / "bench").glob("*.py")]:
        names.update(re.findall(r"^\s*(?:class|def|async def)\s+(\w+)", path.read_text(), re.M))
    return names


def walk(position: Path, segments: list[str], names: set[str]) -> bool:
    """`segments` from module folder `position`: modules while they are, then declared items."""
    for index, segment in enumerate(segments):
        if (position / f"{segment}.rs").is_file() or (position / segment).is_dir():
            position = position / segment
            continue
        return all(name in names for name in segments[index:])
    return True


def resolves(path: str, sources: dict[str, Path], names: dict[str, set[str]]) -> bool:
    """Whether the Rust path `path` names a module or declared item of CRATES (see the module's doc)."""
    segments = path.removesuffix("()").removesuffix("!").split("::")
    first, rest = segments[0], segments[1:]
    if first in sources:
        return walk(sources[first], rest, names[first])
    if first in ("crate", "self", "super"):
        return any(walk(source, rest, names[crate]) for crate, source in sources.items())
    for crate, source in sources.items():
        modules = {file.with_suffix("") for file in source.rglob(f"{first}.rs")} | {folder for folder in source.rglob(first) if folder.is_dir()}
        if any(walk(module, rest, names[crate]) for module in modules):
            return True
        if first in names[crate] and all(name in names[crate] for name in rest):
            return True
    return False


TABLE_COLUMNS = ("crate", "may depend on", "must not reach")


def crates_table(text: str) -> dict[str, dict[str, set[str]]]:
    """The rows of the table under "## Crates": crate → column → the backquoted names in it."""
    section = text.split("\n## Crates\n", 1)[-1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0]] if rows else []
    assert set(TABLE_COLUMNS) <= set(header), f'ARCHITECTURE.md needs a table under "## Crates" with the columns {TABLE_COLUMNS}'
    table = {}
    for row in rows[2:]:
        cells = {column: set(re.findall(r"`([^`]+)`", cell)) for column, cell in zip(header, row)}
        assert len(cells["crate"]) == 1, f"a row of the crates table names no crate, or several: {row}"
        table[next(iter(cells["crate"]))] = cells
    return table


def test_architecture_names_only_what_exists_and_matches_the_boundaries():
    text = DOC.read_text()
    tokens = backquoted(text)

    paths = sorted({token for token in tokens if looks_like_path(token)})
    missing_paths = [path for path in paths if not (ROOT / path).exists() or (path.endswith("/") and not (ROOT / path).is_dir())]

    sources = crates()
    names = {crate: declared(source) for crate, source in sources.items()}
    everywhere = set().union(*names.values(), python_names())
    rust_paths = sorted({token for token in tokens if RUST_PATH.fullmatch(token) and token.split("::")[0] not in EXTERNAL})
    unresolved = [path for path in rust_paths if not resolves(path, sources, names)]

    identifiers = sorted({token for token in tokens if (CAMEL_CASE.fullmatch(token) or MACRO.fullmatch(token)) and token not in EXTERNAL_NAMES})
    undeclared = [name for name in identifiers if name.removesuffix("!") not in everywhere]

    boundaries = load_boundaries()
    table = crates_table(text)
    table_problems = []
    if set(table) != set(boundaries.ALLOWED):
        table_problems.append(f"the table lists {sorted(table)}, tests/boundaries.py's ALLOWED {sorted(boundaries.ALLOWED)}")
    for crate, row in table.items():
        if crate in boundaries.ALLOWED and row["may depend on"] != boundaries.ALLOWED[crate]:
            table_problems.append(f"{crate} may depend on {sorted(boundaries.ALLOWED[crate])}, the table says {sorted(row['may depend on'])}")
        if row["must not reach"] != boundaries.FORBIDDEN.get(crate, set()):
            table_problems.append(f"{crate} must not reach {sorted(boundaries.FORBIDDEN.get(crate, set()))}, the table says {sorted(row['must not reach'])}")

    words = len(text.split())
    print(f"ARCHITECTURE.md: {words} words; {len(paths)} paths, {len(rust_paths)} Rust paths, {len(identifiers)} names, {len(table)} crates checked")
    assert paths and rust_paths and identifiers, "the checks found nothing to check: has the page's style changed?"
    assert missing_paths == [], f"ARCHITECTURE.md names paths that do not exist (write them from the repository root): {missing_paths}"
    assert unresolved == [], f"ARCHITECTURE.md names Rust paths the sources do not declare: {unresolved}"
    assert undeclared == [], f"ARCHITECTURE.md names types or macros the sources do not declare: {undeclared}"
    assert table_problems == [], "ARCHITECTURE.md's crates table and tests/boundaries.py disagree:\n" + "\n".join(table_problems)
    assert words <= MAX_WORDS, f"ARCHITECTURE.md has {words} words; a code map stays at most {MAX_WORDS}"
