//! `Serialize`/`Deserialize` for [`View`], [`ViewStack`] and [`Guard`] (feature
//! `serde`); [`Op`](crate::Op) and [`IndexItem`](crate::IndexItem) derive theirs.
//!
//! A `Deserialize` impl receives no scope, so loading proves what the symbols'
//! declared ranges decide (an empty scope): weaker than the scope the values were
//! built under, never wrong, since what it cannot prove stays a guard.
//!
//! Expressions use symshape's own encoding (a self-contained node list per
//! expression, re-interned on load), so a loaded view holds the very `Expr`
//! handles that building it in the loading process gives. Loading goes through
//! the validating constructors; every failure is a deserialization error, never
//! a panic:
//!
//! 1. a view is checked as [`View::create`] checks it (ranks of strides and mask,
//!    sizes, mask bounds; concrete views exactly, symbolic ones by proof: what is
//!    proven false is an error, what is unproven is left to binding's validation of
//!    the bound fields, so the loaded view keeps exactly the saved guards), and a
//!    view whose fields are constants and that has no guard is rebuilt by it, so
//!    it is normalised as every concrete view is;
//! 2. a guard's op must be one the crate records (`GuardOp::ALL`, the one list every
//!    checker's op comes from), its comparison one of
//!    `< <= == != >= >`, and it is re-proven: a guard false for every value is an
//!    error, one true for every value is dropped (it can never fail);
//! 3. a stack needs at least one view, and a stack of several views is checked
//!    by [`ViewStack::from_views`] (every concrete view within the elements of
//!    the one below; a pair with a symbolic view by proof, an unproven fit
//!    becoming a `stack` guard of the upper view), and its recorded copy (`copy_at`,
//!    left out when nothing was copied) must be one of its levels.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use symshape::{CmpOp, Expr, Scope};

use crate::guard::{Checker, Guard, GuardOp};
use crate::stack::ViewStack;
use crate::view::{Fields, View};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireGuard {
    op: String,
    lhs: Expr,
    cmp: String,
    rhs: Expr,
    what: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireView {
    shape: Vec<Expr>,
    strides: Vec<Expr>,
    offset: Expr,
    mask: Option<Vec<(Expr, Expr)>>,
    #[serde(default)]
    guards: Vec<WireGuard>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WireStack {
    views: Vec<View>,
    /// The level a copy starts the storage at (`ViewStack::storage_level`); absent for 0.
    #[serde(default)]
    copy_at: usize,
}

fn wire_guard(g: &Guard) -> WireGuard {
    WireGuard {
        op: g.op().to_string(),
        lhs: g.lhs(),
        cmp: g.cmp().as_str().to_string(),
        rhs: g.rhs(),
        what: g.what().to_string(),
    }
}

impl Serialize for Guard {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        wire_guard(self).serialize(s)
    }
}

/// Re-records `g` into `into` through the proofs ops use (a guard proven true
/// for every value is dropped; one proven false is an error).
fn load_guard(cx: &Scope, g: WireGuard, into: &mut Vec<Guard>, ctx: &str) -> Result<(), String> {
    let op = GuardOp::parse(&g.op).ok_or_else(|| {
        let names: Vec<&str> = GuardOp::ALL.iter().map(|o| o.name()).collect();
        format!(
            "unknown op `{}` (expected one of {})",
            g.op,
            names.join(", ")
        )
    })?;
    let cmp: CmpOp = g
        .cmp
        .parse()
        .map_err(|_| format!("unknown comparison `{}` in a guard of {}", g.cmp, op.name()))?;
    let mut ck = Checker::new(cx, op, into, ctx.to_string());
    let what = g.what;
    ck.require(g.lhs, cmp, g.rhs, || what)
        .map_err(|e| e.to_string())?;
    *into = ck.guards;
    Ok(())
}

impl<'de> Deserialize<'de> for Guard {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Guard, D::Error> {
        let w = WireGuard::deserialize(d)?;
        let text = format!("{} {} {}", w.lhs, w.cmp, w.rhs);
        let mut got = Vec::new();
        load_guard(&Scope::new(), w, &mut got, "a loaded guard")
            .map_err(|m| de::Error::custom(format_args!("deserialize guard: {m}")))?;
        got.pop().ok_or_else(|| {
            de::Error::custom(format_args!(
                "deserialize guard: `{text}` holds for every value, so it is no pending guard"
            ))
        })
    }
}

impl Serialize for View {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WireView {
            shape: self.shape().to_vec(),
            strides: self.strides().to_vec(),
            offset: self.offset(),
            mask: self.mask().map(<[_]>::to_vec),
            guards: self.guards().iter().map(wire_guard).collect(),
        }
        .serialize(s)
    }
}

fn load_view(w: WireView) -> Result<View, String> {
    let cx = Scope::new();
    // Validation: exact for constant fields, proofs for symbolic ones.
    let checked = View::create(&cx, &w.shape, Some(&w.strides), w.offset, w.mask.as_deref())
        .map_err(|e| e.to_string())?;
    if w.guards.is_empty() && checked.guards().is_empty() && checked.is_concrete() {
        return Ok(checked);
    }
    let bare = View::from_fields(
        Fields {
            shape: w.shape,
            strides: w.strides,
            offset: w.offset,
            mask: w.mask,
        },
        Vec::new(),
    );
    let ctx = bare.ctx();
    let mut guards = Vec::new();
    for g in w.guards {
        load_guard(&cx, g, &mut guards, &ctx)?;
    }
    Ok(bare.with_guards(&guards))
}

impl<'de> Deserialize<'de> for View {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<View, D::Error> {
        let w = WireView::deserialize(d)?;
        load_view(w).map_err(|m| de::Error::custom(format_args!("deserialize view: {m}")))
    }
}

impl Serialize for ViewStack {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Views<'a> {
            views: &'a [View],
            #[serde(skip_serializing_if = "is_zero")]
            copy_at: usize,
        }
        fn is_zero(n: &usize) -> bool {
            *n == 0
        }
        Views {
            views: self.views(),
            copy_at: self.storage_level(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ViewStack {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ViewStack, D::Error> {
        let w = WireStack::deserialize(d)?;
        let err = |m: String| de::Error::custom(format_args!("deserialize stack: {m}"));
        let stack = match <[View; 1]>::try_from(w.views) {
            Ok([one]) => ViewStack::new(one),
            Err(views) => {
                ViewStack::from_views(&Scope::new(), views).map_err(|e| err(e.to_string()))?
            }
        };
        stack
            .with_copy_at(w.copy_at)
            .map_err(|e| err(e.to_string()))
    }
}
