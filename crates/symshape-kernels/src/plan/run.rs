//! Running a [`LoopPlan`]: its public run methods check the element type and the buffers
//! against everything the plan reaches, then hand the boxes to the kernels
//! (`exec::run_boxes`).

use crate::element::Element;
use crate::error::{Error, Result};
use crate::exec::run_boxes;
use crate::operand::check_extent;
use crate::plan::LoopPlan;

impl LoopPlan<'_> {
    /// Refuses elements of another type than the plan was made for.
    fn check_elem<T: Element>(&self) -> Result<()> {
        if std::mem::size_of::<T>() != self.elem_size || T::NAME != self.elem {
            return Err(Error::ElementMismatch {
                op: self.op,
                planned: self.elem,
                got: T::NAME,
            });
        }
        Ok(())
    }

    /// Checks the source and destination buffers against everything the plan reaches: the
    /// source's extent (or the range of its offset table) and the destination's extent.
    fn check_buffers(&self, src_len: usize, dst_len: usize) -> Result<()> {
        check_extent(self.op, "source", self.read, src_len)?;
        check_extent(self.op, "destination", self.dst_extent(), dst_len)
    }

    /// Runs a materialize plan: reads `src_buf` through the planned view and writes every
    /// element of `out` (row-major), masked elements taking `pad`.
    ///
    /// # Errors
    /// [`Error::ElementMismatch`], [`Error::OutputLength`], [`Error::OutOfBuffer`].
    pub fn run_materialize<T: Element>(&self, src_buf: &[T], out: &mut [T], pad: T) -> Result<()> {
        self.check_elem::<T>()?;
        if out.len() != self.dst_numel {
            return Err(Error::OutputLength {
                op: self.op,
                shape: self.dst_shape().iter().map(|&d| d as usize).collect(),
                expected: self.dst_numel,
                got: out.len(),
            });
        }
        self.check_buffers(src_buf.len(), out.len())?;
        // SAFETY: both extents (the table's entries included) were checked against the buffer
        // lengths just above; `out` and `src_buf` are distinct borrows; a row-major
        // destination has no self-overlap.
        unsafe { run_boxes(self, out.as_mut_ptr(), src_buf.as_ptr(), pad) };
        Ok(())
    }

    /// Runs a copy plan (or a materialize plan into a buffer of the planned view): reads
    /// `src_buf` through the planned source view and writes the planned destination elements
    /// of `dst_buf`, masked source elements taking `pad`.
    ///
    /// # Errors
    /// [`Error::ElementMismatch`], [`Error::OutOfBuffer`].
    pub fn run_copy<T: Element>(&self, src_buf: &[T], dst_buf: &mut [T], pad: T) -> Result<()> {
        self.check_elem::<T>()?;
        self.check_buffers(src_buf.len(), dst_buf.len())?;
        // SAFETY: extents checked above; distinct borrows; destination free of self-overlap
        // (checked when the copy plan was made).
        unsafe { run_boxes(self, dst_buf.as_mut_ptr(), src_buf.as_ptr(), pad) };
        Ok(())
    }
}
