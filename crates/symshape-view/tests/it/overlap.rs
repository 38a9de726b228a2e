//! `may_share_memory` and `shares_memory` against explicit offset sets, and against
//! NumPy's answers (`tests/data/shares_memory.txt`, made by `shares_memory.py`).

use std::collections::BTreeSet;

use proptest::prelude::*;
use symshape_view::{ConcreteView, MemoryOverlap, SHARES_MEMORY_MAX_WORK};

use crate::engine::model_of_view;
use crate::strategy::arb_raw;

/// The offsets of the valid elements.
fn offset_set(v: &ConcreteView) -> BTreeSet<i64> {
    model_of_view(v).table.into_iter().flatten().collect()
}

fn reference(a: &ConcreteView, b: &ConcreteView) -> (bool, bool) {
    let (sa, sb) = (offset_set(a), offset_set(b));
    let may = match (sa.first(), sa.last(), sb.first(), sb.last()) {
        (Some(&a0), Some(&a1), Some(&b0), Some(&b1)) => a0 <= b1 && b0 <= a1,
        _ => false,
    };
    (may, !sa.is_disjoint(&sb))
}

fn view(shape: &[i64], strides: &[i64], offset: i64) -> ConcreteView {
    ConcreteView::create(shape, Some(strides), offset, None).expect("valid view")
}

proptest! {
    /// Both answers equal the offset-set reference, masks included; a bounded search
    /// is exact or `TooHard`, never wrong.
    #[test]
    fn overlap_matches_offset_sets(a in arb_raw(3, 0, 5), b in arb_raw(3, 0, 5), work in 0u64..8) {
        let (Some(a), Some(b)) = (a.concrete_view(), b.concrete_view()) else { return Ok(()) };
        let (may, shares) = reference(&a, &b);
        prop_assert_eq!(a.may_share_memory(&b), may, "{} and {}", a, b);
        let want = if shares { MemoryOverlap::Yes } else { MemoryOverlap::No };
        prop_assert_eq!(a.shares_memory(&b, u64::MAX), want, "{} and {}", a, b);
        prop_assert_eq!(b.shares_memory(&a, u64::MAX), want, "{} and {}", b, a);
        let bounded = a.shares_memory(&b, work);
        prop_assert!(bounded == want || bounded == MemoryOverlap::TooHard, "{} and {}: {}", a, b, bounded);
        if !may {
            prop_assert_eq!(bounded, MemoryOverlap::No);
        }
    }
}

/// `[2, 3] [3, 1] 0`: a view as the data file writes it.
fn parse_view(text: &str) -> ConcreteView {
    let ints = |s: &str| -> Vec<i64> {
        s.trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.trim().parse().expect("integer"))
            .collect()
    };
    let (shape, rest) = text.trim().split_once("] ").expect("shape");
    let (strides, offset) = rest.rsplit_once(' ').expect("strides and offset");
    let shape = ints(shape);
    // NumPy keeps the offset of an empty view; this crate moves it to 0, which
    // changes no answer.
    view(&shape, &ints(strides), offset.parse().expect("offset"))
}

#[test]
fn numpy_shares_memory_table() {
    let table = include_str!("../data/shares_memory.txt");
    let mut n = 0;
    for line in table.lines() {
        let parts: Vec<&str> = line.split(" ; ").collect();
        let [a, b, may, shares] = parts[..] else {
            panic!("bad line {line}")
        };
        let (a, b) = (parse_view(a), parse_view(b));
        assert_eq!(a.may_share_memory(&b).to_string(), may, "{line}");
        assert_eq!(a.shares_memory(&b, u64::MAX).to_string(), shares, "{line}");
        n += 1;
    }
    assert_eq!(n, 500);
}

/// 16 axes of size 2 with unrelated strides near 2^54, read at offsets 0 and `offset`: the
/// question is a subset sum, which the exact search answers by trying index values.
const SUBSET_STRIDES: [i64; 16] = [
    21633630587957749,
    30030548117318367,
    3399564384451524,
    5374366687441980,
    28542460696515963,
    18140328881150115,
    14802981246389275,
    8690319955183126,
    18702787680874124,
    33311036325087144,
    15170244690883506,
    23011161025401478,
    28765666998012293,
    26195920375383462,
    10721468644386093,
    30014742096959742,
];

