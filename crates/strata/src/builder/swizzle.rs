//! Swizzles of 2-, 3- and 4-vectors: reads (`v.zyx()`, `v.xxyy()`, `v.swizzle([2, 0])`, and
//! OpenCL's halves `lo`/`hi`/`even`/`odd`) and writes into a vector variable with distinct
//! components (`a.set_xz(w)`, `a.set_swizzle([3, 0], w)`). Every swizzle is a composition of component reads
//! (`Extract` into `Compose` in the IR), so every backend runs it as it runs those; a component
//! the vector does not have (`w` of a 3-vector) is a build error naming it, as with
//! [`Expr::get`].

use super::math::compose;
use super::types::{KernelType, Numeric};
use super::{record_error, Expr, Var};

impl<T: Numeric, const N: usize> Expr<[T; N]>
where
    [T; N]: KernelType,
{
    /// Components `idx`, in that order, as an `M`-vector (2 to 4): any component, any number
    /// of times. `v.swizzle([2, 1, 0])` is `v.zyx()`.
    #[track_caller]
    pub fn swizzle<const M: usize>(self, idx: [u8; M]) -> Expr<[T; M]>
    where
        [T; M]: KernelType,
    {
        // Direct calls (not a closure), so that an error points at the caller's line.
        let mut parts = [self.get(idx[0]); M];
        for k in 1..M {
            parts[k] = self.get(idx[k]);
        }
        compose(parts)
    }
}

impl<T: Numeric, const N: usize> Var<[T; N]>
where
    [T; N]: KernelType,
{
    /// Assigns the components of `value`, in order, to components `idx` of the variable
    /// (distinct, each one the vector has), leaving the others: `a.set_swizzle([2, 0], w)` is
    /// OpenCL's `a.zx = w`. A repeated or missing component is a build error at this line.
    #[track_caller]
    pub fn set_swizzle<const M: usize>(&self, idx: [u8; M], value: impl Into<Expr<[T; M]>>)
    where
        [T; M]: KernelType,
    {
        let value = value.into();
        for a in 0..M {
            if idx[..a].contains(&idx[a]) {
                record_error(format!(
                    "a swizzle write names component {} twice ({idx:?})",
                    idx[a]
                ));
            }
        }
        let cur = self.get();
        let mut parts = [cur.get(0); N];
        for (k, part) in parts.iter_mut().enumerate().skip(1) {
            *part = cur.get(k as u8);
        }
        for (j, &i) in idx.iter().enumerate() {
            if (i as usize) < N {
                parts[i as usize] = value.get(j as u8);
            } else {
                record_error(format!("component {i} of a {N}-vector"));
            }
        }
        self.set(compose(parts));
    }
}

/// Named swizzle writes taking `$w`-vectors.
macro_rules! swizzle_writes {
    ($w:literal: $($name:ident [$($i:literal),+])*) => {
        impl<T: Numeric, const N: usize> Var<[T; N]>
        where
            [T; N]: KernelType,
            [T; $w]: KernelType,
        {
            $(
                #[doc = concat!("Assigns a ", stringify!($w), "-vector to components `", stringify!($name), "` (see [`Var::set_swizzle`]).")]
                #[track_caller]
                pub fn $name(&self, value: impl Into<Expr<[T; $w]>>) {
                    self.set_swizzle([$($i),+], value)
                }
            )*
        }
    };
}

/// Named swizzles returning `$w`-vectors.
macro_rules! swizzles {
    ($w:literal: $($name:ident [$($i:literal),+])*) => {
        impl<T: Numeric, const N: usize> Expr<[T; N]>
        where
            [T; N]: KernelType,
            [T; $w]: KernelType,
        {
            $(
                #[doc = concat!("Components `", stringify!($name), "` as a ", stringify!($w), "-vector.")]
                #[track_caller]
                pub fn $name(self) -> Expr<[T; $w]> {
                    self.swizzle([$($i),+])
                }
            )*
        }
    };
}

swizzles!(2:
    xx [0, 0]
    xy [0, 1]
    xz [0, 2]
    xw [0, 3]
    yx [1, 0]
    yy [1, 1]
    yz [1, 2]
    yw [1, 3]
    zx [2, 0]
    zy [2, 1]
    zz [2, 2]
    zw [2, 3]
    wx [3, 0]
    wy [3, 1]
    wz [3, 2]
    ww [3, 3]
);

