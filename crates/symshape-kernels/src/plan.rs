//! Loop planning: from a destination layout and a source view to boxes of simplified loop nests
//! with a chosen inner kernel.
//!
//! Invariants of a [`LoopPlan`]:
//! 1. Its boxes are disjoint and lie inside the destination's valid box; together they cover
//!    every valid destination element.
//! 2. In a [`Kernel::Pad`] box no source element is read; in any other box every source
//!    element read is valid (so no per-element mask check is left in the loop), except in
//!    [`Kernel::OffsetTable`] boxes whose table marks invalid elements.
//! 3. Every nest has axes of extent > 1 only (or a single axis), and for the strided kernels its
//!    last axis is the one with the smallest destination stride.

use std::fmt;
use std::sync::OnceLock;

use symshape_view::concrete::{merge_memo, merge_refined};
use symshape_view::{nest, ConcreteView, Levels, Op};

use crate::alloc;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::operand::{check_no_self_overlap, top, Machine};
mod rows;
mod run;

/// Output bytes above which a plan runs on the rayon thread pool.
pub(crate) const PARALLEL_BYTES: usize = 1 << 20;

/// Destination rows per tile of [`Kernel::Tiled`] (tiles are one cache line wide).
pub(crate) const TILE: usize = 512;

/// Rows of the tiled axis `a` per tile of [`Kernel::TiledRows`]: one source cache line per
/// row, as many as fit the L1 cache with room to spare (16 KiB).
pub(crate) const ROWS_RUN: usize = 256;

/// Source rows per tile of [`Kernel::Tiled`]: one 64-byte destination cache line.
#[inline(always)]
pub(crate) const fn tile_rows(elem_size: usize) -> usize {
    if elem_size == 0 || elem_size >= 64 {
        1
    } else {
        64 / elem_size
    }
}

/// The inner loop chosen for one box of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Writes the pad value; reads nothing.
    Pad,
    /// Both operands unit-stride on the last axis: `copy_from_slice` per row.
    CopyFromSlice,
    /// Source stride 0 on the last axis: each row is one value repeated.
    BroadcastFill,
    /// Source stride -1 on the last axis: a row copied back to front.
    ReversedCopy,
    /// Destination unit-stride, source any other stride: a strided gather.
    StridedGather,
    /// Neither operand unit-stride on the destination's fastest axis.
    Strided,
    /// Destination unit-stride on the last axis and source unit-stride on the second-to-last:
    /// cache-blocked tiles one destination cache line wide and 512 rows tall.
    Tiled,
    /// Short destination rows (fewer than 8 elements, unit-stride: the windows of an im2col)
    /// whose source is unit-stride on another axis `b`: tiles over `b` and the axis `a` of the
    /// smallest other destination stride, 256 of `a` by one source cache line of `b`, each row
    /// whole inside its tile, so that every source line read serves the whole tile and each
    /// `b` index writes one contiguous run of the destination (nest order `[.., b, a, row]`).
    TiledRows,
    /// Source offsets looked up in a table built from a stack that does not merge to one layout.
    OffsetTable,
    /// Rows of a stack's top that each read one row of the level below: every row copies a
    /// run of its last axis at the source's stride and writes the pad elsewhere, the run's
    /// ends affine in the outer indices ([`Nest::run`]; a causal mask).
    MaskedRows,
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kernel::Pad => "pad",
            Kernel::CopyFromSlice => "copy_from_slice",
            Kernel::BroadcastFill => "broadcast fill",
            Kernel::ReversedCopy => "reversed copy",
            Kernel::StridedGather => "strided gather",
            Kernel::Strided => "strided",
            Kernel::Tiled => "tiled",
            Kernel::TiledRows => "tiled rows",
            Kernel::OffsetTable => "offset table gather",
            Kernel::MaskedRows => "masked rows",
        })
    }
}

/// How a plan splits its work among the threads of a pool ([`LoopPlan::partition`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Partition {
    /// The pool's thread count the split is for.
    pub threads: usize,
    /// Per box of the plan, in order.
    pub boxes: Vec<BoxPartition>,
}

/// The split of one box of a plan ([`Partition`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoxPartition {
    /// Units of work the box's kernel cuts it into (rows, row segments, blocks of tiles).
    pub units: usize,
    /// Rayon tasks the units go to, contiguous runs of about equal length.
    pub tasks: usize,
    /// Destination bytes each task writes, on average.
    pub bytes_per_task: usize,
    /// Threads the tasks are shared between: at most the pool's, and fewer for a box that
    /// writes less than a share's floor per thread.
    pub threads: usize,
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tasks: usize = self.boxes.iter().map(|b| b.tasks).sum();
        writeln!(
            f,
            "partition on {} thread{}: {} task{} in {} box{}",
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            tasks,
            if tasks == 1 { "" } else { "s" },
            self.boxes.len(),
            if self.boxes.len() == 1 { "" } else { "es" }
        )?;
        for (k, b) in self.boxes.iter().enumerate() {
            writeln!(
                f,
                "  box {k}: {} unit{} in {} task{} of {} bytes on {} thread{}",
                b.units,
                if b.units == 1 { "" } else { "s" },
                b.tasks,
                if b.tasks == 1 { "" } else { "s" },
                b.bytes_per_task,
                b.threads,
                if b.threads == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    }
}

/// Why a plan reads its source through an offset table ([`LoopPlan::table`]): the levels left
/// after merging are not one view, no cut of the top into at most 64 boxes merges, and no
/// decomposition into masked rows exists, for the reason given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableReason {
    /// This many source levels are left after merging; boxes are cut for two levels only.
    Levels(usize),
    /// The destination is masked; masked rows are planned into whole destinations only.
    MaskedDestination,
    /// A row of the top reads elements of more than one row of the level below.
    RowsSpanRows,
    /// The top's rows are shorter than 8 elements (or it has none), cheaper through a table.
    ShortRows,
    /// The runs or offsets of the top's rows are not affine in the row indices within 64
    /// boxes.
    Irregular,
}

impl fmt::Display for TableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableReason::Levels(n) => write!(f, "{n} levels left after merging"),
            TableReason::MaskedDestination => f.write_str("the destination is masked"),
            TableReason::RowsSpanRows => {
                f.write_str("a row of the top reads more than one row of the level below")
            }
            TableReason::ShortRows => write!(f, "rows shorter than {} elements", rows::MIN_ROW),
            TableReason::Irregular => write!(
                f,
                "row runs not affine in the row indices within {} boxes",
                rows::MAX_BOXES
            ),
        }
    }
}

/// What a plan reads through an offset table, and why ([`LoopPlan::table`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TableUse {
    /// Source levels read through the table (after merging).
    pub levels: usize,
    /// Entries of the table (one per element of the level below the top, or of the top).
    pub entries: usize,
    /// Whether the table has one entry per element of the top.
    pub per_top_element: bool,
    /// Why no table-free plan was found.
    pub reason: TableReason,
}