#[test]
fn the_default_work_bound_stops_exponential_searches() {
    let a = view(&[2; 16], &SUBSET_STRIDES, 0);
    let b = view(&[2; 16], &SUBSET_STRIDES, 1);
    // The exact answer needs more than the default bound and less than twice it.
    assert_eq!(
        a.shares_memory(&b, SHARES_MEMORY_MAX_WORK),
        MemoryOverlap::TooHard
    );
    assert_eq!(
        a.shares_memory(&b, 2 * SHARES_MEMORY_MAX_WORK),
        MemoryOverlap::No
    );
    // 36 such axes: without a bound the search does not finish in minutes; with the
    // default one it gives up after at most that many tries.
    let mut x: i64 = 1;
    let strides: Vec<i64> = (0..36)
        .map(|_| {
            x = (x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407))
            .rem_euclid(1 << 55);
            x.max(1 << 50)
        })
        .collect();
    let a = view(&[2; 36], &strides, 0);
    let b = view(&[2; 36], &strides, 1);
    assert_eq!(
        a.shares_memory(&b, SHARES_MEMORY_MAX_WORK),
        MemoryOverlap::TooHard
    );
}

#[test]
fn shares_memory_pinned() {
    let x = view(&[1_000_000], &[1], 0);
    let even = view(&[500_000], &[2], 0);
    let odd = view(&[500_000], &[2], 1);
    // x[::2] and x[1::2]: the extents overlap, the elements never meet; the gcd
    // answers without a search.
    assert!(even.may_share_memory(&odd));
    assert_eq!(even.shares_memory(&odd, 0), MemoryOverlap::No);
    assert_eq!(even.shares_memory(&x, 1), MemoryOverlap::Yes);
    // A transpose of a 1000 x 1000 matrix shares with its last row.
    let m = view(&[1000, 1000], &[1000, 1], 0);
    let t = view(&[1000, 1000], &[1, 1000], 0);
    let last_row = view(&[1000], &[1], 999_000);
    assert_eq!(t.shares_memory(&last_row, u64::MAX), MemoryOverlap::Yes);
    assert_eq!(m.shares_memory(&t, u64::MAX), MemoryOverlap::Yes);
    // Columns 0..3 and 3..6 of rows of 7: interleaved extents, disjoint elements.
    let left = view(&[100, 3], &[7, 1], 0);
    let right = view(&[100, 3], &[7, 1], 3);
    assert!(left.may_share_memory(&right));
    assert_eq!(left.shares_memory(&right, 0), MemoryOverlap::No);
    // Five unknowns with unrelated strides: ten tries are not enough.
    let a = view(&[10, 10, 10], &[97, 31, 7], 0);
    let b = view(&[10, 10], &[53, 11], 10);
    assert_eq!(a.shares_memory(&b, 10), MemoryOverlap::TooHard);
    assert_eq!(a.shares_memory(&b, u64::MAX), MemoryOverlap::Yes);
    // A mask counts only its valid elements: padding over x[3..6] is not x[0..3].
    let padded = ConcreteView::create(&[6], Some(&[1]), 0, Some(&[(3, 6)])).expect("masked");
    let head = view(&[3], &[1], 0);
    assert!(!padded.may_share_memory(&head));
    assert_eq!(padded.shares_memory(&head, u64::MAX), MemoryOverlap::No);
    assert_eq!(padded.extent(), Some((3, 5)));
    // Empty views share nothing and have no extent.
    let empty = view(&[0, 4], &[4, 1], 0);
    assert_eq!(empty.extent(), None);
    assert!(!empty.may_share_memory(&x));
    assert_eq!(empty.shares_memory(&x, u64::MAX), MemoryOverlap::No);
    // Broadcast views: one element is enough.
    let bcast = view(&[5, 5], &[0, 0], 7);
    assert_eq!(bcast.shares_memory(&x, 0), MemoryOverlap::Yes);
    assert_eq!(MemoryOverlap::TooHard.to_string(), "too hard");
}

proptest! {
    /// `is_injective` says whether two valid elements share an offset, as the explicit
    /// table of valid offsets does (broadcast and empty axes included).
    #[test]
    fn injectivity_matches_the_offset_table(raw in arb_raw(4, 0, 4)) {
        let Some(v) = raw.concrete_view() else { return Ok(()) };
        let offsets: Vec<i64> = model_of_view(&v).table.into_iter().flatten().collect();
        let distinct = offsets.iter().collect::<BTreeSet<_>>().len() == offsets.len();
        prop_assert_eq!(v.is_injective(), Some(distinct), "{}", v);
    }
}

#[test]
fn an_empty_axis_after_a_broadcast_one_is_injective() {
    let v = ConcreteView::create(&[2, 0], Some(&[0, 0]), 0, None).expect("view");
    assert_eq!(v.is_injective(), Some(true));
}
