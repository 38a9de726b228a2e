//! A tiny lazy tensor on top of `view` and `kernels`: view ops only record, `realize` runs.
//!
//! Run with `cargo run -p kernels --example lazy_tensor`. A tensor holds a shared buffer and a
//! `view::ViewStack`; reshape, permute, pad, flip, slice and expand push or rewrite views
//! without touching the buffer. `realize` lowers the stack to a `kernels::LayoutStack` and
//! materializes it; `add` (broadcasting) and `sum` run the zip and reduce kernels directly on
//! the lazy views.

use kernels::{
    materialize, reduce, zip, KernelError, LayoutStack, ReduceConfig, ReduceOp, Result, View as _,
};
use std::sync::Arc;
use view::{IndexItem, View, ViewStack};

/// A tensor of `f32`: a shared buffer read through a stack of views.
#[derive(Clone)]
struct Tensor {
    data: Arc<Vec<f32>>,
    views: ViewStack,
}

impl Tensor {
    /// A row-major tensor of `shape` holding `values`.
    fn from_vec(shape: &[i64], values: Vec<f32>) -> Result<Tensor> {
        let views = ViewStack::new(View::contiguous(shape)?);
        let t = Tensor {
            data: Arc::new(values),
            views,
        };
        // Checked once here so that a wrong length fails at creation, not at realize.
        let need = kernels::buffer_len(&t.layout()?)?;
        if t.data.len() < need {
            return Err(KernelError::OutputLength {
                op: "from_vec",
                shape: t.shape()?,
                expected: need,
                got: t.data.len(),
            });
        }
        Ok(t)
    }

    /// The same buffer through other views: the one thing every view op does.
    fn with(&self, views: ViewStack) -> Tensor {
        Tensor {
            data: Arc::clone(&self.data),
            views,
        }
    }

    fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        Ok(self.with(self.views.reshape(shape)?))
    }

    fn permute(&self, axes: &[usize]) -> Result<Tensor> {
        Ok(self.with(self.views.permute(axes)?))
    }

    fn pad(&self, padding: &[(i64, i64)]) -> Result<Tensor> {
        Ok(self.with(self.views.pad(padding)?))
    }

    fn flip(&self, flags: &[bool]) -> Result<Tensor> {
        Ok(self.with(self.views.flip(flags)?))
    }

    /// NumPy's `t[start:stop:step, ...]`, one triple per leading axis.
    fn slice(&self, ranges: &[(i64, i64, i64)]) -> Result<Tensor> {
        let items: Vec<IndexItem> = ranges
            .iter()
            .map(|&(start, stop, step)| IndexItem::Slice {
                start: Some(start),
                stop: Some(stop),
                step: Some(step),
            })
            .collect();
        Ok(self.with(self.views.index(&items)?))
    }

    fn expand(&self, shape: &[i64]) -> Result<Tensor> {
        Ok(self.with(self.views.expand(shape)?))
    }

    /// The view stack lowered to the kernels' layouts.
    fn layout(&self) -> Result<LayoutStack> {
        LayoutStack::from_view_stack(&self.views)
    }

    fn shape(&self) -> Result<Vec<usize>> {
        Ok(self.layout()?.shape().to_vec())
    }

    /// The values, row-major (padding reads zero).
    fn values(&self) -> Result<Vec<f32>> {
        materialize(&self.data, &self.layout()?, 0.0)
    }

    /// A new contiguous tensor with the values of this one.
    fn realize(&self) -> Result<Tensor> {
        let shape: Vec<i64> = self.shape()?.iter().map(|&n| n as i64).collect();
        Tensor::from_vec(&shape, self.values()?)
    }

    /// Element-wise sum with NumPy broadcasting.
    fn add(&self, other: &Tensor) -> Result<Tensor> {
        let d = zip(
            &self.data,
            &self.layout()?,
            &other.data,
            &other.layout()?,
            |a: f32, b: f32| a + b,
        )?;
        let shape: Vec<i64> = d.shape.iter().map(|&n| n as i64).collect();
        Tensor::from_vec(&shape, d.values)
    }

    /// Sum over `axes`.
    fn sum(&self, axes: &[usize]) -> Result<Tensor> {
        let d = reduce(
            &self.data,
            &self.layout()?,
            axes,
            ReduceOp::Sum,
            ReduceConfig::default(),
        )?;
        let shape: Vec<i64> = d.shape.iter().map(|&n| n as i64).collect();
        Tensor::from_vec(&shape, d.values)
    }
}

/// Prints a step and checks its values against the hand-computed ones.
fn show(what: &str, t: &Tensor, want: &[f32]) -> Result<()> {
    let values = t.values()?;
    println!("{what}");
    println!("  views:  {}", t.views.to_string().replace('\n', " <- "));
    println!("  layout: {}", t.layout()?);
    println!("  shape {:?}: {values:?}", t.shape()?);
    assert_eq!(values, want, "{what}");
    Ok(())
}

fn main() -> Result<()> {
    let x = Tensor::from_vec(&[2, 3], (0..6).map(|i| i as f32).collect())?;
    show("x = [[0, 1, 2], [3, 4, 5]]", &x, &[0., 1., 2., 3., 4., 5.])?;

    let t = x.permute(&[1, 0])?;
    // No data moved: the transpose shares x's buffer.
    assert!(Arc::ptr_eq(&t.data, &x.data));
    show("t = x.permute(1, 0)", &t, &[0., 3., 1., 4., 2., 5.])?;

    let f = t.reshape(&[6])?;
    assert_eq!(
        f.views.views().len(),
        2,
        "a flattened transpose is two views"
    );
    show("f = t.reshape(6)", &f, &[0., 3., 1., 4., 2., 5.])?;

    let p = f.pad(&[(1, 2)])?;
    show("p = f.pad(1, 2)", &p, &[0., 0., 3., 1., 4., 2., 5., 0., 0.])?;

    let r = p.flip(&[true])?;
    show("r = p.flip()", &r, &[0., 0., 5., 2., 4., 1., 3., 0., 0.])?;

    let s = r.slice(&[(2, 7, 1)])?;
    show("s = r[2:7]", &s, &[5., 2., 4., 1., 3.])?;

    let every_other = x.slice(&[(1, -3, -1), (0, 3, 2)])?;
    show(
        "x[1:-3:-1, 0:3:2] (both rows backwards, every other column)",
        &every_other,
        &[3., 5., 0., 2.],
    )?;

    let col = Tensor::from_vec(&[3, 1], vec![10., 20., 30.])?;
    let e = col.expand(&[3, 4])?;
    show(
        "e = col.expand(3, 4)",
        &e,
        &[10., 10., 10., 10., 20., 20., 20., 20., 30., 30., 30., 30.],
    )?;

    // The transposed view and the column, broadcast [3, 2] + [3, 1].
    let z = t.add(&col)?;
    show("z = t + col", &z, &[10., 13., 21., 24., 32., 35.])?;

    let row = Tensor::from_vec(&[3], vec![100., 200., 300.])?;
    show(
        "x + row",
        &x.add(&row)?,
        &[100., 201., 302., 103., 204., 305.],
    )?;

    show("t.sum(1)", &t.sum(&[1])?, &[3., 5., 7.])?;
    show("s.sum(0)", &s.sum(&[0])?, &[15.])?;

    let realized = r.realize()?;
    assert_eq!(realized.views.views().len(), 1);
    show(
        "r.realize()",
        &realized,
        &[0., 0., 5., 2., 4., 1., 3., 0., 0.],
    )?;
    println!("all values match");
    Ok(())
}