/// A loop nest over one box: its loops, outermost first, each with its extent and the steps
/// of the destination and of the source (for [`Kernel::OffsetTable`], steps into the table),
/// and the kernels' own choice of inner loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nest {
    /// The loops, outermost first: extent and `[destination step, source step]`.
    pub loops: Vec<nest::Loop<usize, [isize; 2]>>,
    /// Offsets of the first element: `[destination, source]`.
    pub base: [isize; 2],
    /// The inner kernel.
    pub kernel: Kernel,
    /// For [`Kernel::MaskedRows`]: where each row's run of source elements lies.
    pub run: Option<RowRun>,
}

/// The run of a [`Kernel::MaskedRows`] row that reads the source: elements `lo..hi` of the
/// last axis, the others taking the pad. At the box's first row `lo` and `hi` are `base`;
/// each step of outer loop `k` adds `steps[k]`; the results are clamped to the row
/// (`0 <= lo <= hi <= n`), which is how rows past a diagonal come out empty or whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowRun {
    /// `[lo, hi]` at the first row of the box.
    pub base: [isize; 2],
    /// Per outer loop of the nest, what one step adds to `[lo, hi]`.
    pub steps: Vec<[isize; 2]>,
}

/// One box of the destination index space and the loops that fill it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanBox {
    /// Half-open interval of destination indices per axis.
    pub region: Vec<(usize, usize)>,
    /// The loops over the box.
    pub nest: Nest,
}

/// The plan of a copy from a source view into a destination view (materialize is a copy into
/// a fresh row-major buffer).
///
/// Built once, it can be inspected (`boxes`, `Display`) and run any number of times over
/// buffers of the right length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopPlan<'a> {
    pub(crate) op: &'static str,
    pub(crate) elem: &'static str,
    pub(crate) elem_size: usize,
    pub(crate) dst: Dst,
    pub(crate) dst_numel: usize,
    pub(crate) src_levels: &'a [ConcreteView],
    /// How a source of several levels is read (`None` for one level: the common small plan
    /// stays smaller to move and to drop).
    pub(crate) stacked: Option<Box<Stacked>>,
    /// Lowest and highest source offset read: the source's extent, or the range of the
    /// table's valid entries.
    pub(crate) read: Option<(i64, i64)>,
    pub(crate) boxes: Boxes,
    pub(crate) parallel: bool,
}

/// How a plan reads a source of several levels ([`LoopPlan::stacked`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Stacked {
    /// When levels of the source merged ([`merge_memo`], or [`merge_refined`] after cutting the
    /// top along the rows of the level below): the levels the loops read, and the cut shape
    /// the boxes then index (`None` when nothing was cut).
    pub(crate) merged: Option<(Option<Vec<i64>>, Vec<ConcreteView>)>,
    /// For a source of several levels, the buffer offset of each element the top reads
    /// (-1 if invalid): indexed by the top's offsets into the level below it, or by the
    /// top's own row-major index when `table_per_top` (a top far smaller than the level
    /// below it).
    pub(crate) table: Vec<isize>,
    pub(crate) table_per_top: bool,
    /// When the two levels left did not merge but boxes of the top each did
    /// ([`split_merge`]): the number of such boxes (the loops then read no table).
    pub(crate) pieces: usize,
    /// When the two levels left are read as masked rows ([`rows::masked_rows`]): the number
    /// of boxes (the loops then read no table).
    pub(crate) row_boxes: usize,
    /// For a plan that reads a table: why.
    pub(crate) why_table: Option<TableReason>,
}

impl Stacked {
    /// A source of one level: nothing merged, no table, no boxes cut.
    const ONE_LEVEL: Stacked = Stacked {
        merged: None,
        table: Vec::new(),
        table_per_top: false,
        pieces: 0,
        row_boxes: 0,
        why_table: None,
    };
}

impl<'a> LoopPlan<'a> {
    /// A plan of `op` on elements `elem` (name, bytes) writing `dst_numel` elements of `dst`
    /// from `src_levels`, with nothing merged, no table, no boxes and one thread: the
    /// planners fill in the rest.
    fn of(
        op: &'static str,
        (elem, elem_size): (&'static str, usize),
        dst_numel: usize,
        dst: Dst,
        src_levels: &'a [ConcreteView],
    ) -> LoopPlan<'a> {
        LoopPlan {
            op,
            elem,
            elem_size,
            dst,
            dst_numel,
            src_levels,
            stacked: None,
            read: None,
            boxes: Boxes::Many(Vec::new()),
            parallel: false,
        }
    }

    /// The plan, on rayon's threads when it writes at least `PARALLEL_BYTES`.
    fn with_threads(mut self) -> LoopPlan<'a> {
        self.parallel = self.n_written().saturating_mul(self.elem_size) >= PARALLEL_BYTES;
        self
    }
}

/// The boxes of a plan. Most plans have one (every plan of an unmasked single view), kept
/// inline so that a small plan allocates less.
#[derive(Debug, Clone, Eq)]
pub(crate) enum Boxes {
    One(PlanBox),
    Many(Vec<PlanBox>),
}

impl std::ops::Deref for Boxes {
    type Target = [PlanBox];

    fn deref(&self) -> &[PlanBox] {
        match self {
            Boxes::One(b) => std::slice::from_ref(b),
            Boxes::Many(v) => v,
        }
    }
}

impl PartialEq for Boxes {
    fn eq(&self, other: &Boxes) -> bool {
        **self == **other
    }
}

impl From<Vec<PlanBox>> for Boxes {
    fn from(mut v: Vec<PlanBox>) -> Boxes {
        match (v.pop(), v.is_empty()) {
            (Some(one), true) => Boxes::One(one),
            (Some(last), false) => {
                v.push(last);
                Boxes::Many(v)
            }
            (None, _) => Boxes::Many(v),
        }
    }
}

/// The destination of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Dst {
    /// A view given by the caller (or built for a plan that needs it).
    View(ConcreteView),
    /// The row-major layout of the source's shape at offset 0 (a materialize), built only when
    /// [`LoopPlan::dst`] asks for it: small plans skip building a view they never read.
    RowMajor(LazyView),
}

/// A view built on first use. Equal to any other: it is a function of the plan's shape.
#[derive(Debug, Clone, Default)]
pub(crate) struct LazyView(OnceLock<ConcreteView>);

impl PartialEq for LazyView {
    fn eq(&self, _: &LazyView) -> bool {
        true
    }
}

impl Eq for LazyView {}

