//! Snapshots of loop plans (the text `shapetrace plan` prints).

use crate::gen::{lay, WithMask};
use symshape_kernels::{plan_copy_into, plan_materialize, ConcreteStack, ConcreteView, Levels};

/// Snapshots the plan of materializing `view` as f32 under `name`.
fn check(view: &impl Levels, name: &str) {
    let plan = plan_materialize::<f32>(view).unwrap();
    insta::assert_snapshot!(name, plan.to_string());
}

#[test]
fn plans() {
    check(&lay(&[4, 8], &[8, 1], 0), "contiguous");
    check(&lay(&[4096, 4096], &[1, 4096], 0), "transpose");
    check(&lay(&[8, 16, 32], &[1, 256, 8], 0), "permute_3d");
    check(&lay(&[8, 8], &[-8, -1], 63), "flip");
    // Whole rows in permuted order: rows visited in source order.
    check(&lay(&[4, 8, 16], &[16, 64, 1], 0), "permute_rows");
    check(
        &lay(&[4, 6], &[4, 1], -5)
            .with_mask(&[(1, 3), (1, 5)])
            .unwrap(),
        "pad",
    );
    check(&lay(&[4, 4], &[8, 2], 0), "step");
    check(&lay(&[4, 4], &[0, 1], 0), "broadcast_rows");
    check(&lay(&[4, 4], &[1, 0], 0), "broadcast_columns");
    check(&lay(&[1, 5, 1], &[9, 1, 9], 0), "unit_axes");
    check(&lay(&[0, 5], &[5, 1], 0), "empty");
    // A reshape of a transpose: [4, 6] transposed, read as [2, 3, 4]. Merges.
    let s = ConcreteStack::unmerged(vec![
        lay(&[6, 4], &[1, 6], 0),
        lay(&[2, 3, 4], &[12, 4, 1], 0),
    ])
    .unwrap();
    check(&s, "stack_merged");
    // The transpose read as [24]: not one view, but one in the finer shape [6, 4].
    let s = ConcreteStack::unmerged(vec![lay(&[6, 4], &[1, 6], 0), lay(&[24], &[1], 0)]).unwrap();
    check(&s, "stack_refined");
    // Every other element of the transpose read as [24]: no cut helps, an offset table.
    let s = ConcreteStack::unmerged(vec![lay(&[6, 4], &[1, 6], 0), lay(&[12], &[2], 0)]).unwrap();
    check(&s, "stack_table");
    // Padding below a reshape.
    let s = ConcreteStack::unmerged(vec![
        lay(&[4, 4], &[2, 1], -3)
            .with_mask(&[(1, 3), (1, 3)])
            .unwrap(),
        lay(&[2, 8], &[8, 1], 0),
    ])
    .unwrap();
    check(&s, "stack_masked");
    check(&im2col(), "stack_im2col");
}

/// im2col of a conv1d: `x [2, 3, 10]` padded by one on its last axis, windows of 3 unfolded
/// and permuted to `[2, 10, 3, 3]`, read as the `[20, 9]` matrix. The windows cross the
/// padding only at the ends of a row, so the plan cuts those off and needs no table.
pub fn im2col() -> ConcreteStack {
    ConcreteStack::unmerged(vec![
        lay(&[2, 3, 12], &[30, 10, 1], -1)
            .with_mask(&[(0, 2), (0, 3), (1, 11)])
            .unwrap(),
        lay(&[2, 10, 3, 3], &[36, 1, 12, 1], 0),
        lay(&[20, 9], &[9, 1], 0),
    ])
    .unwrap()
}

#[test]
fn copy_plans() {
    // a[::2, :] = b.T over a 6 x 3 buffer.
    let dst = lay(&[3, 3], &[6, 1], 0);
    insta::assert_snapshot!(
        "copy_strided_dst",
        plan_copy_into::<i64>(&lay(&[3, 3], &[1, 3], 0), &dst)
            .unwrap()
            .to_string()
    );
    // Destination with negative strides is reversed to make the source contiguous.
    let dst = lay(&[3, 4], &[-4, -1], 11);
    insta::assert_snapshot!(
        "copy_reversed_both",
        plan_copy_into::<u8>(&lay(&[3, 4], &[-4, -1], 11), &dst)
            .unwrap()
            .to_string()
    );
    // Masked destination: only the inside is written.
    let dst = lay(&[4, 4], &[4, 1], 0)
        .with_mask(&[(1, 3), (0, 4)])
        .unwrap();
    insta::assert_snapshot!(
        "copy_masked_dst",
        plan_copy_into::<f64>(&lay(&[4, 4], &[1, 4], 0), &dst)
            .unwrap()
            .to_string()
    );
}