swizzles!(3:
    xxx [0, 0, 0]
    xxy [0, 0, 1]
    xxz [0, 0, 2]
    xxw [0, 0, 3]
    xyx [0, 1, 0]
    xyy [0, 1, 1]
    xyz [0, 1, 2]
    xyw [0, 1, 3]
    xzx [0, 2, 0]
    xzy [0, 2, 1]
    xzz [0, 2, 2]
    xzw [0, 2, 3]
    xwx [0, 3, 0]
    xwy [0, 3, 1]
    xwz [0, 3, 2]
    xww [0, 3, 3]
    yxx [1, 0, 0]
    yxy [1, 0, 1]
    yxz [1, 0, 2]
    yxw [1, 0, 3]
    yyx [1, 1, 0]
    yyy [1, 1, 1]
    yyz [1, 1, 2]
    yyw [1, 1, 3]
    yzx [1, 2, 0]
    yzy [1, 2, 1]
    yzz [1, 2, 2]
    yzw [1, 2, 3]
    ywx [1, 3, 0]
    ywy [1, 3, 1]
    ywz [1, 3, 2]
    yww [1, 3, 3]
    zxx [2, 0, 0]
    zxy [2, 0, 1]
    zxz [2, 0, 2]
    zxw [2, 0, 3]
    zyx [2, 1, 0]
    zyy [2, 1, 1]
    zyz [2, 1, 2]
    zyw [2, 1, 3]
    zzx [2, 2, 0]
    zzy [2, 2, 1]
    zzz [2, 2, 2]
    zzw [2, 2, 3]
    zwx [2, 3, 0]
    zwy [2, 3, 1]
    zwz [2, 3, 2]
    zww [2, 3, 3]
    wxx [3, 0, 0]
    wxy [3, 0, 1]
    wxz [3, 0, 2]
    wxw [3, 0, 3]
    wyx [3, 1, 0]
    wyy [3, 1, 1]
    wyz [3, 1, 2]
    wyw [3, 1, 3]
    wzx [3, 2, 0]
    wzy [3, 2, 1]
    wzz [3, 2, 2]
    wzw [3, 2, 3]
    wwx [3, 3, 0]
    wwy [3, 3, 1]
    wwz [3, 3, 2]
    www [3, 3, 3]
);