impl LoopPlan<'_> {
    /// The shape of the destination.
    pub(crate) fn dst_shape(&self) -> &[i64] {
        match &self.dst {
            Dst::View(v) => v.shape(),
            Dst::RowMajor(_) => top(self.src_levels).shape(),
        }
    }

    /// The lowest and highest destination offset written, as [`ConcreteView::extent`].
    pub(crate) fn dst_extent(&self) -> Option<(i64, i64)> {
        match &self.dst {
            Dst::View(v) => v.extent(),
            // Row-major at offset 0: the first and last of `dst_numel` elements.
            Dst::RowMajor(_) => (self.dst_numel > 0).then(|| (0, self.dst_numel as i64 - 1)),
        }
    }

    /// The source levels the loops read: the given ones, or the merged ones.
    fn levels(&self) -> &[ConcreteView] {
        match &self.stacked().merged {
            Some((_, levels)) => levels,
            None => self.src_levels,
        }
    }

    /// How the source's levels are read ([`Stacked::ONE_LEVEL`] for one level).
    pub(crate) fn stacked(&self) -> &Stacked {
        static ONE_LEVEL: Stacked = Stacked::ONE_LEVEL;
        self.stacked.as_deref().unwrap_or(&ONE_LEVEL)
    }

    /// The boxes of the plan, in the order they run. Their regions index the destination's
    /// shape, or the finer shape of a refined plan (see `Display`).
    #[must_use]
    pub fn boxes(&self) -> &[PlanBox] {
        &self.boxes
    }

    /// Whether the plan runs on the rayon thread pool.
    #[must_use]
    pub fn is_parallel(&self) -> bool {
        self.parallel
    }

    /// The destination view.
    #[must_use]
    pub fn dst(&self) -> &ConcreteView {
        match &self.dst {
            Dst::View(v) => v,
            Dst::RowMajor(lazy) => lazy.0.get_or_init(|| {
                let t = top(self.src_levels);
                // The shape is that of a valid view, so its row-major layout exists; were it
                // refused, the top itself still has the right shape.
                ConcreteView::contiguous(t.shape()).unwrap_or_else(|_| t.clone())
            }),
        }
    }

    /// Whether the plan reads its source through an offset table, how large, and why: a
    /// framework can refuse or warn before running it.
    #[must_use]
    pub fn table(&self) -> Option<TableUse> {
        let (levels, s) = (self.levels().len(), self.stacked());
        if s.pieces > 0 || s.row_boxes > 0 || levels < 2 {
            return None;
        }
        Some(TableUse {
            levels,
            entries: s.table.len(),
            per_top_element: s.table_per_top,
            reason: s.why_table.unwrap_or(TableReason::Levels(levels)),
        })
    }

    /// Number of destination elements written.
    #[must_use]
    pub fn n_written(&self) -> usize {
        self.boxes
            .iter()
            .map(|b| b.region.iter().map(|&(b, e)| e - b).product::<usize>())
            .sum()
    }
}

/// A view as plans print it: `[5, 6] strides [4, 1] offset -5 mask [1..4, 1..5]`.
fn fmt_layout(v: &ConcreteView) -> String {
    let mut s = format!(
        "{:?} strides {:?} offset {}",
        v.shape(),
        v.strides(),
        v.offset()
    );
    if let Some(m) = v.mask() {
        let parts: Vec<String> = m.iter().map(|(b, e)| format!("{b}..{e}")).collect();
        s.push_str(&format!(" mask [{}]", parts.join(", ")));
    }
    s
}

fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    write!(f, "[")?;
    for (k, it) in items.iter().enumerate() {
        if k > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{it}")?;
    }
    write!(f, "]")
}

