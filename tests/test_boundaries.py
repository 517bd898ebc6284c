"""tests/boundaries.py catches what it is there to catch: a forbidden crate dependency, a
package the assets command must not reach, a cycle between two source files, and pixel work in
the application crate."""

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("boundaries", Path(__file__).with_name("boundaries.py"))
boundaries = importlib.util.module_from_spec(spec)
spec.loader.exec_module(boundaries)


def metadata(tmp_path, edges):
    """A `cargo metadata` document for the host crates plus `gdal`, with `edges` as normal dependencies."""
    names = list(boundaries.ALLOWED) + ["gdal"]
    packages = []
    for name in names:
        folder = tmp_path / "host" / name
        (folder / "src").mkdir(parents=True)
        packages.append({"id": f"id-{name}", "name": name, "manifest_path": str(folder / "Cargo.toml")})
    nodes = [
        {"id": f"id-{name}", "deps": [{"pkg": f"id-{dep}", "dep_kinds": [{"kind": None}]} for dep in edges.get(name, [])]}
        for name in names
    ]
    members = [f"id-{name}" for name in boundaries.ALLOWED]
    return {"packages": packages, "resolve": {"nodes": nodes}, "workspace_members": members}


def test_the_allowed_graph_passes_and_each_forbidden_edge_is_named(tmp_path):
    allowed = {name: sorted(deps) for name, deps in boundaries.ALLOWED.items()}
    problems, _ = boundaries.crate_problems(metadata(tmp_path / "ok", allowed))
    assert problems == []

    broken = dict(allowed)
    broken["geomap-store"] = allowed["geomap-store"] + ["geomap-vision"]
    broken["geomap-assets"] = allowed["geomap-assets"] + ["stratigraphic-amenity"]
    broken["geomap-model"] = ["gdal"]
    problems, _ = boundaries.crate_problems(metadata(tmp_path / "broken", broken))
    assert "geomap-store depends on geomap-vision, which it may not" in problems
    assert "geomap-assets depends on stratigraphic-amenity, which it may not" in problems
    # The assets crate reaches GDAL through the model crate, and rmcp through nothing: only GDAL is named.
    assert "geomap-assets reaches gdal, which it may not" in problems
    assert not any("rmcp" in problem for problem in problems), problems


def test_a_cycle_between_two_files_is_named_and_a_parent_facade_is_not(tmp_path):
    src = tmp_path / "src"
    (src / "mcp").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod http;\npub mod mcp;\n")
    (src / "mcp" / "mod.rs").write_text("pub mod tools;\npub struct ServerState;\nuse crate::mcp::tools::ToolName;\n")
    (src / "mcp" / "tools.rs").write_text("use super::ServerState; // the parent facade: not a cycle\npub enum ToolName {}\n")
    (src / "http.rs").write_text("use crate::mcp::tools::ToolName;\n")
    assert boundaries.module_cycles("demo", src) == []

    (src / "mcp" / "tools.rs").write_text("use crate::http::Connection;\npub enum ToolName {}\n")
    cycles = boundaries.module_cycles("demo", src)
    assert cycles == ["demo: module cycle http -> mcp::tools -> http"], cycles


def test_pixel_work_in_the_application_is_named_and_handing_windows_on_is_not(tmp_path):
    src = tmp_path / "app" / "src"
    src.mkdir(parents=True)
    (src / "units.rs").write_text(
        "use geomap_vision::image::Rgb;\n"
        "fn sample(map: &Map) -> Result<Rgb, AppError> { map.window(region) } // grey(p) in a comment\n"
        "fn count(tally: &Tally) -> u64 { tally.area_px[0] }\n"
        "#[cfg(test)]\nmod tests {\n    fn picture(rgb: &Rgb) -> u8 { grey(&rgb.pixels[0..3]) }\n}\n"
    )
    assert boundaries.pixel_problems(src) == []

    (src / "dips.rs").write_text(
        "fn dip(window: &Rgb, reader: &Reader) {\n"
        "    let dark = window.pixels.chunks_exact(3).filter(|p| grey(p) < 90).count();\n"
        "    let first = window.pixels[0];\n"
        "    reader.recognise(window, boxes, 0.6);\n"
        "}\n"
    )
    problems = boundaries.pixel_problems(src)
    assert any(p.startswith("src/dips.rs:2 walks an RGB buffer's bytes") for p in problems), problems
    assert any(p.startswith("src/dips.rs:2 reads a pixel's grey") for p in problems), problems
    assert any(p.startswith("src/dips.rs:3 indexes an RGB buffer's bytes") for p in problems), problems
    assert any(p.startswith("src/dips.rs:4 runs the OCR recogniser") for p in problems), problems
    assert not any("units.rs" in p for p in problems), problems


def test_the_workspace_keeps_its_boundaries():
    assert boundaries.main() == 0
