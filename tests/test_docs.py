"""README names every `details.reason`, `details.failure` and `details.problem` the code emits.

The values are read from the host's sources where they are written: `"reason": "…"` in details,
the first string of a provider adapter's `unknown(…)` or of a path failure's `(ErrorCode::…, "…", …)`
row, and the arms of the wire-name functions documented as such (`MapGone::reason`,
`CorruptProblem::reason`, `FailureReason::as_str`, `RuntimeFailure::as_str`, `ArgumentProblem::as_str`).
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PATTERNS = [
    r'"reason":\s*"(\w+)"',
    r'details\["reason"\]\s*=\s*json!\("(\w+)"\)',
    r'\bunknown\(\s*"(\w+)"',
    r'\(\s*ErrorCode::\w+,\s*"(\w+)",',
]
# A wire-name function: its doc comment names what it is, and its arms return the names.
WIRE_NAMES = r"/// The (?:`details\.\w+`|wire name)[^\n]*\n\s*pub fn (?:reason|as_str)\(&?self\) -> &'static str \{(.*?)\n    \}"


def emitted() -> dict[str, str]:
    found = {}
    for path in sorted((ROOT / "host").rglob("*.rs")):
        code = path.read_text().split("#[cfg(test)]")[0]
        for pattern in PATTERNS:
            for value in re.findall(pattern, code):
                found.setdefault(value, str(path.relative_to(ROOT)))
        for body in re.findall(WIRE_NAMES, code, re.S):
            for value in re.findall(r'=> "(\w+)"', body):
                found.setdefault(value, str(path.relative_to(ROOT)))
    return found


def test_every_reason_failure_and_problem_the_code_emits_is_in_the_readme():
    found = emitted()
    # The reader finds what it is meant to, in each of the places it reads (so it cannot pass by finding nothing).
    for sample in ["no_layout", "mount", "escapes_root", "withheld_by_operator", "cancelled", "invalid_bundle", "conflict", "malformed", "no_source"]:
        assert sample in found, f"tests/test_docs.py no longer finds {sample!r} in the sources: update its patterns"
    readme = (ROOT / "README.md").read_text()
    undocumented = {value: where for value, where in found.items() if f"`{value}`" not in readme}
    assert undocumented == {}, f"README.md does not name these values the code emits (value: file): {undocumented}"