/// im2col of a causal conv1d with a kernel of 4: `x [2, 3, 512]` with 3 zeros before each
/// row, windows of 4: the first three windows of a row cross the padding, each in its own
/// way, so the plan cuts them off one by one (edge cuts up to four elements in) and reads no
/// table.
#[test]
fn a_causal_im2col_with_a_pad_of_three_is_cut_into_boxes() {
    let s = ConcreteStack::unmerged(vec![
        lay(&[2, 3, 515], &[1536, 512, 1], -3)
            .with_mask(&[(0, 2), (0, 3), (3, 515)])
            .unwrap(),
        lay(&[2, 3, 512, 4], &[1545, 515, 1, 1], 0),
    ])
    .unwrap();
    assert_eq!(s.levels().len(), 2);
    let plan = plan_materialize::<f32>(&s).unwrap().to_string();
    assert!(!plan.contains("table"), "{plan}");
    let buf: Vec<i64> = (0..3072).collect();
    let got = symshape_kernels::materialize(symshape_kernels::Input::new(&buf, &s).pad(-1))
        .unwrap()
        .values;
    assert_eq!(got, crate::reference::materialize(&buf, s.levels(), -1));
}

/// im2col of a causal conv1d over a channels-last input: `x [b, s, c]` read as `[b, c, s]`,
/// `k - 1` zeros before the first token, windows of `k` every `step` tokens. The source's
/// unit axis is the channel and the windows are short, so the boxes inside the padding tile
/// channels by tokens, whole windows inside each tile (`tiled rows`).
pub fn channels_last_im2col(b: usize, s: usize, c: usize, k: usize, step: usize) -> ConcreteStack {
    let (si, ci, ki) = (s as isize, c as isize, k as isize);
    let padded = si + ki - 1;
    ConcreteStack::unmerged(vec![
        lay(&[b, c, s + k - 1], &[si * ci, 1, ci], -(ki - 1) * ci)
            .with_mask(&[(0, b), (0, c), (k - 1, s + k - 1)])
            .unwrap(),
        lay(
            &[b, c, (s - 1) / step + 1, k],
            &[ci * padded, padded, step as isize, 1],
            0,
        ),
    ])
    .unwrap()
}

#[test]
fn a_channels_last_im2col_tiles_channels_by_tokens() {
    check(
        &channels_last_im2col(2, 20, 16, 4, 1),
        "channels_last_im2col",
    );
    // Blocks that do not divide the axes (tokens not a multiple of 16, channels past 512),
    // every window length the kernel specializes, and windows that do not overlap alike.
    let cases = [
        (2, 20, 16, 4, 1),
        (1, 37, 600, 4, 1),
        (3, 24, 8, 4, 1),
        (1, 530, 40, 4, 1),
        (1, 40, 9, 2, 1),
        (2, 41, 17, 3, 1),
        (1, 50, 24, 5, 1),
        (1, 33, 16, 6, 1),
        (1, 70, 20, 7, 1),
        (1, 60, 16, 4, 2),
        (2, 80, 12, 3, 2),
    ];
    for (b, s, c, k, step) in cases {
        let st = channels_last_im2col(b, s, c, k, step);
        let plan = plan_materialize::<i64>(&st).unwrap().to_string();
        assert!(plan.contains("tiled rows"), "{plan}");
        let buf: Vec<i64> = (0..(b * s * c) as i64).collect();
        let got = symshape_kernels::materialize(symshape_kernels::Input::new(&buf, &st).pad(-1))
            .unwrap()
            .values;
        assert_eq!(
            got,
            crate::reference::materialize(&buf, st.levels(), -1),
            "{b} {s} {c} {k} {step}"
        );
    }
}

