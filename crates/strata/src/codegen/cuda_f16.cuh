typedef unsigned short f16;
static __device__ inline float strata_h2f(f16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
static __device__ inline f16 strata_f2h(float f) { f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
static __device__ inline double strata_h2d(f16 h) { double d; asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h)); return d; }
static __device__ inline f16 strata_d2h(double d) { f16 h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d)); return h; }
