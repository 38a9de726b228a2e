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

use crate::error::{KernelError, Result};
use crate::layout::{for_each_offset, merge_levels, Layout, View};
use std::borrow::Cow;
use std::fmt;

/// Output bytes above which a plan runs on the rayon thread pool.
pub const PARALLEL_BYTES: usize = 1 << 20;

/// Destination rows per tile of [`Kernel::Tiled`] (tiles are one cache line wide).
pub const TILE: usize = 512;

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
    /// cache-blocked tiles one destination cache line wide and [`TILE`] rows tall.
    Tiled,
    /// Source offsets looked up in a table built from a stack that does not merge to one layout.
    OffsetTable,
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
            Kernel::OffsetTable => "offset table gather",
        })
    }
}

/// A loop nest over one box: per loop, outermost first, its extent and the strides of the
/// destination and of the source (for [`Kernel::OffsetTable`], strides into the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nest {
    /// Per loop: extent and `[destination stride, source stride]`.
    pub axes: Vec<(usize, [isize; 2])>,
    /// Offsets of the first element: `[destination, source]`.
    pub base: [isize; 2],
    /// The inner kernel.
    pub kernel: Kernel,
}

/// One box of the destination index space and the loops that fill it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanBox {
    /// Half-open interval of destination indices per axis.
    pub region: Vec<(usize, usize)>,
    /// The loops over the box.
    pub nest: Nest,
}

/// The plan of a copy from a source view into a destination layout (materialize is a copy into
/// a fresh row-major buffer).
///
/// Built once, it can be inspected (`boxes`, `Display`) and run any number of times over
/// buffers of the right length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopPlan<'a> {
    pub(crate) op: &'static str,
    pub(crate) elem: &'static str,
    pub(crate) elem_size: usize,
    pub(crate) dst: Layout,
    pub(crate) src_levels: &'a [Layout],
    /// The source after merging, top last (one layout when the stack merged completely); empty
    /// when the source is a single layout.
    pub(crate) merged: Vec<Layout>,
    /// Offsets of the elements of the level below the top of an unmerged stack, -1 if invalid.
    pub(crate) table: Vec<isize>,
    pub(crate) boxes: Vec<PlanBox>,
    pub(crate) parallel: bool,
}