swizzles!(4:
    xxxx [0, 0, 0, 0]
    xxxy [0, 0, 0, 1]
    xxxz [0, 0, 0, 2]
    xxxw [0, 0, 0, 3]
    xxyx [0, 0, 1, 0]
    xxyy [0, 0, 1, 1]
    xxyz [0, 0, 1, 2]
    xxyw [0, 0, 1, 3]
    xxzx [0, 0, 2, 0]
    xxzy [0, 0, 2, 1]
    xxzz [0, 0, 2, 2]
    xxzw [0, 0, 2, 3]
    xxwx [0, 0, 3, 0]
    xxwy [0, 0, 3, 1]
    xxwz [0, 0, 3, 2]
    xxww [0, 0, 3, 3]
    xyxx [0, 1, 0, 0]
    xyxy [0, 1, 0, 1]
    xyxz [0, 1, 0, 2]
    xyxw [0, 1, 0, 3]
    xyyx [0, 1, 1, 0]
    xyyy [0, 1, 1, 1]
    xyyz [0, 1, 1, 2]
    xyyw [0, 1, 1, 3]
    xyzx [0, 1, 2, 0]
    xyzy [0, 1, 2, 1]
    xyzz [0, 1, 2, 2]
    xyzw [0, 1, 2, 3]
    xywx [0, 1, 3, 0]
    xywy [0, 1, 3, 1]
    xywz [0, 1, 3, 2]
    xyww [0, 1, 3, 3]
    xzxx [0, 2, 0, 0]
    xzxy [0, 2, 0, 1]
    xzxz [0, 2, 0, 2]
    xzxw [0, 2, 0, 3]
    xzyx [0, 2, 1, 0]
    xzyy [0, 2, 1, 1]
    xzyz [0, 2, 1, 2]
    xzyw [0, 2, 1, 3]
    xzzx [0, 2, 2, 0]
    xzzy [0, 2, 2, 1]
    xzzz [0, 2, 2, 2]
    xzzw [0, 2, 2, 3]
    xzwx [0, 2, 3, 0]
    xzwy [0, 2, 3, 1]
    xzwz [0, 2, 3, 2]
    xzww [0, 2, 3, 3]
    xwxx [0, 3, 0, 0]
    xwxy [0, 3, 0, 1]
    xwxz [0, 3, 0, 2]
    xwxw [0, 3, 0, 3]
    xwyx [0, 3, 1, 0]
    xwyy [0, 3, 1, 1]
    xwyz [0, 3, 1, 2]
    xwyw [0, 3, 1, 3]
    xwzx [0, 3, 2, 0]
    xwzy [0, 3, 2, 1]
    xwzz [0, 3, 2, 2]
    xwzw [0, 3, 2, 3]
    xwwx [0, 3, 3, 0]
    xwwy [0, 3, 3, 1]
    xwwz [0, 3, 3, 2]
    xwww [0, 3, 3, 3]
    yxxx [1, 0, 0, 0]
    yxxy [1, 0, 0, 1]
    yxxz [1, 0, 0, 2]
    yxxw [1, 0, 0, 3]
    yxyx [1, 0, 1, 0]
    yxyy [1, 0, 1, 1]
    yxyz [1, 0, 1, 2]
    yxyw [1, 0, 1, 3]
    yxzx [1, 0, 2, 0]
    yxzy [1, 0, 2, 1]
    yxzz [1, 0, 2, 2]
    yxzw [1, 0, 2, 3]
    yxwx [1, 0, 3, 0]
    yxwy [1, 0, 3, 1]
    yxwz [1, 0, 3, 2]
    yxww [1, 0, 3, 3]
    yyxx [1, 1, 0, 0]
    yyxy [1, 1, 0, 1]
    yyxz [1, 1, 0, 2]
    yyxw [1, 1, 0, 3]
    yyyx [1, 1, 1, 0]
    yyyy [1, 1, 1, 1]
    yyyz [1, 1, 1, 2]
    yyyw [1, 1, 1, 3]
    yyzx [1, 1, 2, 0]
    yyzy [1, 1, 2, 1]
    yyzz [1, 1, 2, 2]
    yyzw [1, 1, 2, 3]
    yywx [1, 1, 3, 0]
    yywy [1, 1, 3, 1]
    yywz [1, 1, 3, 2]
    yyww [1, 1, 3, 3]
    yzxx [1, 2, 0, 0]
    yzxy [1, 2, 0, 1]
    yzxz [1, 2, 0, 2]
    yzxw [1, 2, 0, 3]
    yzyx [1, 2, 1, 0]
    yzyy [1, 2, 1, 1]
    yzyz [1, 2, 1, 2]
    yzyw [1, 2, 1, 3]
    yzzx [1, 2, 2, 0]
    yzzy [1, 2, 2, 1]
    yzzz [1, 2, 2, 2]
    yzzw [1, 2, 2, 3]
    yzwx [1, 2, 3, 0]
    yzwy [1, 2, 3, 1]
    yzwz [1, 2, 3, 2]
    yzww [1, 2, 3, 3]
    ywxx [1, 3, 0, 0]
    ywxy [1, 3, 0, 1]
    ywxz [1, 3, 0, 2]
    ywxw [1, 3, 0, 3]
    ywyx [1, 3, 1, 0]
    ywyy [1, 3, 1, 1]
    ywyz [1, 3, 1, 2]
    ywyw [1, 3, 1, 3]
    ywzx [1, 3, 2, 0]
    ywzy [1, 3, 2, 1]
    ywzz [1, 3, 2, 2]
    ywzw [1, 3, 2, 3]
    ywwx [1, 3, 3, 0]
    ywwy [1, 3, 3, 1]
    ywwz [1, 3, 3, 2]
    ywww [1, 3, 3, 3]
    zxxx [2, 0, 0, 0]
    zxxy [2, 0, 0, 1]
    zxxz [2, 0, 0, 2]
    zxxw [2, 0, 0, 3]
    zxyx [2, 0, 1, 0]
    zxyy [2, 0, 1, 1]
    zxyz [2, 0, 1, 2]
    zxyw [2, 0, 1, 3]
    zxzx [2, 0, 2, 0]
    zxzy [2, 0, 2, 1]
    zxzz [2, 0, 2, 2]
    zxzw [2, 0, 2, 3]
    zxwx [2, 0, 3, 0]
    zxwy [2, 0, 3, 1]
    zxwz [2, 0, 3, 2]
    zxww [2, 0, 3, 3]
    zyxx [2, 1, 0, 0]
    zyxy [2, 1, 0, 1]
    zyxz [2, 1, 0, 2]
    zyxw [2, 1, 0, 3]
    zyyx [2, 1, 1, 0]
    zyyy [2, 1, 1, 1]
    zyyz [2, 1, 1, 2]
    zyyw [2, 1, 1, 3]
    zyzx [2, 1, 2, 0]
    zyzy [2, 1, 2, 1]
    zyzz [2, 1, 2, 2]
    zyzw [2, 1, 2, 3]
    zywx [2, 1, 3, 0]
    zywy [2, 1, 3, 1]
    zywz [2, 1, 3, 2]
    zyww [2, 1, 3, 3]
    zzxx [2, 2, 0, 0]
    zzxy [2, 2, 0, 1]
    zzxz [2, 2, 0, 2]
    zzxw [2, 2, 0, 3]
    zzyx [2, 2, 1, 0]
    zzyy [2, 2, 1, 1]
    zzyz [2, 2, 1, 2]
    zzyw [2, 2, 1, 3]
    zzzx [2, 2, 2, 0]
    zzzy [2, 2, 2, 1]
    zzzz [2, 2, 2, 2]
    zzzw [2, 2, 2, 3]
    zzwx [2, 2, 3, 0]
    zzwy [2, 2, 3, 1]
    zzwz [2, 2, 3, 2]
    zzww [2, 2, 3, 3]
    zwxx [2, 3, 0, 0]
    zwxy [2, 3, 0, 1]
    zwxz [2, 3, 0, 2]
    zwxw [2, 3, 0, 3]
    zwyx [2, 3, 1, 0]
    zwyy [2, 3, 1, 1]
    zwyz [2, 3, 1, 2]
    zwyw [2, 3, 1, 3]
    zwzx [2, 3, 2, 0]
    zwzy [2, 3, 2, 1]
    zwzz [2, 3, 2, 2]
    zwzw [2, 3, 2, 3]
    zwwx [2, 3, 3, 0]
    zwwy [2, 3, 3, 1]
    zwwz [2, 3, 3, 2]
    zwww [2, 3, 3, 3]
    wxxx [3, 0, 0, 0]
    wxxy [3, 0, 0, 1]
    wxxz [3, 0, 0, 2]
    wxxw [3, 0, 0, 3]
    wxyx [3, 0, 1, 0]
    wxyy [3, 0, 1, 1]
    wxyz [3, 0, 1, 2]
    wxyw [3, 0, 1, 3]
    wxzx [3, 0, 2, 0]
    wxzy [3, 0, 2, 1]
    wxzz [3, 0, 2, 2]
    wxzw [3, 0, 2, 3]
    wxwx [3, 0, 3, 0]
    wxwy [3, 0, 3, 1]
    wxwz [3, 0, 3, 2]
    wxww [3, 0, 3, 3]
    wyxx [3, 1, 0, 0]
    wyxy [3, 1, 0, 1]
    wyxz [3, 1, 0, 2]
    wyxw [3, 1, 0, 3]
    wyyx [3, 1, 1, 0]
    wyyy [3, 1, 1, 1]
    wyyz [3, 1, 1, 2]
    wyyw [3, 1, 1, 3]
    wyzx [3, 1, 2, 0]
    wyzy [3, 1, 2, 1]
    wyzz [3, 1, 2, 2]
    wyzw [3, 1, 2, 3]
    wywx [3, 1, 3, 0]
    wywy [3, 1, 3, 1]
    wywz [3, 1, 3, 2]
    wyww [3, 1, 3, 3]
    wzxx [3, 2, 0, 0]
    wzxy [3, 2, 0, 1]
    wzxz [3, 2, 0, 2]
    wzxw [3, 2, 0, 3]
    wzyx [3, 2, 1, 0]
    wzyy [3, 2, 1, 1]
    wzyz [3, 2, 1, 2]
    wzyw [3, 2, 1, 3]
    wzzx [3, 2, 2, 0]
    wzzy [3, 2, 2, 1]
    wzzz [3, 2, 2, 2]
    wzzw [3, 2, 2, 3]
    wzwx [3, 2, 3, 0]
    wzwy [3, 2, 3, 1]
    wzwz [3, 2, 3, 2]
    wzww [3, 2, 3, 3]
    wwxx [3, 3, 0, 0]
    wwxy [3, 3, 0, 1]
    wwxz [3, 3, 0, 2]
    wwxw [3, 3, 0, 3]
    wwyx [3, 3, 1, 0]
    wwyy [3, 3, 1, 1]
    wwyz [3, 3, 1, 2]
    wwyw [3, 3, 1, 3]
    wwzx [3, 3, 2, 0]
    wwzy [3, 3, 2, 1]
    wwzz [3, 3, 2, 2]
    wwzw [3, 3, 2, 3]
    wwwx [3, 3, 3, 0]
    wwwy [3, 3, 3, 1]
    wwwz [3, 3, 3, 2]
    wwww [3, 3, 3, 3]
);