impl fmt::Display for LoopPlan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan {} {} ", self.op, self.elem)?;
        write_list(f, self.dst_shape())?;
        writeln!(f)?;
        writeln!(f, "  dst: {}", fmt_layout(self.dst()))?;
        for (k, l) in self.src_levels.iter().enumerate() {
            writeln!(f, "  src level {k}: {}", fmt_layout(l))?;
        }
        let stacked = self.stacked();
        match &stacked.merged {
            Some((None, levels)) => {
                for l in levels {
                    writeln!(f, "  merged: {}", fmt_layout(l))?;
                }
            }
            Some((Some(shape), levels)) => {
                writeln!(
                    f,
                    "  refined: top cut to {shape:?} along the rows of the level below, read as {} level{}",
                    levels.len(),
                    if levels.len() == 1 { "" } else { "s" }
                )?;
                for (k, l) in levels.iter().enumerate() {
                    writeln!(f, "  read level {k}: {}", fmt_layout(l))?;
                }
            }
            None => {}
        }
        if stacked.pieces > 0 {
            writeln!(
                f,
                "  split: the top cut into {} boxes that each read the level below as one view",
                stacked.pieces
            )?;
        } else if stacked.row_boxes > 0 {
            writeln!(
                f,
                "  rows: each row of the top reads one row of the level below, in {} box{}",
                stacked.row_boxes,
                if stacked.row_boxes == 1 { "" } else { "es" }
            )?;
        } else if let Some(t) = self.table() {
            let per = if t.per_top_element {
                " (one per element of the top)"
            } else {
                ""
            };
            writeln!(
                f,
                "  unmerged: {} levels, offset table of {} entries{per}: {}",
                t.levels, t.entries, t.reason
            )?;
        }
        let bytes = self.n_written().saturating_mul(self.elem_size);
        if self.parallel {
            writeln!(f, "  threads: rayon ({bytes} bytes >= {PARALLEL_BYTES})")?;
        } else {
            writeln!(f, "  threads: one ({bytes} bytes < {PARALLEL_BYTES})")?;
        }
        if self.boxes.is_empty() {
            writeln!(f, "  nothing to do")?;
        }
        for b in self.boxes.iter() {
            write!(f, "  box [")?;
            for (k, (lo, hi)) in b.region.iter().enumerate() {
                if k > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{lo}..{hi}")?;
            }
            let n = &b.nest;
            write!(f, "]: {} ", n.kernel)?;
            match n.kernel {
                Kernel::Tiled => write!(f, "{}x{TILE} ", tile_rows(self.elem_size))?,
                Kernel::TiledRows => write!(f, "{ROWS_RUN}x{} ", tile_rows(self.elem_size))?,
                _ => {}
            }
            let column = |k: usize| {
                n.loops.iter().map(move |a| match k {
                    0 => a.extent as isize,
                    _ => a.steps[k - 1],
                })
            };
            write_list(f, &column(0).collect::<Vec<_>>())?;
            write!(f, " dst @{} ", n.base[0])?;
            write_list(f, &column(1).collect::<Vec<_>>())?;
            if n.kernel != Kernel::Pad {
                write!(f, " src @{} ", n.base[1])?;
                write_list(f, &column(2).collect::<Vec<_>>())?;
            }
            if let Some(run) = &n.run {
                write!(f, " run @{}..{} ", run.base[0], run.base[1])?;
                write_list(f, &run.steps.iter().map(|s| s[0]).collect::<Vec<_>>())?;
                write!(f, " ")?;
                write_list(f, &run.steps.iter().map(|s| s[1]).collect::<Vec<_>>())?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// One loop of a bound nest: extent and steps of the K operands (destination first).
pub(crate) type Loop<const K: usize> = nest::Loop<usize, [isize; K]>;

/// The innermost loop of a nest (its extent and steps) and the loops outside it; `None` for
/// a nest without loops.
pub(crate) fn innermost<const K: usize>(
    axes: &[Loop<K>],
) -> Option<(usize, [isize; K], &[Loop<K>])> {
    let (inner, outer) = axes.split_last()?;
    Some((inner.extent, inner.steps, outer))
}

/// Drops unit axes, reverses axes with a negative destination stride, orders axes by
/// decreasing destination stride and merges axes contiguous for every operand
/// ([`nest::merge_contiguous`], decided at once).
///
/// Returns `None` when the nest is empty. Reversal is legal because every destination element
/// is written exactly once and the source is not modified (aliasing goes through a temporary).
pub(crate) fn simplify<const K: usize>(
    mut axes: Vec<Loop<K>>,
    base: &mut [isize; K],
) -> Option<Vec<Loop<K>>> {
    if axes.iter().any(|a| a.extent == 0) {
        return None;
    }
    axes.retain(|a| a.extent > 1);
    // Wrapping arithmetic: every value is the offset of an element (or a stride) of a layout,
    // which fits `isize`, but the full span of a layout may not (before its buffer is checked).
    for a in axes.iter_mut() {
        if a.steps[0] < 0 {
            for (b, st) in base.iter_mut().zip(a.steps.iter_mut()) {
                *b = b.wrapping_add(st.wrapping_mul(a.extent as isize - 1));
                *st = st.wrapping_neg();
            }
        }
    }
    // Most nests come in order (a row-major destination): the check is cheaper than the sort.
    if !axes.is_sorted_by(|x, y| x.steps[0] >= y.steps[0]) {
        axes.sort_by(|x, y| y.steps[0].cmp(&x.steps[0]));
    }
    nest::merge_contiguous(&nest::Exact, &mut axes);
    if axes.is_empty() {
        axes.push(Loop {
            extent: 1,
            steps: [0; K],
        });
    }
    Some(axes)
}

/// The cells of the destination index space of `shape` cut at every end of `boxes`
/// ([`nest::cells`]), the list reserved within the allocation limit.
fn cells(
    op: &'static str,
    shape: &[usize],
    boxes: &[&[(usize, usize)]],
) -> Result<Vec<Vec<(usize, usize)>>> {
    nest::cells(shape, boxes, |n| alloc::reserve(op, n))
}

fn inside(cell: &[(usize, usize)], valid: &[(usize, usize)]) -> bool {
    cell.iter()
        .zip(valid)
        .all(|(&(b, e), &(vb, ve))| b >= vb && e <= ve)
}

/// Offset of the first index of `region` (wrapping: the result is the offset of an element of
/// the layout and fits, a partial product may not).
fn base_of(strides: &[isize], offset: isize, region: &[(usize, usize)]) -> isize {
    strides
        .iter()
        .zip(region)
        .fold(offset, |acc, (&s, &(b, _))| {
            acc.wrapping_add(s.wrapping_mul(b as isize))
        })
}

/// The loop nest of one cell: destination elements of the region `at` (strides and
/// offset `dst`) read from `cell` of a source (strides and offset `src`; `None` for a
/// cell the source does not cover, which gets the pad), through an offset table when
/// `table`. `None` when the cell has no element.
fn cell_nest(
    at: &[(usize, usize)],
    cell: &[(usize, usize)],
    dst: (&[isize], isize),
    src: Option<(&[isize], isize)>,
    table: bool,
) -> Option<Nest> {
    let mut base = [base_of(dst.0, dst.1, at), 0];
    let axes: Vec<Loop<2>> = match src {
        Some((ss, so)) => {
            base[1] = base_of(ss, so, cell);
            cell.iter()
                .zip(dst.0)
                .zip(ss)
                .map(|((&(b, e), &ds), &s)| Loop {
                    extent: e - b,
                    steps: [ds, s],
                })
                .collect()
        }
        None => cell
            .iter()
            .zip(dst.0)
            .map(|(&(b, e), &ds)| Loop {
                extent: e - b,
                steps: [ds, 0],
            })
            .collect(),
    };
    let mut axes = simplify(axes, &mut base)?;
    let kernel = match src {
        Some(_) => pick_kernel(&mut axes, table),
        None => Kernel::Pad,
    };
    Some(Nest {
        loops: axes,
        base,
        kernel,
        run: None,
    })
}

/// Swaps the last two outer axes of a nest of whole rows of `na` elements (in source order)
/// when, swapped, the destination is written in order over them and the inner one is the
/// shorter: each unit of work then writes a stretch of the destination in order, reading as
/// many streams as the shorter axis is long, where source order writes rows apart, pass
/// after pass. Merging attention heads (`[8, 12, 512, 64]` permuted `0, 2, 1, 3`) visits
/// the 12 heads inside each token this way, as PyTorch does: on two threads of an AMD EPYC
/// family 25 (model 1) 1.16 ms against 1.36 with the tokens inside (24 alternated rounds,
/// faster in 21), one thread 2.91 against 3.16; on 16 threads of an Intel Xeon (family 6,
/// model 207) 122-137 µs against 158-173 (PyTorch 139-156), on 1 to 8 threads level or
/// faster. An AMD EPYC family 26 measured the tokens inside faster on one and two threads
/// (0.50 against 0.63 ms on one; docs/performance.md). The KV-cache write has its shorter
/// axis, the heads, inside in source order already, and the `1, 0, 2` permute of 256^3, whose
/// two axes are as long, keeps source order. Rows under 16 elements (the windows of an
/// im2col) keep the order the short-row kernels were tuned with.
fn shorter_axis_inside(outer: &mut [Loop<2>], na: usize) {
    let [.., o, i] = *outer else {
        return;
    };
    let Ok(row) = isize::try_from(na) else {
        return;
    };
    let in_order = o.steps[0] == row
        && isize::try_from(o.extent).is_ok_and(|n| i.steps[0] == n.wrapping_mul(row));
    if na >= 16 && in_order && o.extent < i.extent {
        let k = outer.len();
        outer.swap(k - 2, k - 1);
    }
}

/// Chooses the inner kernel of a simplified copy nest and puts its axes in the order the
/// kernel expects.
pub(crate) fn pick_kernel(axes: &mut [Loop<2>], table: bool) -> Kernel {
    if table {
        return Kernel::OffsetTable;
    }
    let n = axes.len();
    let Some(&Loop {
        extent: na,
        steps: [da, sa],
    }) = axes.last()
    else {
        return Kernel::Strided;
    };
    if da != 1 {
        return Kernel::Strided;
    }
    match sa {
        1 => {
            // Whole rows: visit them in source order, so reads stream and only the (buffered)
            // writes jump; measured about 25% faster on a 256^3 permutation (1, 0, 2), and
            // twice as fast on a Xeon with the rows copied in runs (docs/performance.md).
            // Writing `[8, 512, 768]` into a head-major cache this way (the 12 heads inside,
            // each token's rows written 128 KiB apart) took 1.75-2.07 ms against 2.70-3.57
            // with the tokens inside on an AMD EPYC family 25, 0.73-0.92 against 1.08-1.59 on
            // two threads; the Xeon (family 6, model 207) is faster this way too, an EPYC
            // family 26 as fast (docs/performance.md). Then the shorter of the last two axes
            // goes inside where the destination lays rows in order over them.
            if let Some((_, outer)) = axes.split_last_mut() {
                outer.sort_by_key(|a| std::cmp::Reverse(a.steps[1].unsigned_abs()));
                shorter_axis_inside(outer, na);
            }
            return Kernel::CopyFromSlice;
        }
        0 => return Kernel::BroadcastFill,
        -1 => return Kernel::ReversedCopy,
        _ => {}
    }
    let unit = axes
        .iter()
        .take(n - 1)
        .position(|a| a.steps[1].unsigned_abs() == 1 && a.extent >= 8);
    match unit {
        Some(b) if na >= 8 => {
            // Outer loops may run in any order: move the source's unit axis next to the last.
            let ax = axes[b];
            if b + 2 < n {
                axes.copy_within(b + 1..n - 1, b);
            }
            axes[n - 2] = ax;
            Kernel::Tiled
        }
        Some(b) if n >= 3 => {
            // A short row (an im2col window): tile the source's unit axis `b` with the other
            // outer axis of the smallest destination stride, rows whole inside each tile.
            let Some(a) = (0..n - 1)
                .filter(|&k| k != b)
                .min_by_key(|&k| axes[k].steps[0].unsigned_abs())
            else {
                return Kernel::StridedGather;
            };
            if axes[a].extent < 8 || axes[a].steps[1].unsigned_abs() <= 1 {
                return Kernel::StridedGather;
            }
            let (ax_b, ax_a) = (axes[b], axes[a]);
            let mut k = 0;
            for j in 0..n - 1 {
                if j != a && j != b {
                    axes[k] = axes[j];
                    k += 1;
                }
            }
            axes[n - 3] = ax_b;
            axes[n - 2] = ax_a;
            Kernel::TiledRows
        }
        _ => Kernel::StridedGather,
    }
}

/// Calls `f` with the offset of every index of `region` in row-major order (odometer, no division).
pub(crate) fn for_each_offset(
    strides: &[isize],
    offset: isize,
    region: &[(usize, usize)],
    mut f: impl FnMut(isize),
) {
    if region.iter().any(|&(b, e)| b >= e) {
        return;
    }
    let n = region.len();
    let mut idx: Vec<usize> = region.iter().map(|&(b, _)| b).collect();
    // Wrapping arithmetic: a step one past the end of an axis may leave the representable
    // range, and is undone before the offset is used.
    let mut off = offset;
    for (&s, &(b, _)) in strides.iter().zip(region) {
        off = off.wrapping_add(s.wrapping_mul(b as isize));
    }
    loop {
        f(off);
        let mut k = n;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let (Some(&(b, e)), Some(i), Some(&s)) =
                (region.get(k), idx.get_mut(k), strides.get(k))
            else {
                return;
            };
            *i += 1;
            off = off.wrapping_add(s);
            if *i < e {
                break;
            }
            off = off.wrapping_sub(s.wrapping_mul((e - b) as isize));
            *i = b;
        }
    }
}

/// Calls `f(offset, valid)` for every index of a view's whole shape in row-major order.
fn for_each_entry(m: &Machine, mut f: impl FnMut(isize, bool)) {
    let full: Vec<(usize, usize)> = m.shape.iter().map(|&n| (0, n)).collect();
    let mut idx: Vec<usize> = vec![0; m.shape.len()];
    let mut first = true;
    for_each_offset(&m.strides, m.offset, &full, |off| {
        // Advance the index alongside the odometer to test the mask (plan time only).
        if !first {
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                if idx[k] < full[k].1 {
                    break;
                }
                idx[k] = 0;
            }
        }
        first = false;
        let ok = !m.masked
            || idx
                .iter()
                .zip(&m.valid)
                .all(|(&i, &(b, e))| i >= b && i < e);
        f(off, ok);
    });
}

