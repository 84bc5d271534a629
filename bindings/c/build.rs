//! Gives libclaimdag.so a soname that carries the major version of the workspace version,
//! `libclaimdag.so.0` for every 0.x release: the C ABI only grows within a major version
//! (docs/c-api.md, "ABI stability"), so a host linked against 0.1 loads any later 0.x.
//! `make install` puts the library in place as `libclaimdag.so.X.Y.Z` with the soname and
//! `libclaimdag.so` as links to it. Only ELF targets have sonames.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux"
            | "android"
            | "freebsd"
            | "netbsd"
            | "openbsd"
            | "dragonfly"
            | "solaris"
            | "illumos"
    );
    if elf {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libclaimdag.so.{major}");
    }
}