/// A causal mask (pad, reshape, expand, reshape, pad, reshape, shrink, flip): one box of
/// masked rows whose runs end on the diagonal; expanded over a batch, the batch is one more
/// outer loop of the same box.
#[test]
fn causal_masks_are_masked_rows() {
    check(&crate::props::causal_mask(12, 4, true, 1), "causal_mask");
    check(
        &crate::props::causal_mask(10, 0, false, 3),
        "causal_mask_batch",
    );
}

/// A caller asks a plan before running it whether it reads an offset table, and why.
#[test]
fn the_plan_says_why_it_reads_a_table() {
    let table = |s: &ConcreteStack, dst: Option<ConcreteView>| {
        let plan = match dst {
            None => plan_materialize::<f32>(s).unwrap(),
            Some(d) => plan_copy_into::<f32>(s, &d).unwrap(),
        };
        match plan.table() {
            None => "no table".to_string(),
            Some(t) => format!("{t:?}: {}", t.reason),
        }
    };
    let transpose = lay(&[6, 4], &[1, 6], 0);
    // Every other element of a transpose, read as [12]: each row crosses rows below.
    let every_other =
        ConcreteStack::unmerged(vec![transpose.clone(), lay(&[12], &[2], 0)]).unwrap();
    insta::assert_snapshot!(table(&every_other, None), @"TableUse { levels: 2, entries: 24, per_top_element: false, reason: RowsSpanRows }: a row of the top reads more than one row of the level below");
    let short = ConcreteStack::unmerged(vec![transpose.clone(), lay(&[3, 4], &[8, 2], 0)]).unwrap();
    insta::assert_snapshot!(table(&short, None), @"TableUse { levels: 2, entries: 24, per_top_element: false, reason: ShortRows }: rows shorter than 8 elements");
    let masked = lay(&[12], &[1], 0).with_mask(&[(1, 11)]).unwrap();
    insta::assert_snapshot!(table(&every_other, Some(masked)), @"TableUse { levels: 2, entries: 24, per_top_element: false, reason: MaskedDestination }: the destination is masked");
    insta::assert_snapshot!(table(&crate::props::causal_mask(16, 8, true, 2), None), @"no table");
}

/// The box line of a plan (its last line).
fn box_line(plan: &symshape_kernels::LoopPlan<'_>) -> String {
    plan.to_string()
        .lines()
        .last()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Whole rows go in source order, but for the shorter of the last two axes inside where the
/// destination lays rows in order over them: merging heads (`[8, 12, 512, 64]` permuted `0,
/// 2, 1, 3`) visits the 12 heads inside each token (the destination written in order, the
/// source read as 12 streams); the write into a head-major cache, the same axes the other
/// way, the 12 heads inside each token too, in source order (the source read in order, the
/// destination written in rows 128 KiB apart); the `1, 0, 2` permute keeps source order.
#[test]
fn whole_rows_keep_source_order_but_the_shorter_axis_inside() {
    let heads = lay(&[8, 512, 12, 64], &[393216, 64, 32768, 1], 0);
    let plan = plan_materialize::<f32>(&heads).unwrap();
    insta::assert_snapshot!(box_line(&plan), @"box [0..8, 0..512, 0..12, 0..64]: copy_from_slice [8, 512, 12, 64] dst @0 [393216, 768, 64, 1] src @0 [393216, 64, 32768, 1]");
    let cache = lay(&[8, 512, 12, 64], &[393216, 64, 32768, 1], 0);
    let x = lay(&[8, 512, 12, 64], &[393216, 768, 64, 1], 0);
    let plan = plan_copy_into::<f32>(&x, &cache).unwrap();
    insta::assert_snapshot!(box_line(&plan), @"box [0..8, 0..512, 0..12, 0..64]: copy_from_slice [8, 512, 12, 64] dst @0 [393216, 64, 32768, 1] src @0 [393216, 768, 64, 1]");
    let p102 = lay(&[256, 256, 256], &[256, 65536, 1], 0);
    let plan = plan_materialize::<f32>(&p102).unwrap();
    insta::assert_snapshot!(box_line(&plan), @"box [0..256, 0..256, 0..256]: copy_from_slice [256, 256, 256] dst @0 [256, 65536, 1] src @0 [65536, 256, 1]");
}