/// The buffer offsets of the element space of `levels` (a stack, bottom first): entry `l` is
/// the offset of row-major element `l` of the top of `levels`, or -1. Built level by level
/// with an odometer, so every level is walked whole.
fn level_table(op: &'static str, levels: &[Machine]) -> Result<Vec<isize>> {
    let mut table: Vec<isize> = Vec::new();
    for (k, l) in levels.iter().enumerate() {
        let mut next = alloc::reserve(op, l.numel())?;
        for_each_entry(l, |off, ok| {
            let v = if !ok {
                -1
            } else if k == 0 {
                off
            } else {
                usize::try_from(off)
                    .ok()
                    .and_then(|o| table.get(o).copied())
                    .unwrap_or(-1)
            };
            next.push(v);
        });
        table = next;
    }
    Ok(table)
}

/// The buffer offset of every element of the top of `levels` in row-major order (-1 if
/// invalid at any level), walking each element down: memory proportional to the top.
fn top_table(
    op: &'static str,
    levels: &[ConcreteView],
    machine_top: &Machine,
) -> Result<Vec<isize>> {
    let mut table = alloc::reserve(op, machine_top.numel())?;
    let (below, _) = levels.split_at(levels.len() - 1);
    let mut fail = None;
    for_each_entry(machine_top, |off, ok| {
        let mut cur = if ok { Some(off as i64) } else { None };
        for v in below.iter().rev() {
            let Some(l) = cur else { break };
            let idx = symshape_view::concrete::unravel(v.shape(), l);
            cur = match v.offset_of(&idx) {
                Ok(o) => o,
                Err(e) => {
                    fail.get_or_insert(e);
                    None
                }
            };
        }
        table.push(cur.map_or(-1, |o| o as isize));
    });
    match fail {
        Some(e) => Err(e.into()),
        None => Ok(table),
    }
}

/// The lowest and highest non-negative entry of `table`.
fn table_range(table: &[isize]) -> Option<(i64, i64)> {
    let mut res: Option<(i64, i64)> = None;
    for &o in table {
        if o >= 0 {
            let o = o as i64;
            res = Some(res.map_or((o, o), |(lo, hi)| (lo.min(o), hi.max(o))));
        }
    }
    res
}

