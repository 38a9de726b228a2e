//! Bottom-up rebuilding of an expression through the smart constructors, with facts and
//! an optional substitution of symbols: the engine of scoped simplification and partial
//! binding.

use hashbrown::HashMap;
use num_bigint::BigInt;

use crate::build::{self, Facts, Poly};
use crate::node::{info, node, Id, Node, Sort};

pub(crate) struct Rebuild<'a> {
    pub fx: &'a dyn Facts,
    pub subst: &'a dyn Fn(Id) -> Option<Id>,
    memo: HashMap<Id, Id>,
}

impl<'a> Rebuild<'a> {
    pub(crate) fn new(fx: &'a dyn Facts, subst: &'a dyn Fn(Id) -> Option<Id>) -> Self {
        Rebuild {
            fx,
            subst,
            memo: HashMap::new(),
        }
    }

    pub(crate) fn run(&mut self, id: Id) -> Id {
        if let Some(&r) = self.memo.get(&id) {
            return r;
        }
        let fx = self.fx;
        let r = match node(id) {
            Node::Const(_) | Node::Bool(_) | Node::Invalid(_) => id,
            Node::Sym(_) => (self.subst)(id).unwrap_or(id),
            Node::Prod(fs) => {
                let mut acc = build::constant(BigInt::from(1));
                for (a, k) in fs.iter() {
                    let a = self.run(*a);
                    for _ in 0..*k {
                        acc = build::mul(acc, a);
                    }
                }
                acc
            }
            Node::Sum(ts, c) => {
                let mut p = Poly::constant(c.clone());
                for (m, k) in ts.iter() {
                    let m = self.run(*m);
                    p = p.add(
                        &build::exact_multiple(fx, m, k).unwrap_or_else(|| Poly::of(m).scale(k)),
                    );
                }
                build::from_poly(p)
            }
            Node::FloorDiv(a, b) => {
                let (a, b) = (self.run(*a), self.run(*b));
                build::floor_div(fx, a, b)
            }
            Node::FloorMod(a, b) => {
                let (a, b) = (self.run(*a), self.run(*b));
                build::floor_mod(fx, a, b)
            }
            Node::CeilDiv(a, b) => {
                let (a, b) = (self.run(*a), self.run(*b));
                build::ceil_div(fx, a, b)
            }
            Node::Min(args) | Node::Max(args) => {
                let is_min = matches!(node(id), Node::Min(_));
                let args: Vec<Id> = args.iter().map(|a| self.run(*a)).collect();
                build::min_max(fx, is_min, &args)
            }
            Node::Cmp(kind, d) => {
                let d = self.run(*d);
                build::compare(fx, *kind, Poly::of(d))
            }
            Node::And(args) | Node::Or(args) => {
                let is_and = matches!(node(id), Node::And(_));
                let args: Vec<Id> = args.iter().map(|a| self.run(*a)).collect();
                build::and_or(is_and, &args)
            }
        };
        // An integer the facts pin to one value is that constant.
        let r = match fx.range(r).as_point() {
            Some(v) if info(r).sort == Sort::Int => build::constant(v.clone()),
            _ => r,
        };
        self.memo.insert(id, r);
        r
    }
}
