//! Generated C of stacks with a copy at a random place: the copy is a level no op merges
//! across, and the emitted loops read through it what the kernels read.

use proptest::prelude::*;
use symshape_view::Op;

use crate::compiled::{build, build_on, check_stack, scope};

/// The copying op of a case.
fn copy_op(kind: u8) -> Op {
    match kind % 3 {
        0 => Op::Copy,
        1 => Op::Contiguous,
        _ => Op::FlattenCopy,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn emitted_c_reads_through_a_copy(
        base in 0u8..5,
        before in prop::collection::vec((0u8..10, any::<u8>(), any::<u8>()), 0..4),
        kind in any::<u8>(),
        after in prop::collection::vec((0u8..10, any::<u8>(), any::<u8>()), 1..4),
        seed in any::<u64>(),
    ) {
        let cx = scope();
        let copied = build(&cx, base, &before).apply(&cx, &copy_op(kind)).expect("a copy");
        let stack = build_on(&cx, copied, &after);
        check_stack(&cx, &stack, seed, 8);
    }
}