impl LoopPlan<'_> {
    /// Lowest and highest source offset the plan may read: the extent of the bottom layout,
    /// widened by that of the merged layout when the stack merged to one.
    ///
    /// A merge is exact, so the widening changes nothing; it keeps the memory-safety argument
    /// from resting on the merge's correctness.
    pub(crate) fn read_extent(&self) -> Option<(isize, isize)> {
        let bottom = view_extent(self.src_levels);
        let merged = match self.merged.as_slice() {
            [one] => one.extent(),
            _ => None,
        };
        match (bottom, merged) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, None) | (None, x) => x,
        }
    }

    /// The boxes of the plan, in the order they run.
    pub fn boxes(&self) -> &[PlanBox] {
        &self.boxes
    }

    /// Whether the plan runs on the rayon thread pool.
    pub fn is_parallel(&self) -> bool {
        self.parallel
    }

    /// The destination layout.
    pub fn dst(&self) -> &Layout {
        &self.dst
    }

    /// Number of destination elements written.
    pub fn n_written(&self) -> usize {
        self.boxes
            .iter()
            .map(|b| b.region.iter().map(|&(b, e)| e - b).product::<usize>())
            .sum()
    }
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
        write_list(f, self.dst.shape())?;
        writeln!(f)?;
        writeln!(f, "  dst: {}", self.dst)?;
        for (k, l) in self.src_levels.iter().enumerate() {
            writeln!(f, "  src level {k}: {l}")?;
        }
        if !self.merged.is_empty() {
            if self.merged.len() == 1 {
                writeln!(f, "  merged: {}", self.merged.first().ok_or(fmt::Error)?)?;
            } else {
                writeln!(
                    f,
                    "  unmerged: {} levels, offset table of {} entries",
                    self.merged.len(),
                    self.table.len()
                )?;
            }
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
        for b in &self.boxes {
            write!(f, "  box [")?;
            for (k, (lo, hi)) in b.region.iter().enumerate() {
                if k > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{lo}..{hi}")?;
            }
            let n = &b.nest;
            write!(f, "]: {} ", n.kernel)?;
            if n.kernel == Kernel::Tiled {
                write!(f, "{}x{TILE} ", crate::exec::tile_rows(self.elem_size))?;
            }
            let column = |k: usize| {
                n.axes
                    .iter()
                    .map(move |a| if k == 0 { a.0 as isize } else { a.1[k - 1] })
            };
            write_list(f, &column(0).collect::<Vec<_>>())?;
            write!(f, " dst @{} ", n.base[0])?;
            write_list(f, &column(1).collect::<Vec<_>>())?;
            if n.kernel != Kernel::Pad {
                write!(f, " src @{} ", n.base[1])?;
                write_list(f, &column(2).collect::<Vec<_>>())?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// One axis of a nest: extent and strides of the K operands (destination first).
pub(crate) type Axis<const K: usize> = (usize, [isize; K]);

/// Drops unit axes, reverses axes with a negative destination stride, orders axes by
/// decreasing destination stride and merges axes contiguous for every operand.
///
/// Returns `None` when the nest is empty. Reversal is legal because every destination element
/// is written exactly once and the source is not modified (aliasing goes through a temporary).
pub(crate) fn simplify<const K: usize>(
    mut axes: Vec<Axis<K>>,
    base: &mut [isize; K],
) -> Option<Vec<Axis<K>>> {
    if axes.iter().any(|a| a.0 == 0) {
        return None;
    }
    axes.retain(|a| a.0 > 1);
    // Wrapping arithmetic: every value is the offset of an element (or a stride) of a layout,
    // which fits `isize`, but the full span of a layout may not (before its buffer is checked).
    for (n, s) in axes.iter_mut() {
        if s[0] < 0 {
            for (b, st) in base.iter_mut().zip(s.iter_mut()) {
                *b = b.wrapping_add(st.wrapping_mul(*n as isize - 1));
                *st = st.wrapping_neg();
            }
        }
    }
    axes.sort_by(|x, y| y.1[0].cmp(&x.1[0]));
    // Merge in place: `w` is the last kept axis.
    let mut w = 0;
    for k in 1..axes.len() {
        let (n, s) = axes[k];
        let last = &mut axes[w];
        let contiguous = |op: usize| {
            isize::try_from(n)
                .ok()
                .and_then(|n| s[op].checked_mul(n))
                .is_some_and(|x| x == last.1[op])
        };
        if (0..K).all(contiguous) {
            last.0 *= n;
            last.1 = s;
        } else {
            w += 1;
            axes[w] = (n, s);
        }
    }
    axes.truncate(w + 1);
    if axes.is_empty() {
        axes.push((1, [0; K]));
    }
    Some(axes)
}

/// Breakpoints of the destination index space along each axis, from the masks of both sides.
fn cells(shape: &[usize], boxes: &[&[(usize, usize)]]) -> Vec<Vec<(usize, usize)>> {
    let mut per_axis: Vec<Vec<(usize, usize)>> = Vec::with_capacity(shape.len());
    for (k, &n) in shape.iter().enumerate() {
        let mut cuts = vec![0, n];
        for b in boxes {
            if let Some(&(lo, hi)) = b.get(k) {
                cuts.push(lo);
                cuts.push(hi);
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        per_axis.push(
            cuts.windows(2)
                .map(|w| (w[0], w[1]))
                .filter(|(a, b)| a < b)
                .collect(),
        );
    }
    // Cartesian product in row-major order.
    let mut res: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    for iv in per_axis {
        let mut next = Vec::with_capacity(res.len() * iv.len());
        for r in &res {
            for &i in &iv {
                let mut c = r.clone();
                c.push(i);
                next.push(c);
            }
        }
        res = next;
    }
    res
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

/// Chooses the inner kernel of a simplified copy nest and puts its axes in the order the
/// kernel expects.
fn pick_kernel(axes: &mut [Axis<2>], table: bool) -> Kernel {
    if table {
        return Kernel::OffsetTable;
    }
    let n = axes.len();
    let Some(&(na, [da, sa])) = axes.last() else {
        return Kernel::Strided;
    };
    if da != 1 {
        return Kernel::Strided;
    }
    match sa {
        1 => {
            // Whole rows: visit them in source order, so reads stream and only the (buffered)
            // writes jump; measured about 25% faster on a 256^3 permutation (1, 0, 2).
            if let Some((_, outer)) = axes.split_last_mut() {
                outer.sort_by_key(|a| std::cmp::Reverse(a.1[1].unsigned_abs()));
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
        .position(|a| a.1[1].unsigned_abs() == 1 && a.0 >= 8);
    match unit {
        Some(b) if na >= 8 => {
            // Outer loops may run in any order: move the source's unit axis next to the last.
            let ax = axes[b];
            axes.copy_within(b + 1..n - 1, b);
            axes[n - 2] = ax;
            Kernel::Tiled
        }
        _ => Kernel::StridedGather,
    }
}

/// Builds the table of offsets of the element space of `levels` (a stack, bottom first):
/// entry `l` is the buffer offset of row-major element `l` of the top of `levels`, or -1.
fn offset_table(levels: &[Layout]) -> Vec<isize> {
    let mut table: Vec<isize> = Vec::new();
    for (k, l) in levels.iter().enumerate() {
        let mut next = Vec::with_capacity(l.numel());
        let full: Vec<(usize, usize)> = l.shape().iter().map(|&n| (0, n)).collect();
        let valid = l.valid_box();
        let mut idx: Vec<usize> = vec![0; l.n_dims()];
        let mut first = true;
        for_each_offset(l.strides(), l.offset(), &full, |off| {
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
            let ok = idx.iter().zip(&valid).all(|(&i, &(b, e))| i >= b && i < e);
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
    table
}

/// Plans copying `src` into the elements of `dst` (same shape).
pub(crate) fn plan_copy<'a>(
    op: &'static str,
    elem: &'static str,
    elem_size: usize,
    dst: Layout,
    src: &'a dyn ViewLevels,
) -> Result<LoopPlan<'a>> {
    let levels = src.levels();
    let top_shape = levels.last().map_or(&[][..], |l| l.shape());
    if dst.shape() != top_shape {
        return Err(KernelError::ShapeMismatch {
            op,
            dst: dst.shape().to_vec(),
            src: top_shape.to_vec(),
        });
    }
    let merged: Cow<'_, [Layout]> = if levels.len() == 1 {
        Cow::Borrowed(levels)
    } else {
        Cow::Owned(merge_levels(levels))
    };
    let (top, below) = merged.split_last().ok_or(KernelError::EmptyStack)?;
    let table = if below.is_empty() {
        Vec::new()
    } else {
        offset_table(below)
    };
    if !below.is_empty() {
        // The stack's invariant 2 (and exact merging) keeps the top inside the table; checked
        // here because the gather kernel indexes the table without bounds checks.
        if let Some((lo, hi)) = top.extent() {
            if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= table.len()) {
                return Err(KernelError::LevelOutOfRange {
                    level: merged.len() - 1,
                    below: merged.len() - 2,
                    lo,
                    hi,
                    numel: table.len(),
                });
            }
        }
    }
    let src_box = if top.mask().is_some() {
        top.valid_box()
    } else {
        Vec::new()
    };
    let mut boxes = Vec::with_capacity(1);
    let masked = dst.mask().is_some() || top.mask().is_some();
    let (single, all_cells) = if masked {
        (None, cells(dst.shape(), &[&dst.valid_box(), &src_box]))
    } else {
        (Some(dst.valid_box()), Vec::new())
    };
    for cell in single.into_iter().chain(all_cells) {
        if dst.mask().is_some_and(|m| !inside(&cell, m)) {
            continue;
        }
        let kernel_src = src_box.is_empty() || inside(&cell, &src_box);
        let mut base = [base_of(dst.strides(), dst.offset(), &cell), 0];
        let axes: Vec<Axis<2>> = if kernel_src {
            base[1] = base_of(top.strides(), top.offset(), &cell);
            cell.iter()
                .zip(dst.strides())
                .zip(top.strides())
                .map(|((&(b, e), &d), &s)| (e - b, [d, s]))
                .collect()
        } else {
            cell.iter()
                .zip(dst.strides())
                .map(|(&(b, e), &d)| (e - b, [d, 0]))
                .collect()
        };
        let Some(mut axes) = simplify(axes, &mut base) else {
            continue;
        };
        let kernel = if kernel_src {
            pick_kernel(&mut axes, !below.is_empty())
        } else {
            Kernel::Pad
        };
        boxes.push(PlanBox {
            region: cell,
            nest: Nest { axes, base, kernel },
        });
    }
    let mut plan = LoopPlan {
        op,
        elem,
        elem_size,
        dst,
        src_levels: levels,
        // A single layout is not repeated.
        merged: if levels.len() == 1 {
            Vec::new()
        } else {
            merged.into_owned()
        },
        table,
        boxes,
        parallel: false,
    };
    plan.parallel = plan.n_written().saturating_mul(elem_size) >= PARALLEL_BYTES;
    Ok(plan)
}

/// Object-safe access to the levels of a view (so planning is not generic).
pub(crate) trait ViewLevels {
    fn levels(&self) -> &[Layout];
}

impl<V: View + ?Sized> ViewLevels for V {
    fn levels(&self) -> &[Layout] {
        View::levels(self)
    }
}

/// Reachable extent of a view: that of the layout for a single layout, that of the bottom
/// layout for a stack. `None` when nothing is reached.
pub(crate) fn view_extent(levels: &[Layout]) -> Option<(isize, isize)> {
    levels.first()?.extent()
}

/// Checks an extent against a buffer length.
pub(crate) fn check_extent(
    op: &'static str,
    role: &'static str,
    extent: Option<(isize, isize)>,
    len: usize,
) -> Result<()> {
    let Some((lo, hi)) = extent else {
        return Ok(());
    };
    if lo < 0 || usize::try_from(hi).map_or(true, |h| h >= len) {
        return Err(KernelError::OutOfBuffer {
            op,
            role,
            lo,
            hi,
            len,
        });
    }
    Ok(())
}
