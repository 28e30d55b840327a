//! Vector types split into their components, for the vector variant ([`super::simd`]) only.
//!
//! [`split`] rewrites a kernel whose values, private variables or local arrays have vector
//! types (`[f32; 4]`, `[u32; 2]`) into one without them: every vector value, private
//! variable or array and local array of `[T; w]` becomes `w` of `T` (component `c` of value
//! `v` a value of its own, named `v.c`), a vector load or store `w` component loads or stores
//! at the same index, and component extraction, construction ([`Expr::Compose`],
//! [`Expr::Splat`], so swizzles), selects, casts, bit casts, the element-wise built-ins and
//! operators component operations, in component order. The scalar code and every other
//! backend keep the kernel as it is: only the vector variant compiles the split kernel, where
//! every component is an ordinary lane type, four work-items per register, with everything
//! [`super::simd`] does for scalars (consecutive accesses one vector load, proofs, masks).
//!
//! **Local arrays** are split in place, as a structure of arrays: a local array of `n`
//! elements of `[T; w]` keeps its bytes (the launch allocates and zeroes them as for the
//! scalar code, the same size), component `c` of element `i` at byte `(c * n + i) *
//! size_of::<T>()` ([`Split::locals`] maps each component array to the user's array and its
//! component; [`super::lower`]'s local-array base adds the offset). So the four work-items
//! of a vector reading vectors at consecutive indices read consecutive elements of each
//! component array: one vector load per component, no gathers. Each component array has the
//! user's array's name and length, and a fault site names the user's array
//! ([`Split::site_mem`]): an access out of bounds is the first component's, the same error as
//! the interpreter's (the index, the length, the array's name, the work-item, the line).
//! A private variable or array of `[T; w]` becomes `w` of `T` with the user's name and
//! length, mapped back the same way ([`Split::privates`]).
//!
//! The split kernel has its own regions and record layout ([`super::plan::Plan`] of it): the
//! group level of a launch that runs the vector variant walks that plan. What is not split,
//! so keeps the kernel on the scalar path with [`split`]'s reason: buffers, scalar
//! parameters and struct fields of vector types, collectives and atomics of vectors, the
//! reducing and geometric built-ins (`dot`, `length`, `cross`, `normalize`), stubs.

use crate::ir::{
    Block, Expr, ExprId, Function, IdVec, LocalId, MathKind, Mem, ParamKind, PrivateId, Stmt,
    ValueId,
};

/// A kernel with its vector types split ([`split`]).
pub(super) struct Split {
    /// The kernel without vector types.
    pub(super) g: Function,
    /// For each local array of `g`, the user's array and the component it holds.
    pub(super) locals: Vec<(LocalId, u32)>,
    /// For each private of `g`, the user's private it is a component of.
    pub(super) privates: Vec<PrivateId>,
}

impl Split {
    /// The user's memory behind memory `mem` of the split kernel (a fault site's).
    pub(super) fn site_mem(locals: &[(LocalId, u32)], privates: &[PrivateId], mem: Mem) -> Mem {
        match mem {
            Mem::Local(l) => locals.get(l.index()).map_or(mem, |&(u, _)| Mem::Local(u)),
            Mem::Private(p) => privates.get(p.index()).map_or(mem, |&u| Mem::Private(u)),
            _ => mem,
        }
    }
}

/// Whether `f` has a value, expression, private or local array of a vector type (then the
/// vector variant compiles [`split`]'s kernel).
pub(super) fn has_vectors(f: &Function) -> bool {
    f.values.iter().any(|v| v.ty.is_vector())
        || f.exprs.iter().any(|(_, _, t)| t.is_vector())
        || f.locals.iter().any(|d| d.elem.is_vector())
        || f.privates.iter().any(|d| d.elem.is_vector())
}

/// The name of component `c` of a value named `n`.
fn comp_name(n: &Option<String>, c: usize) -> Option<String> {
    n.as_ref().map(|n| format!("{n}.{c}"))
}

