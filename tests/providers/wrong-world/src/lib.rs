//! A component that exports `geomap:provider/provider@0.2.0`, which this host does not load.
//! Only the wasm build has content: its exports cannot link as a native library.
#![cfg(target_arch = "wasm32")]

wit_bindgen::generate!({ path: "wit", world: "plugin" });

struct Later;

impl exports::geomap::provider::provider::Guest for Later {
    fn describe() -> String {
        "from the future".to_owned()
    }
}

export!(Later);