/// The planner every copy goes through, for elements known by name and size only: plans
/// copying the levels `src` into the elements of `dst` (same shape; `None`: the row-major
/// layout of the source's shape); `dst` is one level.
pub(crate) fn plan_copy_untyped<'a>(
    op: &'static str,
    elem: &'static str,
    elem_size: usize,
    dst: Option<ConcreteView>,
    src: &'a [ConcreteView],
) -> Result<LoopPlan<'a>> {
    let top_view = top(src);
    if let Some(dst) = &dst {
        if dst.shape() != top_view.shape() {
            return Err(Error::ShapeMismatch {
                op,
                dst: dst.shape().to_vec(),
                src: top_view.shape().to_vec(),
            });
        }
    }
    if let [one] = src {
        if one.mask().is_none() && dst.as_ref().is_none_or(|d| d.mask().is_none()) {
            return plan_single_view(op, elem, elem_size, dst, src, one);
        }
    }
    let dst = match dst {
        Some(d) => d,
        None => ConcreteView::contiguous(top_view.shape())?,
    };
    // Merge the source's top into the level below while their composition is one view,
    // possibly after cutting the top along the rows of the level below (the destination is
    // cut alike, so the loops write the same elements).
    let mut merged: Option<(Option<Vec<i64>>, Vec<ConcreteView>)> = None;
    let mut cut_dst: Option<ConcreteView> = None;
    loop {
        let levels = merged.as_ref().map_or(src, |(_, l)| l.as_slice());
        let [.., lower, upper] = levels else { break };
        let mut next = levels[..levels.len() - 2].to_vec();
        if let Some(one) = merge_memo(lower, upper)? {
            next.push(one);
            let cut = merged.and_then(|(cut, _)| cut);
            merged = Some((cut, next));
            continue;
        }
        let Some(r) = merge_refined(lower, upper)? else {
            break;
        };
        let shape = r.shape();
        let base = cut_dst.as_ref().unwrap_or(&dst);
        let Ok(finer) = base.apply(&Op::Reshape(shape.to_vec())) else {
            break;
        };
        next.push(r.view);
        cut_dst = Some(finer);
        merged = Some((Some(shape), next));
    }
    let levels = merged.as_ref().map_or(src, |(_, l)| l.as_slice());
    let top_view = top(levels);
    let dst_view = cut_dst.as_ref().unwrap_or(&dst);
    let mut why_table = None;
    if let [lower, upper] = levels {
        // Rows that each read one row of the level below at unit stride (a causal mask) are
        // planned as masked rows; other strides are left to a split into merged boxes first,
        // which may tile them.
        let d = Machine::of(op, dst_view)?;
        let mut rows = rows::masked_rows(op, dst_view, lower, upper, true)?;
        if rows.is_err() {
            if let Some(pieces) = split_merge(lower, upper)? {
                let mut plan = LoopPlan::of(op, (elem, elem_size), d.numel(), Dst::View(dst), src);
                let mut boxes = Vec::new();
                for (origin, v) in &pieces {
                    piece_boxes(op, &d, origin, v, &mut boxes)?;
                    plan.read = match (plan.read, v.extent()) {
                        (Some((a, b)), Some((c, e))) => Some((a.min(c), b.max(e))),
                        (r, None) | (None, r) => r,
                    };
                }
                plan.stacked = Some(Box::new(Stacked {
                    merged,
                    pieces: pieces.len(),
                    ..Stacked::ONE_LEVEL
                }));
                plan.boxes = boxes.into();
                return Ok(plan.with_threads());
            }
            rows = rows::masked_rows(op, dst_view, lower, upper, false)?;
        }
        match rows {
            Ok((boxes, read)) => {
                let plan = LoopPlan {
                    stacked: Some(Box::new(Stacked {
                        merged,
                        row_boxes: boxes.len(),
                        ..Stacked::ONE_LEVEL
                    })),
                    read,
                    boxes: boxes.into(),
                    ..LoopPlan::of(op, (elem, elem_size), d.numel(), Dst::View(dst), src)
                };
                return Ok(plan.with_threads());
            }
            Err(why) => why_table = Some(why),
        }
    }
    let mut d = Machine::of(op, dst_view)?;
    let t = Machine::of(op, top_view)?;
    let below = &levels[..levels.len() - 1];
    // A stack reads its top through a table: over the element space of the level below the
    // top when that is not much larger than the top, else one entry per element of the top.
    let below_numel: u128 = below.iter().map(|v| v.numel() as u128).sum();
    let per_top = !below.is_empty() && below_numel > 4 * (t.numel() as u128).max(1);
    let table = if below.is_empty() {
        Vec::new()
    } else if per_top {
        top_table(op, levels, &t)?
    } else {
        let machines = below
            .iter()
            .map(|v| Machine::of(op, v))
            .collect::<Result<Vec<_>>>()?;
        level_table(op, &machines)?
    };
    let read = if below.is_empty() {
        top_view.extent()
    } else {
        table_range(&table)
    };
    // How the kernels address the source: the top's strides (into the buffer, or into a
    // table over the level below), or the top's row-major index (into a per-top table).
    let rm;
    let (src_strides, src_offset) = if per_top {
        rm = Machine::row_major(op, &t.shape)?;
        (&rm.strides, 0)
    } else {
        (&t.strides, t.offset)
    };
    if !below.is_empty() && !per_top {
        // The stack's invariant keeps the top inside the table; checked here because the
        // gather kernel indexes the table without bounds checks.
        if let Some((lo, hi)) = top_view.extent() {
            if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= table.len()) {
                return Err(Error::OutOfBuffer {
                    op,
                    role: "offset table",
                    lo,
                    hi,
                    len: table.len(),
                });
            }
        }
    }
    let src_box = if t.masked {
        t.valid.clone()
    } else {
        Vec::new()
    };
    let mut boxes = Vec::with_capacity(1);
    let masked = d.masked || t.masked;
    let (single, all_cells) = if masked {
        (None, cells(op, &d.shape, &[&d.valid, &src_box])?)
    } else {
        (Some(std::mem::take(&mut d.valid)), Vec::new())
    };
    for cell in single.into_iter().chain(all_cells) {
        if d.masked && !inside(&cell, &d.valid) {
            continue;
        }
        let kernel_src = src_box.is_empty() || inside(&cell, &src_box);
        let src = kernel_src.then_some((src_strides.as_slice(), src_offset));
        let dst = (d.strides.as_slice(), d.offset);
        let Some(nest) = cell_nest(&cell, &cell, dst, src, !below.is_empty()) else {
            continue;
        };
        boxes.push(PlanBox { region: cell, nest });
    }
    let why_table = why_table.or(Some(TableReason::Levels(levels.len())));
    // A masked view of one level reads no table: its plan stays as small as an unmasked one's.
    let stacked = (merged.is_some() || !below.is_empty()).then(|| {
        Box::new(Stacked {
            merged,
            table,
            table_per_top: per_top,
            why_table,
            ..Stacked::ONE_LEVEL
        })
    });
    let plan = LoopPlan {
        stacked,
        read,
        boxes: boxes.into(),
        ..LoopPlan::of(op, (elem, elem_size), d.numel(), Dst::View(dst), src)
    };
    Ok(plan.with_threads())
}

/// Most boxes [`split_merge`] cuts a top into before the planner reads through a table.
const MAX_PIECES: usize = 64;

/// Fewest elements per box, on average, for which [`split_merge`] cuts a top.
const MIN_PIECE: usize = 16;

/// Most merges [`split_merge`] tries before giving up: a merge that crosses a mask may walk
/// many points before it refuses, so the cost of a stack that never splits stays bounded (an
/// im2col of a conv1d splits in about 26).
const MERGE_BUDGET: usize = 192;

/// A box of a split top: its origin in the top's index space and its view (of the box's
/// extents) over the level below.
type Piece = (Vec<i64>, ConcreteView);

/// A region of a view's index space: a half-open interval per axis.
type Region = Vec<(i64, i64)>;

/// `upper` restricted to `region`, composed with `lower` ([`merge_memo`]: a stack planned
/// again is split without deciding again), when that is one view.
fn merge_piece(
    lower: &ConcreteView,
    upper: &ConcreteView,
    region: &[(i64, i64)],
) -> Result<Option<ConcreteView>> {
    Ok(merge_memo(
        lower,
        &upper.apply(&Op::Shrink(region.to_vec()))?,
    )?)
}