/// `f` with its vector types split into components (see the module docs), or why not, in
/// words (the vector variant's [`super::simd::scalar_reason`]).
pub(super) fn split(f: &Function) -> Result<Split, String> {
    for p in f.params.iter() {
        match p.kind {
            ParamKind::Buffer { elem, .. } if elem.value().is_some_and(|t| t.is_vector()) => {
                return Err(format!("the buffer `{}` of {}", p.name, f.elem_name(elem)));
            }
            ParamKind::Scalar(t) if t.is_vector() => {
                return Err(format!("the parameter `{}` of {t}", p.name));
            }
            _ => {}
        }
    }
    if let Some(v) = f.fields.iter().find(|v| v.ty.is_vector()) {
        return Err(format!(
            "the field `{}` of {}",
            f.mem_name(Mem::Buffer(v.buffer)) + "[]" + &f.path_suffix(v),
            v.ty
        ));
    }
    let mut g = Function::new(f.name.clone());
    g.params = f.params.clone();
    g.loop_count = f.loop_count;
    g.stubs = f.stubs.clone();
    g.structs = f.structs.clone();
    g.fields = f.fields.clone();
    g.hidden = f.hidden.clone();
    let values: IdVec<ValueId, Vec<ValueId>> = f
        .values
        .iter()
        .map(|d| {
            (0..d.ty.width as usize)
                .map(|c| {
                    let name = if d.ty.is_vector() {
                        comp_name(&d.name, c)
                    } else {
                        d.name.clone()
                    };
                    g.new_value(d.ty.component(), name)
                })
                .collect()
        })
        .collect();
    let mut locals = Vec::new();
    let local_map: IdVec<LocalId, Vec<Mem>> = f
        .locals
        .iter_enumerated()
        .map(|(l, d)| {
            (0..d.elem.width as u32)
                .map(|c| {
                    locals.push((l, c));
                    let mut d = d.clone();
                    d.elem = d.elem.component();
                    Mem::Local(g.locals.push(d))
                })
                .collect()
        })
        .collect();
    let mut privates = Vec::new();
    let private_map: IdVec<PrivateId, Vec<Mem>> = f
        .privates
        .iter_enumerated()
        .map(|(p, d)| {
            (0..d.elem.width)
                .map(|_| {
                    // The user's name (a reason or a fault names it).
                    let mut d = d.clone();
                    privates.push(p);
                    d.elem = d.elem.component();
                    Mem::Private(g.privates.push(d))
                })
                .collect()
        })
        .collect();
    let mut exprs: IdVec<ExprId, Vec<ExprId>> = IdVec::new();
    for (_, e, t) in f.exprs.iter() {
        let ct = t.component();
        let comps = |x: &ExprId| exprs[*x].clone();
        let w = t.width as usize;
        let out: Vec<ExprId> = match e {
            Expr::Literal(_) | Expr::Param(_) | Expr::BufferLen(_) | Expr::Builtin(_) => {
                vec![g.exprs.intern(e.clone(), t)]
            }
            Expr::Value(v) => values[*v]
                .iter()
                .map(|&vc| g.exprs.intern(Expr::Value(vc), ct))
                .collect(),
            Expr::Unary(op, a) => comps(a)
                .into_iter()
                .map(|ac| g.exprs.intern(Expr::Unary(*op, ac), ct))
                .collect(),
            Expr::Binary(op, a, b) => comps(a)
                .into_iter()
                .zip(comps(b))
                .map(|(ac, bc)| g.exprs.intern(Expr::Binary(*op, ac, bc), ct))
                .collect(),
            Expr::Select(c, a, b) => {
                let cs = comps(c);
                comps(a)
                    .into_iter()
                    .zip(comps(b))
                    .enumerate()
                    .map(|(i, (ac, bc))| {
                        let cc = cs[if cs.len() == 1 { 0 } else { i }];
                        g.exprs.intern(Expr::Select(cc, ac, bc), ct)
                    })
                    .collect()
            }
            Expr::Cast(a, s) => comps(a)
                .into_iter()
                .map(|ac| g.exprs.intern(Expr::Cast(ac, *s), ct))
                .collect(),
            Expr::Bitcast(a, to) => comps(a)
                .into_iter()
                .map(|ac| g.exprs.intern(Expr::Bitcast(ac, to.component()), ct))
                .collect(),
            Expr::Math(m, args) => {
                let at = f.exprs.ty(args[0]);
                if at.is_vector() && matches!(m.kind(), MathKind::Reduce | MathKind::Geometric) {
                    return Err(format!("the built-in `{}` of {at}", m.name()));
                }
                let args: Vec<Vec<ExprId>> = args.iter().map(comps).collect();
                (0..w)
                    .map(|c| {
                        let a = args.iter().map(|a| a[c]).collect();
                        g.exprs.intern(Expr::Math(*m, a), ct)
                    })
                    .collect()
            }
            Expr::Splat(a, n) => vec![exprs[*a][0]; *n as usize],
            Expr::Compose(parts) => parts.iter().map(|p| exprs[*p][0]).collect(),
            Expr::Extract(a, i) => vec![exprs[*a][*i as usize]],
            Expr::Stub(s, args) => {
                if t.is_vector() || args.iter().any(|a| f.exprs.ty(*a).is_vector()) {
                    return Err("a stub call of vectors".into());
                }
                let args = args.iter().map(|a| exprs[*a][0]).collect();
                vec![g.exprs.intern(Expr::Stub(*s, args), t)]
            }
        };
        debug_assert_eq!(out.len(), w, "{e:?}");
        exprs.push(out);
    }
    let mut s = Splitter {
        f,
        values: &values,
        exprs: &exprs,
        locals: &local_map,
        privates: &private_map,
    };
    g.body = s.block(&f.body)?;
    Ok(Split {
        g,
        locals,
        privates,
    })
}

