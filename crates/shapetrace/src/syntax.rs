//! Lexical helpers for trace statements: comments, keywords, bracketed lists and clauses.
//!
//! Expressions themselves are parsed by `symshape`; this module only finds where each one starts
//! and ends, splitting at commas and keywords that are not nested inside brackets.

/// Removes a `#` comment and surrounding whitespace.
pub fn strip_comment(line: &str) -> &str {
    match line.find('#') {
        Some(at) => line[..at].trim(),
        None => line.trim(),
    }
}

/// Splits a statement into its keyword and the (trimmed) rest.
pub fn split_keyword(stmt: &str) -> (&str, &str) {
    match stmt.find(char::is_whitespace) {
        Some(at) => (&stmt[..at], stmt[at..].trim()),
        None => (stmt, ""),
    }
}

/// Splits `s` at every `sep` that is not nested in `()` or `[]`, trimming each part.
/// An empty or all-blank input gives no parts.
pub fn split_top(s: &str, sep: char) -> Result<Vec<&str>, String> {
    symshape::split_top_level(s, sep).map_err(|e| match e {
        symshape::Error::Parse { message, .. } => format!("{message} in `{s}`"),
        other => other.to_string(),
    })
}

/// Strips one pair of enclosing brackets `open`/`close` from `s`, which must enclose all of it.
pub fn enclosed(s: &str, open: char, close: char) -> Result<&str, String> {
    let s = s.trim();
    let inner = s
        .strip_prefix(open)
        .and_then(|r| r.strip_suffix(close))
        .ok_or_else(|| format!("expected `{open}...{close}`, found `{s}`"))?;
    // The brackets must match each other, not two separate groups like `[1] + [2]`.
    symshape::split_top_level(inner, open)
        .map_err(|_| format!("expected `{open}...{close}`, found `{s}`"))?;
    Ok(inner)
}

/// Parses `[a, b, c]` into its item texts.
pub fn list(s: &str) -> Result<Vec<&str>, String> {
    let items = split_top(enclosed(s, '[', ']')?, ',')?;
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!("empty item in list `{}`", s.trim()));
    }
    Ok(items)
}

/// Parses `[(a, b), (c, d)]` into pairs of item texts.
pub fn pair_list(s: &str) -> Result<Vec<(&str, &str)>, String> {
    list(s)?
        .into_iter()
        .map(|item| {
            let parts = split_top(enclosed(item, '(', ')')?, ',')?;
            match parts.as_slice() {
                [a, b] if !a.is_empty() && !b.is_empty() => Ok((*a, *b)),
                _ => Err(format!("expected a pair `(a, b)`, found `{item}`")),
            }
        })
        .collect()
}

/// A statement's leading text and its `keyword value` clauses.
pub type Clauses<'a> = (&'a str, Vec<(&'static str, &'a str)>);

/// Splits `s` into a leading part and `keyword value` clauses, where each keyword is one of
/// `keywords` appearing as a whole word outside brackets. Returns the leading part and the
/// clauses in order.
pub fn clauses<'a>(s: &'a str, keywords: &[&'static str]) -> Result<Clauses<'a>, String> {
    let mut cuts: Vec<(usize, &'static str)> = Vec::new();
    let mut depth = 0usize;
    let bytes = s.as_bytes();
    let mut at = 0;
    while at < s.len() {
        let c = bytes[at];
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            _ if depth == 0 && (at == 0 || !is_word_byte(bytes[at - 1])) => {
                if let Some(kw) = keywords.iter().find(|kw| {
                    // Bytes, not `str` slices: `at` may fall inside a multi-byte character,
                    // and an ASCII keyword only matches at a character boundary.
                    bytes[at..].starts_with(kw.as_bytes())
                        && bytes.get(at + kw.len()).is_none_or(|b| !is_word_byte(*b))
                }) {
                    cuts.push((at, kw));
                    at += kw.len();
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    let lead_end = cuts.first().map_or(s.len(), |(at, _)| *at);
    let mut res = Vec::with_capacity(cuts.len());
    for (k, (at, kw)) in cuts.iter().enumerate() {
        let end = cuts.get(k + 1).map_or(s.len(), |(next, _)| *next);
        let value = s[at + kw.len()..end].trim();
        if res.iter().any(|(seen, _)| seen == kw) {
            return Err(format!("`{kw}` given twice"));
        }
        res.push((*kw, value));
    }
    Ok((s[..lead_end].trim(), res))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_at_top_level_commas_only() {
        assert_eq!(list("[2, max(n, 3), 4]").unwrap(), ["2", "max(n, 3)", "4"]);
        assert_eq!(list("[]").unwrap(), Vec::<&str>::new());
        assert_eq!(
            pair_list("[(0, 4), (1, min(a, b))]").unwrap(),
            [("0", "4"), ("1", "min(a, b)")]
        );
        assert!(list("[1,,2]").is_err());
        assert!(list("[1] + [2]").is_err());
        assert!(pair_list("[(1, 2, 3)]").is_err());
    }

    #[test]
    fn clauses_find_whole_keywords_outside_brackets() {
        let (lead, cl) = clauses(
            "[4, offsets] strides [6, 1] offset n - 1 mask [(0, 4)]",
            &["strides", "offset", "mask"],
        )
        .unwrap();
        assert_eq!(lead, "[4, offsets]");
        assert_eq!(
            cl,
            [
                ("strides", "[6, 1]"),
                ("offset", "n - 1"),
                ("mask", "[(0, 4)]")
            ]
        );
        assert!(clauses("[1] offset 1 offset 2", &["offset"]).is_err());
    }
}
