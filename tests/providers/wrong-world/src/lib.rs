//! A component that exports `geomap:provider/provider@0.2.0`, which this host does not load.

wit_bindgen::generate!({ path: "wit", world: "plugin" });

struct Later;

impl exports::geomap::provider::provider::Guest for Later {
    fn describe() -> String {
        "from the future".to_owned()
    }
}

export!(Later);