struct Splitter<'a> {
    f: &'a Function,
    values: &'a IdVec<ValueId, Vec<ValueId>>,
    exprs: &'a IdVec<ExprId, Vec<ExprId>>,
    locals: &'a IdVec<LocalId, Vec<Mem>>,
    privates: &'a IdVec<PrivateId, Vec<Mem>>,
}

impl Splitter<'_> {
    /// The one component of a scalar expression.
    fn scalar(&self, e: ExprId) -> ExprId {
        self.exprs[e][0]
    }

    /// The component memories of `mem` (itself for a buffer or field of scalars).
    fn mems(&self, mem: Mem) -> Vec<Mem> {
        match mem {
            Mem::Local(l) => self.locals[l].clone(),
            Mem::Private(p) => self.privates[p].clone(),
            Mem::Buffer(_) | Mem::Field(_) => vec![mem],
        }
    }

    /// Whether `mem`'s element is a vector.
    fn vector_mem(&self, mem: Mem) -> bool {
        self.f.mem_elem(mem).is_some_and(|t| t.is_vector())
    }

    fn block(&mut self, b: &Block) -> Result<Block, String> {
        let mut out = Vec::with_capacity(b.len());
        for s in b {
            self.stmt(s, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, s: &Stmt, out: &mut Block) -> Result<(), String> {
        match s {
            Stmt::Let { value, expr } => {
                for (&v, &e) in self.values[*value].iter().zip(&self.exprs[*expr]) {
                    out.push(Stmt::Let { value: v, expr: e });
                }
            }
            Stmt::Load {
                value,
                mem,
                index,
                at,
            } => {
                let index = self.scalar(*index);
                for (&v, m) in self.values[*value].iter().zip(self.mems(*mem)) {
                    out.push(Stmt::Load {
                        value: v,
                        mem: m,
                        index,
                        at: *at,
                    });
                }
            }
            Stmt::Store {
                mem,
                index,
                value,
                at,
            } => {
                let index = self.scalar(*index);
                for (&x, m) in self.exprs[*value].iter().zip(self.mems(*mem)) {
                    out.push(Stmt::Store {
                        mem: m,
                        index,
                        value: x,
                        at: *at,
                    });
                }
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                order,
                at,
            } => {
                if self.vector_mem(*mem) {
                    return Err("an atomic of vectors".into());
                }
                out.push(Stmt::Atomic {
                    result: result.map(|r| self.values[r][0]),
                    mem: self.mems(*mem)[0],
                    index: self.scalar(*index),
                    op: *op,
                    operand: self.scalar(*operand),
                    compare: compare.map(|c| self.scalar(c)),
                    order: *order,
                    at: *at,
                });
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                at,
            } => {
                if self.vector_mem(*mem) {
                    return Err("an atomic of vectors".into());
                }
                out.push(Stmt::AtomicLoad {
                    value: self.values[*value][0],
                    mem: self.mems(*mem)[0],
                    index: self.scalar(*index),
                    order: *order,
                    at: *at,
                });
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => out.push(Stmt::If {
                cond: self.scalar(*cond),
                then: self.block(then)?,
                otherwise: self.block(otherwise)?,
            }),
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => out.push(Stmt::For {
                id: *id,
                var: self.values[*var][0],
                start: self.scalar(*start),
                end: self.scalar(*end),
                step: self.scalar(*step),
                body: self.block(body)?,
            }),
            Stmt::Loop { id, body } => out.push(Stmt::Loop {
                id: *id,
                body: self.block(body)?,
            }),
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => {
                let t = self.f.exprs.ty(*arg);
                if t.is_vector() || self.f.values[*value].ty.is_vector() {
                    return Err(format!("a collective of {t}"));
                }
                out.push(Stmt::Group {
                    value: self.values[*value][0],
                    op: *op,
                    scope: *scope,
                    arg: self.scalar(*arg),
                    source: source.map(|x| self.scalar(x)),
                });
            }
            Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return
            | Stmt::Barrier(_)
            | Stmt::MemFence { .. } => out.push(s.clone()),
        }
        Ok(())
    }
}
