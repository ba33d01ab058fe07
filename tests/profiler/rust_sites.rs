// rust_sites.rs - a Rust program for profiler.rust: its allocation site
// must be named with its file and line, and the inlined calls of the
// standard library below it kept (rustc puts every function inside a
// DW_TAG_namespace, where libdw 0.188's dwarf_getscopes does not look).
#[inline(never)]
fn make_strings(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("item {}", i)).collect() // SITE_RUST
}

fn main() {
    let mut total = 0;
    for _ in 0..200 {
        let v = make_strings(1000);
        total += v.len();
    }
    println!("{}", total);
}
