//! Link settings for the server's executables.

fn main() {
    // rusqlite's bundled SQLite stays private to each executable. GDAL and PROJ link the system's
    // libsqlite3; were our sqlite3_* symbols exported, the dynamic linker would bind their calls to
    // our copy for some functions and to the system's for others, two SQLite libraries sharing one
    // state. Under 50 concurrent georeferences that corrupted the registry ("database disk image is
    // malformed"); with the bundled library's symbols kept out of the dynamic table it does not.
    println!("cargo:rustc-link-arg=-Wl,--exclude-libs,ALL");
}
