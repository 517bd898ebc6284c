//! Link settings for the application's test executables.

fn main() {
    // The use cases' tests link both rusqlite's bundled SQLite (the registry) and GDAL, whose
    // GeoPackage driver links the system's libsqlite3. As in the server's executables
    // (host/server/build.rs), the bundled library's symbols stay out of the dynamic table, so GDAL's
    // calls never bind to our copy (they crashed the extraction test when they did).
    println!("cargo:rustc-link-arg=-Wl,--exclude-libs,ALL");
}
