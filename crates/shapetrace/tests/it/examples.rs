//! Every script in `examples/` runs without error; its output is pinned.

#[test]
fn example_scripts_run_and_print_what_they_promise() {
    let paths = crate::example_scripts();
    for path in paths {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("script");
        let script = std::fs::read_to_string(&path).expect("a readable script");
        let out = shapetrace::run(&script);
        assert_eq!(out.error, None, "{} fails", path.display());
        insta::assert_snapshot!(format!("example_{name}"), out.to_string());
    }
}

#[test]
fn readme_trace_block_runs() {
    let readme = include_str!("../../../../README.md");
    let block = readme
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a ```text block with a trace");
    let out = shapetrace::run(block);
    assert_eq!(out.error, None);
    insta::assert_snapshot!(out.to_string());
}