impl<T: Numeric> Expr<[T; 2]>
where
    [T; 2]: KernelType,
{
    /// Component 0 (OpenCL's `.lo` of a 2-vector).
    #[track_caller]
    pub fn lo(self) -> Expr<T> {
        self.get(0)
    }
    /// Component 1 (`.hi`).
    #[track_caller]
    pub fn hi(self) -> Expr<T> {
        self.get(1)
    }
    /// Component 0 (`.even`).
    #[track_caller]
    pub fn even(self) -> Expr<T> {
        self.get(0)
    }
    /// Component 1 (`.odd`).
    #[track_caller]
    pub fn odd(self) -> Expr<T> {
        self.get(1)
    }
}

impl<T: Numeric> Expr<[T; 4]>
where
    [T; 4]: KernelType,
    [T; 2]: KernelType,
{
    /// Components `xy` (OpenCL's `.lo`).
    #[track_caller]
    pub fn lo(self) -> Expr<[T; 2]> {
        self.swizzle([0, 1])
    }
    /// Components `zw` (`.hi`).
    #[track_caller]
    pub fn hi(self) -> Expr<[T; 2]> {
        self.swizzle([2, 3])
    }
    /// Components `xz` (`.even`).
    #[track_caller]
    pub fn even(self) -> Expr<[T; 2]> {
        self.swizzle([0, 2])
    }
    /// Components `yw` (`.odd`).
    #[track_caller]
    pub fn odd(self) -> Expr<[T; 2]> {
        self.swizzle([1, 3])
    }
}

