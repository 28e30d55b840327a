//! The validator: checks types, scoping, memory access and control flow of a [`Function`],
//! collects every error with its location, and returns the facts backends need.
//!
//! Backends only accept a [`ValidFunction`], which only [`validate`](fn@validate) can make, so no
//! backend sees unvalidated IR.
//!
//! What is checked: types; the scoping of values (a value is used only inside the block that
//! defines it, after its definition); memory access against the declared access; atomics'
//! types and orders (a relaxed fence, or an atomic load that releases, orders nothing and is
//! an error); the targets of `break` and `continue`; collectives' types (`f16` is refused in
//! collectives and atomics); struct layouts and field views. Every error is collected, each
//! with a location path such as `body[2].then[0]`.
//!
//! The facts ([`FunctionInfo`]: buffers read and written, `f64`, `f16`, 64-bit and float
//! atomics, barriers, fixed local memory) let the runtime refuse a kernel that a device
//! cannot run, at launch and at `Device::compile`, before any source is generated or
//! compiled.

use super::*;
use std::collections::HashSet;
use std::fmt;

/// One problem found by the validator.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ValidationError {
    /// Where: a path of statements such as `body[2].then[0]`, or `expression %5`.
    pub location: String,
    /// What is wrong.
    pub message: String,
}

/// Every problem found in one function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ValidationErrors {
    /// The kernel's name.
    pub kernel: String,
    /// The problems, in the order they were found.
    pub errors: Vec<ValidationError>,
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}` is invalid ({} error{}):",
            self.kernel,
            self.errors.len(),
            if self.errors.len() == 1 { "" } else { "s" }
        )?;
        for e in &self.errors {
            write!(f, "\n  at {}: {}", e.location, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// What the validator learned about a function, for backends and the launcher.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionInfo {
    /// Buffer parameters the kernel reads (index into params).
    pub reads: HashSet<ParamId>,
    /// Buffer parameters the kernel writes (stores or atomics).
    pub writes: HashSet<ParamId>,
    /// Uses `f64` anywhere.
    pub uses_f64: bool,
    /// Uses `f16` anywhere (an expression, a parameter, local or private memory).
    pub uses_f16: bool,
    /// Uses 64-bit integer atomics.
    pub uses_int64_atomics: bool,
    /// Uses float atomics.
    pub uses_float_atomics: bool,
    /// Contains a barrier or a work-group collective.
    pub uses_barrier: bool,
    /// Bytes of local memory of fixed size.
    pub fixed_local_bytes: u64,
}

/// A function that passed validation, with its facts.
#[derive(Clone, Debug)]
pub struct ValidFunction {
    function: Function,
    info: FunctionInfo,
}

impl ValidFunction {
    /// The function.
    pub fn function(&self) -> &Function {
        &self.function
    }
    /// The function, for passes that transform it (which must validate it again).
    pub fn into_function(self) -> Function {
        self.function
    }
    /// The facts.
    pub fn info(&self) -> &FunctionInfo {
        &self.info
    }
}

struct Validator<'a> {
    f: &'a Function,
    errors: Vec<ValidationError>,
    path: Vec<String>,
    defined: IdVec<ValueId, bool>,
    scopes: Vec<Vec<ValueId>>,
    in_scope: IdVec<ValueId, bool>,
    loops: Vec<LoopId>,
    info: FunctionInfo,
}

/// Validates `f`, returning it with its facts, or every error found.
pub fn validate(f: Function) -> Result<ValidFunction, ValidationErrors> {
    validate_keeping(f).map_err(|(e, _)| e)
}

/// [`validate()`], giving the function back with the errors (to print it) instead of dropping it.
pub fn validate_keeping(f: Function) -> Result<ValidFunction, (ValidationErrors, Box<Function>)> {
    let mut v = Validator {
        f: &f,
        errors: Vec::new(),
        path: Vec::new(),
        defined: vec![false; f.values.len()].into(),
        scopes: vec![Vec::new()],
        in_scope: vec![false; f.values.len()].into(),
        loops: Vec::new(),
        info: FunctionInfo::default(),
    };
    v.check_decls();
    v.check_exprs();
    v.block("body", &f.body);
    let info = std::mem::take(&mut v.info);
    if v.errors.is_empty() {
        Ok(ValidFunction { function: f, info })
    } else {
        let errors = ValidationErrors {
            kernel: f.name.clone(),
            errors: v.errors,
        };
        Err((errors, Box::new(f)))
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

impl Validator<'_> {
    fn err(&mut self, location: String, message: String) {
        self.errors.push(ValidationError { location, message });
    }

    fn here(&self) -> String {
        if self.path.is_empty() {
            "kernel".into()
        } else {
            self.path.join(".")
        }
    }

    fn err_here(&mut self, message: String) {
        let loc = self.here();
        self.err(loc, message);
    }

    fn check_decls(&mut self) {
        let f = self.f;
        if !is_ident(&f.name) {
            self.err("kernel".into(), format!("kernel name `{}` is not an identifier (letters, digits and `_`, not starting with a digit)", f.name));
        }
        let mut names = HashSet::new();
        for (i, p) in f.params.iter_enumerated() {
            let loc = format!("parameter {i} `{}`", p.name);
            if !is_ident(&p.name) {
                self.err(loc.clone(), "parameter name is not an identifier".into());
            }
            if !names.insert(p.name.clone()) {
                self.err(loc.clone(), "two parameters have this name".into());
            }
            match p.kind {
                ParamKind::Buffer { elem, .. } => match elem {
                    Elem::Value(t) => {
                        if t.scalar == Scalar::F64 {
                            self.info.uses_f64 = true;
                        }
                        self.info.uses_f16 |= t.scalar == Scalar::F16;
                    }
                    Elem::Struct(s) if s.index() >= f.structs.len() => {
                        self.err(loc.clone(), format!("refers to missing struct {s}"));
                    }
                    Elem::Struct(_) => {}
                },
                ParamKind::Scalar(t) => {
                    if t.scalar == Scalar::F64 {
                        self.info.uses_f64 = true;
                    }
                    self.info.uses_f16 |= t.scalar == Scalar::F16;
                }
                ParamKind::LocalLen => {}
            }
        }
        for (i, l) in f.locals.iter_enumerated() {
            let loc = format!("local array {i} `{}`", l.name);
            self.info.uses_f16 |= l.elem.scalar == Scalar::F16;
            if l.elem.width == 3 {
                self.err(
                    loc.clone(),
                    "local memory cannot hold 3-vectors; use 4-vectors".into(),
                );
            }
            match l.len {
                ArrayLen::Fixed(n) => {
                    if n == 0 {
                        self.err(loc, "a local array needs at least one element".into());
                    }
                    self.info.fixed_local_bytes += n as u64 * l.elem.size() as u64;
                }
                ArrayLen::Param(p) => {
                    if !matches!(f.params.get(p).map(|p| p.kind), Some(ParamKind::LocalLen)) {
                        self.err(loc, format!("its length refers to parameter {p}, which is not a local-length parameter"));
                    }
                }
            }
        }
        self.check_structs();
        for (loc, message) in f.hidden_problems() {
            self.err(loc, message);
        }
        for (i, p) in f.privates.iter_enumerated() {
            self.info.uses_f16 |= p.elem.scalar == Scalar::F16;
            if p.len == Some(0) {
                self.err(
                    format!("private array {i} `{}`", p.name),
                    "a private array needs at least one element".into(),
                );
            }
        }
    }

    /// Struct declarations: C identifiers, nested structs declared first, every field aligned
    /// for its type and inside the struct; and the field views, whose paths must lead from a
    /// buffer of structs to a scalar or vector.
    fn check_structs(&mut self) {
        let f = self.f;
        let mut names = HashSet::new();
        for (i, d) in f.structs.iter_enumerated() {
            let loc = format!("struct {i} `{}`", d.name);
            if !is_ident(&d.name) || !names.insert(d.name.as_str()) {
                self.err(
                    loc.clone(),
                    "the name is not an identifier or not unique".into(),
                );
            }
            if !d.align.is_power_of_two() || !d.size.is_multiple_of(d.align) {
                self.err(
                    loc.clone(),
                    format!(
                        "size {} and alignment {} are not a valid layout",
                        d.size, d.align
                    ),
                );
            }
            let mut fields = HashSet::new();
            for fd in &d.fields {
                let floc = format!("{loc} field `{}`", fd.name);
                if !is_ident(&fd.name) || !fields.insert(fd.name.as_str()) {
                    self.err(
                        floc.clone(),
                        "the name is not an identifier or not unique".into(),
                    );
                }
                let (size, align) = match fd.ty {
                    Elem::Value(t) => {
                        if t.scalar == Scalar::F64 {
                            self.info.uses_f64 = true;
                        }
                        self.info.uses_f16 |= t.scalar == Scalar::F16;
                        if t.scalar == Scalar::Bool {
                            self.err(floc.clone(), "struct fields cannot be bool (its size differs between C compilers); use u8 or u32".into());
                        }
                        (t.size() as u64, t.scalar.size() as u64)
                    }
                    Elem::Struct(n) if n < i => {
                        let inner = &f.structs[n];
                        (inner.size as u64, inner.align as u64)
                    }
                    Elem::Struct(n) => {
                        self.err(
                            floc,
                            format!("refers to struct {n}, which is not declared before it"),
                        );
                        continue;
                    }
                };
                let end = fd.offset as u64 + size * fd.len.unwrap_or(1) as u64;
                if !(fd.offset as u64).is_multiple_of(align)
                    || end > d.size as u64
                    || fd.len == Some(0)
                {
                    self.err(
                        floc,
                        format!("offset {} does not fit the struct's layout", fd.offset),
                    );
                }
            }
        }
        for (i, v) in f.fields.iter_enumerated() {
            let loc = format!("field view {i}");
            let root = match f.params.get(v.buffer).map(|p| p.kind) {
                Some(ParamKind::Buffer {
                    elem: Elem::Struct(s),
                    ..
                }) => s,
                _ => {
                    self.err(
                        loc,
                        format!("parameter {} is not a buffer of structs", v.buffer),
                    );
                    continue;
                }
            };
            match f.resolve_path(root, &v.path) {
                Ok((ty, offset)) if ty == v.ty && offset == v.offset => {}
                Ok((ty, offset)) => self.err(
                    loc,
                    format!(
                        "its path leads to a {ty} at offset {offset}, not a {} at {}",
                        v.ty, v.offset
                    ),
                ),
                Err(e) => self.err(loc, e),
            }
        }
    }

    fn check_exprs(&mut self) {
        let f = self.f;
        for (id, e, ty) in f.exprs.iter() {
            if let Err(m) = self.expr_type(e, ty) {
                self.err(
                    format!("expression %{} ({})", id, print::expr_to_string(f, id)),
                    m,
                );
            }
            if ty.scalar == Scalar::F64 {
                self.info.uses_f64 = true;
            }
            self.info.uses_f16 |= ty.scalar == Scalar::F16;
        }
    }

    fn expr_type(&self, e: &Expr, ty: Type) -> Result<(), String> {
        let f = self.f;
        let t = |id: ExprId| -> Result<Type, String> {
            if id.index() < f.exprs.len() {
                Ok(f.exprs.ty(id))
            } else {
                Err(format!("refers to missing expression %{}", id))
            }
        };
        let expect = |want: Type| -> Result<(), String> {
            if want == ty {
                Ok(())
            } else {
                Err(format!("has type {ty} but should have type {want}"))
            }
        };
        match e {
            Expr::Literal(l) => expect(Type::scalar(l.scalar)),
            Expr::Param(p) => match f.params.get(*p).map(|p| p.kind) {
                Some(ParamKind::Scalar(pt)) => expect(pt),
                _ => Err(format!("parameter {p} is not a scalar parameter")),
            },
            Expr::BufferLen(p) => match f.params.get(*p).map(|p| p.kind) {
                Some(ParamKind::Buffer { .. }) => expect(Type::U32),
                _ => Err(format!("parameter {p} is not a buffer")),
            },
            Expr::Value(v) => match f.values.get(*v) {
                Some(d) => expect(d.ty),
                None => Err(format!("value {} is not declared", v)),
            },
            Expr::Builtin(b) => {
                if b.dim().is_some_and(|d| d > 2) {
                    return Err(format!("{} dimension must be 0, 1 or 2", b.name()));
                }
                expect(Type::U32)
            }
            Expr::Unary(op, a) => {
                let at = t(*a)?;
                match op {
                    UnaryOp::Neg if !at.scalar.is_numeric() => {
                        Err("negation of a bool; use `not`".into())
                    }
                    UnaryOp::Not if at.scalar.is_float() => Err("bitwise not of a float".into()),
                    _ => expect(at),
                }
            }
            Expr::Binary(op, a, b) => {
                let (at, bt) = (t(*a)?, t(*b)?);
                if at != bt {
                    return Err(format!("operands of `{}` have different types {at} and {bt}; convert one explicitly with a cast", op.symbol()));
                }
                use BinaryOp::*;
                match op {
                    Add | Sub | Mul | Div | Rem if !at.scalar.is_numeric() => {
                        Err(format!("`{}` on bool", op.symbol()))
                    }
                    And | Or | Xor if at.scalar.is_float() => {
                        Err(format!("`{}` on a float", op.symbol()))
                    }
                    Shl | Shr if !at.scalar.is_int() => {
                        Err(format!("`{}` needs integers", op.symbol()))
                    }
                    Lt | Le | Gt | Ge if at.scalar == Scalar::Bool => {
                        Err(format!("`{}` on bool", op.symbol()))
                    }
                    _ if op.is_comparison() => expect(at.with_scalar(Scalar::Bool)),
                    _ => expect(at),
                }
            }
            Expr::Select(c, a, b) => {
                let (ct, at, bt) = (t(*c)?, t(*a)?, t(*b)?);
                if ct.scalar != Scalar::Bool || (ct.width != 1 && ct.width != at.width) {
                    return Err(format!("select condition has type {ct}; it must be bool or a bool vector as wide as the values"));
                }
                if at != bt {
                    return Err(format!(
                        "select branches have different types {at} and {bt}"
                    ));
                }
                expect(at)
            }
            Expr::Cast(a, s) => expect(t(*a)?.with_scalar(*s)),
            Expr::Bitcast(a, to) => {
                let at = t(*a)?;
                if at.width != to.width
                    || at.scalar.size() != to.scalar.size()
                    || at.scalar == Scalar::Bool
                    || to.scalar == Scalar::Bool
                {
                    return Err(format!("cannot reinterpret {at} as {to}: the types must have the same width and component size, and not be bool"));
                }
                expect(*to)
            }
            Expr::Math(fun, args) => {
                if args.len() != fun.arity() {
                    return Err(format!(
                        "{} takes {} arguments, got {}",
                        fun.name(),
                        fun.arity(),
                        args.len()
                    ));
                }
                let at = t(args[0])?;
                for (i, &a) in args.iter().enumerate().skip(1) {
                    let want = at.with_scalar(fun.arg_scalar(i, at.scalar));
                    if t(a)? != want {
                        return Err(format!(
                            "argument {} of {} must be {want}, got {}",
                            i + 1,
                            fun.name(),
                            t(a)?
                        ));
                    }
                }
                let s = at.scalar;
                match fun.kind() {
                    MathKind::Float if !s.is_float() => {
                        Err(format!("{} needs float arguments, got {at}", fun.name()))
                    }
                    MathKind::Int if !s.is_int() => {
                        Err(format!("{} needs integer arguments, got {at}", fun.name()))
                    }
                    MathKind::Numeric if !s.is_numeric() => {
                        Err(format!("{} needs numeric arguments, got {at}", fun.name()))
                    }
                    MathKind::FloatTest if !s.is_float() => {
                        Err(format!("{} needs float arguments, got {at}", fun.name()))
                    }
                    MathKind::FloatTest => expect(at.with_scalar(Scalar::Bool)),
                    MathKind::Reduce | MathKind::Geometric if !s.is_float() => {
                        Err(format!("{} needs float arguments, got {at}", fun.name()))
                    }
                    MathKind::FloatInt | MathKind::FloatToInt if !s.is_float() => {
                        Err(format!("{} needs a float argument, got {at}", fun.name()))
                    }
                    MathKind::FloatToInt => expect(at.with_scalar(Scalar::I32)),
                    MathKind::Reduce => expect(at.component()),
                    MathKind::Geometric if *fun == MathFn::Cross && at.width < 3 => {
                        Err("cross needs 3- or 4-vectors".into())
                    }
                    _ => expect(at),
                }
            }
            Expr::Splat(a, w) => {
                let at = t(*a)?;
                if at.is_vector() || !(2..=4).contains(w) {
                    return Err(format!(
                        "splat needs a scalar and a width of 2 to 4, got {at} and {w}"
                    ));
                }
                expect(Type::vector(at.scalar, *w))
            }
            Expr::Stub(n, args) => {
                let Some(s) = f.stubs.get(*n) else {
                    return Err(format!("stub function {n} is not declared"));
                };
                if args.len() != s.params.len() {
                    return Err(format!(
                        "stub `{}` takes {} arguments, got {}",
                        s.name,
                        s.params.len(),
                        args.len()
                    ));
                }
                for (i, (&a, &p)) in args.iter().zip(&s.params).enumerate() {
                    if t(a)? != p {
                        return Err(format!(
                            "argument {i} of stub `{}` has type {}, the stub takes {p}",
                            s.name,
                            t(a)?
                        ));
                    }
                }
                if !is_ident(&s.name) {
                    return Err(format!("stub name `{}` is not an identifier", s.name));
                }
                expect(s.ret)
            }
            Expr::Compose(parts) => {
                if !(2..=4).contains(&parts.len()) {
                    return Err(format!(
                        "a vector has 2 to 4 components, got {}",
                        parts.len()
                    ));
                }
                let pt = t(parts[0])?;
                for &p in parts {
                    if t(p)? != pt || pt.is_vector() {
                        return Err("vector components must be scalars of one type".into());
                    }
                }
                expect(Type::vector(pt.scalar, parts.len() as u8))
            }
            Expr::Extract(a, i) => {
                let at = t(*a)?;
                if *i >= at.width {
                    return Err(format!("component {i} of a {at}"));
                }
                expect(at.component())
            }
        }
    }

    /// Reports values used by `root` that are not in scope.
    fn check_scope(&mut self, root: ExprId) {
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        while let Some(id) = stack.pop() {
            if id.index() >= self.f.exprs.len() || !seen.insert(id) {
                continue;
            }
            let e = self.f.exprs.get(id);
            if let Expr::Value(v) = e {
                let ok = self.in_scope.get(*v).copied().unwrap_or(false);
                if !ok {
                    let name = self.value_name(*v);
                    self.err_here(format!("uses value {name} outside the block that defines it (or before it is defined)"));
                }
            }
            stack.extend(expr_operands(e));
        }
    }

    fn value_name(&self, v: ValueId) -> String {
        match self.f.values.get(v).and_then(|d| d.name.clone()) {
            Some(n) => format!("`{n}` (%v{})", v),
            None => format!("%v{}", v),
        }
    }

    fn define(&mut self, v: ValueId, ty: Type) {
        if v.index() >= self.defined.len() {
            self.err_here(format!("defines undeclared value %v{v}"));
            return;
        }
        if self.defined[v] {
            let name = self.value_name(v);
            self.err_here(format!("defines value {name} a second time"));
        }
        if self.f.values[v].ty != ty {
            let name = self.value_name(v);
            let decl = self.f.values[v].ty;
            self.err_here(format!("value {name} is declared {decl} but gets a {ty}"));
        }
        self.defined[v] = true;
        self.in_scope[v] = true;
        self.scopes.last_mut().unwrap().push(v);
    }

    fn ty(&self, e: ExprId) -> Option<Type> {
        (e.index() < self.f.exprs.len()).then(|| self.f.exprs.ty(e))
    }

    fn check_index(&mut self, mem: Mem, index: ExprId) {
        match self.ty(index) {
            Some(t) if t.scalar.is_int() && t.width == 1 => {}
            Some(t) => self.err_here(format!("index has type {t}; it must be a scalar integer")),
            None => self.err_here("index refers to a missing expression".into()),
        }
        if let Mem::Private(p) = mem {
            if let Some(d) = self.f.privates.get(p) {
                if d.len.is_none() && self.f.exprs.literal(index).is_none_or(|l| l.bits != 0) {
                    self.err_here(format!(
                        "variable `{}` is not an array; its index must be the literal 0",
                        d.name
                    ));
                }
            }
        }
    }

    fn mem_elem(&mut self, mem: Mem) -> Option<Type> {
        let e = self.f.mem_elem(mem);
        if e.is_none() {
            match mem {
                Mem::Buffer(p) if self.f.buffer_elem_size(p).is_some() => {
                    let n = self.f.mem_name(mem);
                    self.err_here(format!(
                        "accesses buffer `{n}` of structs as a whole; structs are read and written field by field (field views)"
                    ));
                }
                _ => self.err_here(format!("refers to missing memory {mem:?}")),
            }
        }
        e
    }

    fn buffer_access(&self, mem: Mem) -> Option<Access> {
        let p = self.f.mem_buffer(mem)?;
        match self.f.params.get(p)?.kind {
            ParamKind::Buffer { access, .. } => Some(access),
            _ => None,
        }
    }

    fn block(&mut self, name: &str, block: &Block) {
        self.scopes.push(Vec::new());
        for (i, s) in block.iter().enumerate() {
            self.path.push(format!("{name}[{i}]"));
            self.stmt(s);
            self.path.pop();
        }
        for v in self.scopes.pop().unwrap() {
            self.in_scope[v] = false;
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        for e in stmt_operands(s) {
            self.check_scope(e);
        }
        match s {
            Stmt::Let { value, expr } => {
                if let Some(t) = self.ty(*expr) {
                    self.define(*value, t);
                }
            }
            Stmt::Load {
                value, mem, index, ..
            } => {
                self.check_index(*mem, *index);
                if let Some(elem) = self.mem_elem(*mem) {
                    if let Some(a) = self.buffer_access(*mem) {
                        if !a.can_read() {
                            let n = self.f.mem_name(*mem);
                            self.err_here(format!(
                                "loads from buffer `{n}`, which is declared write-only"
                            ));
                        }
                        if let Some(p) = self.f.mem_buffer(*mem) {
                            self.info.reads.insert(p);
                        }
                    }
                    self.define(*value, elem);
                }
            }
            Stmt::Store {
                mem, index, value, ..
            } => {
                self.check_index(*mem, *index);
                if let Some(elem) = self.mem_elem(*mem) {
                    if let Some(a) = self.buffer_access(*mem) {
                        if !a.can_write() {
                            let n = self.f.mem_name(*mem);
                            self.err_here(format!(
                                "stores into buffer `{n}`, which is declared read-only"
                            ));
                        }
                        if let Some(p) = self.f.mem_buffer(*mem) {
                            self.info.writes.insert(p);
                        }
                    }
                    if let Some(t) = self.ty(*value) {
                        if t != elem {
                            let n = self.f.mem_name(*mem);
                            self.err_here(format!(
                                "stores a {t} into `{n}`, whose elements are {elem}"
                            ));
                        }
                    }
                }
            }
            Stmt::Atomic {
                result,
                mem,
                index,
                op,
                operand,
                compare,
                ..
            } => {
                self.check_index(*mem, *index);
                if matches!(mem, Mem::Private(_)) {
                    self.err_here(
                        "atomics work on buffers and local memory, not private variables".into(),
                    );
                }
                if let Some(elem) = self.mem_elem(*mem) {
                    if let Some(a) = self.buffer_access(*mem) {
                        if a != Access::ReadWrite {
                            let n = self.f.mem_name(*mem);
                            self.err_here(format!("atomic on buffer `{n}`, which is declared {}; atomics need read_write", a.name()));
                        }
                        if let Some(p) = self.f.mem_buffer(*mem) {
                            self.info.reads.insert(p);
                            self.info.writes.insert(p);
                        }
                    }
                    let s = elem.scalar;
                    let int_ok = s.is_int() && s.size() >= 4 && elem.width == 1;
                    let float_ok = s.is_float()
                        && s.size() >= 4
                        && elem.width == 1
                        && matches!(
                            op,
                            AtomicOp::Add | AtomicOp::Min | AtomicOp::Max | AtomicOp::Exchange
                        );
                    if !(int_ok || float_ok) {
                        self.err_here(format!("{} is not available on {elem}: atomics work on 32- and 64-bit integers, and add, min, max and exchange also on f32 and f64", op.name()));
                    }
                    if s.size() == 8 && s.is_int() {
                        self.info.uses_int64_atomics = true;
                    }
                    if s.is_float() {
                        self.info.uses_float_atomics = true;
                    }
                    for e in std::iter::once(*operand).chain(compare.iter().copied()) {
                        if let Some(t) = self.ty(e) {
                            if t != elem {
                                self.err_here(format!(
                                    "atomic operand has type {t}, the memory holds {elem}"
                                ));
                            }
                        }
                    }
                    if compare.is_some() != (*op == AtomicOp::CompareExchange) {
                        self.err_here(
                            "a compare value is given exactly for compare-exchange".into(),
                        );
                    }
                    if let Some(r) = result {
                        self.define(*r, elem);
                    }
                }
            }
            Stmt::AtomicLoad {
                value,
                mem,
                index,
                order,
                ..
            } => {
                self.check_index(*mem, *index);
                if order.order.releases() && order.order != MemOrder::SeqCst {
                    self.err_here(format!(
                        "an atomic load cannot be {}: it writes nothing to release (use an atomic exchange)",
                        order.order.name()
                    ));
                }
                if matches!(mem, Mem::Private(_)) {
                    self.err_here(
                        "atomic_load works on buffers and local memory, not private variables"
                            .into(),
                    );
                }
                if let Some(elem) = self.mem_elem(*mem) {
                    if let Some(a) = self.buffer_access(*mem) {
                        if a != Access::ReadWrite {
                            let n = self.f.mem_name(*mem);
                            self.err_here(format!("atomic_load of buffer `{n}`, which is declared {}; atomics need read_write", a.name()));
                        }
                        if let Some(p) = self.f.mem_buffer(*mem) {
                            self.info.reads.insert(p);
                        }
                    }
                    let s = elem.scalar;
                    if !(s.is_int() && s.size() >= 4 && elem.width == 1) {
                        self.err_here(format!(
                            "atomic_load is not available on {elem}: it works on 32- and 64-bit integers"
                        ));
                    }
                    if s.size() == 8 && s.is_int() {
                        self.info.uses_int64_atomics = true;
                    }
                    self.define(*value, elem);
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                if self.ty(*cond) != Some(Type::BOOL) {
                    self.err_here(format!(
                        "if condition has type {}; it must be bool",
                        self.ty(*cond).map_or("?".into(), |t| t.to_string())
                    ));
                }
                self.block("then", then);
                self.block("else", otherwise);
            }
            Stmt::For {
                id,
                var,
                start,
                end,
                step,
                body,
            } => {
                let t = self.ty(*start);
                if t.is_none_or(|t| !t.scalar.is_int() || t.is_vector())
                    || self.ty(*end) != t
                    || self.ty(*step) != t
                {
                    self.err_here(
                        "for loop start, end and step must be scalar integers of one type".into(),
                    );
                }
                if self.f.exprs.literal(*step).is_some_and(|l| l.is_zero()) {
                    self.err_here("for loop step is zero; the loop would never end".into());
                }
                self.loops.push(*id);
                self.scopes.push(Vec::new());
                if let Some(t) = t {
                    self.define(*var, t);
                }
                self.block("for", body);
                for v in self.scopes.pop().unwrap() {
                    self.in_scope[v] = false;
                }
                self.loops.pop();
            }
            Stmt::Loop { id, body } => {
                self.loops.push(*id);
                self.block("loop", body);
                self.loops.pop();
            }
            Stmt::Break(id) | Stmt::Continue(id) => {
                if !self.loops.contains(id) {
                    let what = if matches!(s, Stmt::Break(_)) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.err_here(format!("{what} outside of the loop it names (loop {})", id));
                }
            }
            Stmt::Return => {}
            Stmt::MemFence { order, .. } => {
                if order.order == MemOrder::Relaxed {
                    self.err_here("a relaxed fence orders nothing: give it acquire, release, acq_rel or seq_cst".into());
                }
            }
            Stmt::Barrier(_) => self.info.uses_barrier = true,
            Stmt::Group {
                value,
                op,
                scope,
                arg,
                source,
            } => {
                self.info.uses_barrier = true;
                let name = op.name(*scope);
                let Some(t) = self.ty(*arg) else { return };
                let ok = match op {
                    GroupOp::Any | GroupOp::All | GroupOp::Ballot => t == Type::BOOL,
                    _ if op.takes_source() => true,
                    _ => t.scalar.is_numeric() && t.width == 1,
                };
                if t.scalar == Scalar::F16 {
                    self.err_here(format!(
                        "{name} does not take f16 values; convert them to f32 first"
                    ));
                } else if !ok {
                    self.err_here(format!("{name} does not take a {t}"));
                }
                if op.sub_group_only() && *scope != GroupScope::SubGroup {
                    self.err_here(format!("{name} exists for sub-groups only"));
                }
                if op.takes_source() != source.is_some() {
                    self.err_here(format!(
                        "a second operand is given exactly for broadcast and the shuffles, not {name}"
                    ));
                }
                if let Some(src) = source {
                    if self.ty(*src) != Some(Type::U32) {
                        self.err_here(format!("the second operand of {name} must be a u32"));
                    }
                }
                self.define(*value, op.result_type(t));
            }
        }
    }
}