/// `region` cut along `axis` at `at`: the part below and the part from `at`.
fn halves(region: &[(i64, i64)], axis: usize, at: i64) -> (Region, Region) {
    let (mut lo, mut hi) = (region.to_vec(), region.to_vec());
    if let (Some(l), Some(h)) = (lo.get_mut(axis), hi.get_mut(axis)) {
        l.1 = at;
        h.0 = at;
    }
    (lo, hi)
}

/// Cuts the index space of `upper` into boxes that each compose with `lower` into one view
/// ([`merge_memo`]),
/// when the whole does not: where `lower` is masked, a box whose image stays inside its
/// valid box merges although the whole top does not (the padded edges of an im2col
/// matrix, whose windows cross the padding only in their first and last positions).
///
/// Cuts are tried up to four elements in from either end of an axis, then in its middle, keeping the
/// first cut whose larger half merges, else the first with a half that merges; failing
/// that, the longest axis is halved. Returns the
/// boxes (their origins in `upper` and their views, of the boxes' extents), or `None` when
/// more than [`MAX_PIECES`] boxes (or one per [`MIN_PIECE`] elements) or [`MERGE_BUDGET`]
/// merges would be needed.
fn split_merge(lower: &ConcreteView, upper: &ConcreteView) -> Result<Option<Vec<Piece>>> {
    // Every merge tried counts, so that a top that never merges costs a bounded number.
    let mut budget = MERGE_BUDGET;
    let mut try_merge = |region: &[(i64, i64)]| -> Result<Option<Option<ConcreteView>>> {
        if budget == 0 {
            return Ok(None);
        }
        budget -= 1;
        merge_piece(lower, upper, region).map(Some)
    };
    // Boxes of a few elements are slower than a table: at least `MIN_PIECE` per box on average.
    let max_pieces = MAX_PIECES.min(usize::try_from(upper.numel()).unwrap_or(0) / MIN_PIECE);
    let mut todo: Vec<Region> = vec![upper.shape().iter().map(|&n| (0, n)).collect()];
    let mut done = Vec::new();
    while let Some(region) = todo.pop() {
        if done.len() + todo.len() >= max_pieces {
            return Ok(None);
        }
        match try_merge(&region)? {
            None => return Ok(None),
            Some(Some(v)) => {
                done.push((region.iter().map(|r| r.0).collect(), v));
                continue;
            }
            Some(None) => {}
        }
        // Cuts whose larger half merges first (the bulk of the box), then any half.
        let mut cut = None;
        'passes: for larger in [true, false] {
            for (axis, &(b, e)) in region.iter().enumerate() {
                for at in cut_points(b, e) {
                    let (lo, hi) = halves(&region, axis, at);
                    let lo_larger = at - b >= e - at;
                    let half = if larger == lo_larger { &lo } else { &hi };
                    match try_merge(half)? {
                        None => return Ok(None),
                        Some(Some(_)) => {
                            cut = Some((lo, hi));
                            break 'passes;
                        }
                        Some(None) => {}
                    }
                }
            }
        }
        let (lo, hi) = match cut {
            Some(c) => c,
            None => {
                let longest = region.iter().enumerate().max_by_key(|(_, r)| r.1 - r.0);
                match longest {
                    Some((axis, &(b, e))) if e - b >= 2 => halves(&region, axis, b + (e - b) / 2),
                    _ => return Ok(None),
                }
            }
        };
        // Row-major order of the boxes: the lower half is taken next.
        todo.push(hi);
        todo.push(lo);
    }
    Ok(Some(done))
}

/// Where [`split_merge`] tries to cut an axis spanning `b..e`: up to [`EDGE_CUTS`] elements in
/// from either end, nearest first (a pad of `k` leaves `k` windows at an edge that cross it),
/// then the middle; each point once, strictly inside the span.
fn cut_points(b: i64, e: i64) -> impl Iterator<Item = i64> {
    let edges = (1..=EDGE_CUTS).flat_map(move |k| [b + k, e - k]);
    let mut seen: Vec<i64> = Vec::with_capacity(2 * EDGE_CUTS as usize + 1);
    edges
        .chain(std::iter::once(b + (e - b) / 2))
        .filter(move |&at| {
            let fresh = at > b && at < e && !seen.contains(&at);
            if fresh {
                seen.push(at);
            }
            fresh
        })
}

/// How far in from an axis's ends [`split_merge`] tries cuts.
const EDGE_CUTS: i64 = 4;

/// The boxes of one piece of a split plan: the piece's view `v` (its index space the box of
/// the destination at `origin`), cut where its mask or the destination's valid box begins
/// or ends.
fn piece_boxes(
    op: &'static str,
    d: &Machine,
    origin: &[i64],
    v: &ConcreteView,
    out: &mut Vec<PlanBox>,
) -> Result<()> {
    let m = Machine::of(op, v)?;
    let origin: Vec<usize> = origin.iter().map(|&o| o.max(0) as usize).collect();
    // The destination's valid box in the piece's coordinates, clipped to it.
    let dst_local: Vec<(usize, usize)> = d
        .valid
        .iter()
        .zip(&origin)
        .zip(&m.shape)
        .map(|((&(b, e), &o), &n)| {
            nest::valid_interval(
                &nest::Exact,
                n,
                [b.saturating_sub(o)],
                [e.saturating_sub(o)],
            )
        })
        .collect();
    let src_box = if m.masked {
        m.valid.clone()
    } else {
        Vec::new()
    };
    for cell in cells(op, &m.shape, &[&dst_local, &src_box])? {
        let global: Vec<(usize, usize)> = cell
            .iter()
            .zip(&origin)
            .map(|(&(b, e), &o)| (b + o, e + o))
            .collect();
        if d.masked && !inside(&global, &d.valid) {
            continue;
        }
        let kernel_src = src_box.is_empty() || inside(&cell, &src_box);
        let src = kernel_src.then_some((m.strides.as_slice(), m.offset));
        let dst = (d.strides.as_slice(), d.offset);
        let Some(nest) = cell_nest(&global, &cell, dst, src, false) else {
            continue;
        };
        out.push(PlanBox {
            region: global,
            nest,
        });
    }
    Ok(())
}

