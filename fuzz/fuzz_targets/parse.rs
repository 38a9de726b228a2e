//! The expression and condition parser on arbitrary text, over a scope with declared
//! symbols: any answer is fine, a panic or a hang is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut cx = symshape::Scope::new();
    for decl in ["n 0..=64", "m 1..=n", "k -inf..=inf", "b 8..=1024 multiple of 8"] {
        let _ = cx.declare_str(decl);
    }
    if let Ok(e) = cx.parse_expr(text) {
        let _ = cx.simplify(e);
        let _ = cx.range(e);
        let _ = e.to_string().parse::<symshape::Expr>();
    }
    if let Ok(c) = cx.parse_cond(text) {
        let _ = cx.prove_cond(c);
        let _ = cx.assume(c);
    }
    let _ = cx.declare_str(text);
});
