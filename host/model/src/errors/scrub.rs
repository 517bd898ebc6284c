//! Server paths out of `details`: map roots become `<map_root_N>`, the data
//! root `<data_root>`, any other absolute path `<path>`.

use serde_json::{Map, Value};

use crate::settings::Settings;

/// The keys of `details` that hold JSON pointers (into the call's arguments, or into a provider's
/// options), never filesystem paths: `/path` or `/cache/dir` is a pointer there, and stays as it is.
const POINTER_KEYS: [&str; 2] = ["field", "option"];

/// Replaces every server path in string values of `details` with a placeholder:
/// map roots become `<map_root_N>`, the data root `<data_root>`, any other
/// absolute path `<path>`. The `POINTER_KEYS` are exempt.
pub fn scrub_details(details: &mut Map<String, Value>, settings: &Settings) {
    for (key, value) in details.iter_mut() {
        if !POINTER_KEYS.contains(&key.as_str()) {
            scrub_value(value, settings);
        }
    }
}

fn scrub_value(value: &mut Value, settings: &Settings) {
    match value {
        Value::String(text) => *text = scrub_text(text, settings),
        Value::Array(items) => items.iter_mut().for_each(|item| scrub_value(item, settings)),
        Value::Object(map) => map.values_mut().for_each(|item| scrub_value(item, settings)),
        _ => {}
    }
}

pub fn scrub_text(text: &str, settings: &Settings) -> String {
    let mut known: Vec<(String, String)> =
        settings.map_roots.iter().enumerate().map(|(i, root)| (root.display().to_string(), format!("<map_root_{}>", i + 1))).collect();
    known.push((settings.data_root.display().to_string(), "<data_root>".to_owned()));
    known.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let mut out = text.to_owned();
    for (path, placeholder) in &known {
        out = replace_path_prefix(&out, path, placeholder);
    }
    // Any absolute path left: from a '/' at the start or after a separator, to the next separator.
    let mut scrubbed = String::with_capacity(out.len());
    let mut chars = out.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        let starts_path = c == '/' && previous.is_none_or(|p| p.is_whitespace() || "\"'`(=:,[".contains(p));
        if starts_path {
            while chars.peek().is_some_and(|n| !n.is_whitespace() && !"\"'`)],".contains(*n)) {
                chars.next();
            }
            scrubbed.push_str("<path>");
            previous = Some('>');
        } else {
            scrubbed.push(c);
            previous = Some(c);
        }
    }
    scrubbed
}

/// Replaces `path` where it is followed by a path boundary, so `/maps` does not match `/maps_evil`.
fn replace_path_prefix(text: &str, path: &str, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        out.push_str(&rest[..at]);
        if after.is_empty() || after.starts_with('/') || !after.starts_with(|c: char| c.is_alphanumeric() || "_-.".contains(c)) {
            out.push_str(placeholder);
        } else {
            out.push_str(path);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubbing_replaces_roots_with_placeholders_and_other_paths_entirely() {
        let s = crate::testing::settings_with_two_roots();
        assert_eq!(scrub_text("/data/maps/sub/a.png", &s), "<map_root_1>/sub/a.png");
        assert_eq!(scrub_text("/data/maps_evil/a.png", &s), "<path>");
        assert_eq!(scrub_text("open /srv/geomap/registry.json: denied", &s), "open <data_root>/registry.json: denied");
        assert_eq!(scrub_text("at (/home/u/x.rs:3) and '/etc/passwd'", &s), "at (<path>) and '<path>'");
        assert_eq!(scrub_text("a/b relative stays", &s), "a/b relative stays");
        assert_eq!(scrub_text("load from `/opt/x/lib.so`: libm.so: missing", &s), "load from `<path>`: libm.so: missing");
    }

    #[test]
    fn json_pointers_in_details_survive_scrubbing_however_much_they_look_like_paths() {
        let s = crate::testing::settings_with_two_roots();
        let serde_json::Value::Object(mut details) = serde_json::json!({
            "field": "/provider_options/fault-glossary/cache/dir",
            "option": "/data/maps/sub",
            "provider": "fault-glossary",
            "problem": "cannot read /data/maps/sub/a.png",
        }) else {
            unreachable!()
        };
        scrub_details(&mut details, &s);
        assert_eq!(details["field"], "/provider_options/fault-glossary/cache/dir");
        assert_eq!(details["option"], "/data/maps/sub", "a pointer that spells a map root is still a pointer");
        assert_eq!(details["problem"], "cannot read <map_root_1>/sub/a.png");
    }
}