/// Plans a copy between two unmasked single views (`dst` `None`: the row-major layout of the
/// source's shape): one box, no table, no temporaries beyond the plan's own fields (the
/// common case, and the one small copies hit).
fn plan_single_view<'a>(
    op: &'static str,
    elem: &'static str,
    elem_size: usize,
    dst: Option<ConcreteView>,
    src_levels: &'a [ConcreteView],
    src: &ConcreteView,
) -> Result<LoopPlan<'a>> {
    // The checks of `Machine::of`, without building one. Every field of a view fits `i64`,
    // so on 64-bit targets the conversions cannot fail and the compiler drops them.
    let bad = |v: &ConcreteView, what: &'static str, value: i64| Error::Machine {
        op,
        what,
        value,
        view: v.to_string(),
    };
    let to_isize = |v: &ConcreteView, what, x: i64| isize::try_from(x).map_err(|_| bad(v, what, x));
    let shape = src.shape();
    let mut axes: Vec<Loop<2>> = Vec::with_capacity(shape.len());
    let mut region = Vec::with_capacity(shape.len());
    // The element count (the shapes are equal: the destination's too) and the source's
    // extent, as `numel` and `extent` give them, in the one pass over the axes. Every
    // in-shape offset of a view fits `i64` (as do the partial sums), and so does the count.
    let (mut dst_numel, mut lo, mut hi) = (1usize, src.offset(), src.offset());
    for (k, (&d, &ss)) in shape.iter().zip(src.strides()).enumerate() {
        let n = usize::try_from(d).map_err(|_| bad(src, "size", d))?;
        dst_numel = dst_numel.saturating_mul(n);
        let last = ss.wrapping_mul(d.wrapping_sub(1));
        lo = lo.wrapping_add(last.min(0));
        hi = hi.wrapping_add(last.max(0));
        let ds = match &dst {
            Some(d) => to_isize(d, "stride", d.strides().get(k).copied().unwrap_or(0))?,
            None => 0,
        };
        axes.push(Loop {
            extent: n,
            steps: [ds, to_isize(src, "stride", ss)?],
        });
        region.push((0, n));
    }
    if isize::BITS < i64::BITS {
        let numel = src.numel();
        usize::try_from(numel).map_err(|_| bad(src, "element count", numel))?;
        for v in dst.iter().chain([src]) {
            if let Some((lo, hi)) = v.extent() {
                for x in [lo, hi] {
                    isize::try_from(x).map_err(|_| bad(v, "offset", x))?;
                }
            }
        }
    }
    if dst.is_none() {
        // Row-major strides; zero-size axes count as one, as the view crate does. The
        // products are bounded by the element count, which fits.
        let mut acc: isize = 1;
        for a in axes.iter_mut().rev() {
            a.steps[0] = acc;
            acc = acc.saturating_mul(isize::try_from(a.extent.max(1)).unwrap_or(isize::MAX));
        }
    }
    let mut base = [
        match &dst {
            Some(d) => to_isize(d, "offset", d.offset())?,
            None => 0,
        },
        to_isize(src, "offset", src.offset())?,
    ];
    let boxes = match simplify(axes, &mut base) {
        Some(mut axes) => {
            let kernel = pick_kernel(&mut axes, false);
            Boxes::One(PlanBox {
                region,
                nest: Nest {
                    loops: axes,
                    base,
                    kernel,
                    run: None,
                },
            })
        }
        None => Boxes::Many(Vec::new()),
    };
    // The one box writes every element; `with_threads`' rule without counting them again.
    let parallel = dst_numel.saturating_mul(elem_size) >= PARALLEL_BYTES;
    Ok(LoopPlan {
        op,
        elem,
        elem_size,
        dst: dst.map_or_else(|| Dst::RowMajor(LazyView::default()), Dst::View),
        dst_numel,
        src_levels,
        stacked: None,
        read: (dst_numel > 0).then_some((lo, hi)),
        boxes,
        parallel,
    })
}

/// Plans materializing `src` into a fresh row-major buffer of elements of type `T`.
///
/// # Errors
/// [`Error::Machine`] when a field does not fit this machine's integers; [`Error::Alloc`]
/// when the offset table of a stack exceeds the allocation limit.
pub fn plan_materialize<T: Element>(src: &impl Levels) -> Result<LoopPlan<'_>> {
    plan_materialize_levels::<T>(src.levels())
}

/// [`plan_materialize`] of a stack's levels (bottom first), for the crate's operations.
pub(crate) fn plan_materialize_levels<T: Element>(levels: &[ConcreteView]) -> Result<LoopPlan<'_>> {
    plan_copy_untyped(
        "materialize",
        T::NAME,
        std::mem::size_of::<T>(),
        None,
        levels,
    )
}

/// Plans copying `src` into the elements of `dst` (one view of the same shape, free of
/// self-overlap), for elements of type `T`.
///
/// # Errors
/// As [`plan_materialize`]; [`Error::ShapeMismatch`]; [`Error::OverlappingDestination`] or
/// [`Error::UndecidedOverlap`] for a destination that may write an element twice.
pub fn plan_copy_into<'a, T: Element>(
    src: &'a impl Levels,
    dst: &ConcreteView,
) -> Result<LoopPlan<'a>> {
    plan_copy_into_levels::<T>(src.levels(), dst)
}

/// [`plan_copy_into`] from a stack's levels (bottom first), for the crate's operations.
pub(crate) fn plan_copy_into_levels<'a, T: Element>(
    src: &'a [ConcreteView],
    dst: &ConcreteView,
) -> Result<LoopPlan<'a>> {
    check_no_self_overlap("copy", std::slice::from_ref(dst))?;
    plan_copy_untyped(
        "copy",
        T::NAME,
        std::mem::size_of::<T>(),
        Some(dst.clone()),
        src,
    )
}

/// Offsets of every element of a stack's top, and the lowest and highest among them.
pub(crate) type StackOffsets = (Vec<isize>, Option<(i64, i64)>);

/// The buffer offset of every element of a stack's top in row-major order (-1 if invalid
/// at any level), and the lowest and highest offset among them.
pub(crate) fn stack_offsets(op: &'static str, levels: &[ConcreteView]) -> Result<StackOffsets> {
    let t = Machine::of(op, top(levels))?;
    let table = top_table(op, levels, &t)?;
    let range = table_range(&table);
    Ok((table, range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shorter_of_two_row_laying_axes_goes_inside() {
        let l = |extent, d, s| Loop {
            extent,
            steps: [d, s],
        };
        // Merging heads: `[b, h, s]` over rows of 64, the destination `[b, s, h * 64]`.
        let mut heads = [l(8, 393216, 393216), l(12, 64, 32768), l(512, 768, 64)];
        shorter_axis_inside(&mut heads, 64);
        assert_eq!(
            heads,
            [l(8, 393216, 393216), l(512, 768, 64), l(12, 64, 32768)]
        );
        // The KV-cache write (the heads already inside), the `1, 0, 2` permute of 256^3
        // (axes as long), a destination not written in order over the two, rows under 16
        // elements, and fewer than two axes: as they were.
        let kv = [l(8, 393216, 393216), l(512, 64, 768), l(12, 32768, 64)];
        let even = [l(256, 256, 65536), l(256, 65536, 256)];
        let gaps = [l(12, 128, 32768), l(512, 768 * 2, 64)];
        let short = [l(12, 8, 32768), l(512, 96, 8)];
        let one = [l(512, 768, 64)];
        for (outer, na) in [
            (&kv[..], 64),
            (&even, 256),
            (&gaps, 64),
            (&short, 8),
            (&one, 64),
            (&[], 64),
        ] {
            let mut kept = outer.to_vec();
            shorter_axis_inside(&mut kept, na);
            assert_eq!(kept, outer);
        }
    }
}