swizzle_writes!(2:
    set_xy [0, 1]
    set_xz [0, 2]
    set_xw [0, 3]
    set_yx [1, 0]
    set_yz [1, 2]
    set_yw [1, 3]
    set_zx [2, 0]
    set_zy [2, 1]
    set_zw [2, 3]
    set_wx [3, 0]
    set_wy [3, 1]
    set_wz [3, 2]
);

swizzle_writes!(3:
    set_xyz [0, 1, 2]
    set_xyw [0, 1, 3]
    set_xzy [0, 2, 1]
    set_xzw [0, 2, 3]
    set_xwy [0, 3, 1]
    set_xwz [0, 3, 2]
    set_yxz [1, 0, 2]
    set_yxw [1, 0, 3]
    set_yzx [1, 2, 0]
    set_yzw [1, 2, 3]
    set_ywx [1, 3, 0]
    set_ywz [1, 3, 2]
    set_zxy [2, 0, 1]
    set_zxw [2, 0, 3]
    set_zyx [2, 1, 0]
    set_zyw [2, 1, 3]
    set_zwx [2, 3, 0]
    set_zwy [2, 3, 1]
    set_wxy [3, 0, 1]
    set_wxz [3, 0, 2]
    set_wyx [3, 1, 0]
    set_wyz [3, 1, 2]
    set_wzx [3, 2, 0]
    set_wzy [3, 2, 1]
);

swizzle_writes!(4:
    set_xyzw [0, 1, 2, 3]
    set_xywz [0, 1, 3, 2]
    set_xzyw [0, 2, 1, 3]
    set_xzwy [0, 2, 3, 1]
    set_xwyz [0, 3, 1, 2]
    set_xwzy [0, 3, 2, 1]
    set_yxzw [1, 0, 2, 3]
    set_yxwz [1, 0, 3, 2]
    set_yzxw [1, 2, 0, 3]
    set_yzwx [1, 2, 3, 0]
    set_ywxz [1, 3, 0, 2]
    set_ywzx [1, 3, 2, 0]
    set_zxyw [2, 0, 1, 3]
    set_zxwy [2, 0, 3, 1]
    set_zyxw [2, 1, 0, 3]
    set_zywx [2, 1, 3, 0]
    set_zwxy [2, 3, 0, 1]
    set_zwyx [2, 3, 1, 0]
    set_wxyz [3, 0, 1, 2]
    set_wxzy [3, 0, 2, 1]
    set_wyxz [3, 1, 0, 2]
    set_wyzx [3, 1, 2, 0]
    set_wzxy [3, 2, 0, 1]
    set_wzyx [3, 2, 1, 0]
);
