__device__ __forceinline__ float ex2(float x){float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float lg2(float x){float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float rcp(float x){float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float* at(const void* p, unsigned i){ unsigned long long r; asm("mad.wide.u32 %0, %1, 4, %2;" : "=l"(r) : "r"(i), "l"(p)); return (float*)r; }
__device__ __forceinline__ float ldg(const void* p, unsigned i){ float v; asm volatile("{ .reg .u64 a; mad.wide.u32 a, %1, 4, %2; ld.global.f32 %0, [a]; }" : "=f"(v) : "r"(i), "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg(const void* p, unsigned i, float v){ asm volatile("{ .reg .u64 a; mad.wide.u32 a, %0, 4, %1; st.global.f32 [a], %2; }" :: "r"(i), "l"(p), "f"(v) : "memory"); }
#define LOG2E 1.44269504f
#define LN2 0.693147182f

extern "C" __global__ void mlp_grad(const float* __restrict__ W1, const float* __restrict__ b1, const float* __restrict__ W2, const float* __restrict__ b2,
    const float* __restrict__ X, const unsigned* __restrict__ Y,
    float* gW1, float* gb1, float* gW2, float* gb2, float* L, float* hs, float* ps, unsigned n, unsigned d, unsigned h, unsigned c, float invn, unsigned hd, unsigned ch)
{
  if (threadIdx.x != 0) return;
    _Pragma("unroll 1") for (unsigned j = 0; j < hd; j++) stg(gW1, j, 0.f);
  _Pragma("unroll 1") for (unsigned j = 0; j < h; j++) stg(gb1, j, 0.f);
  _Pragma("unroll 1") for (unsigned j = 0; j < ch; j++) stg(gW2, j, 0.f);
  _Pragma("unroll 1") for (unsigned j = 0; j < c; j++) stg(gb2, j, 0.f);
  float loss = 0.f;
  _Pragma("unroll 1") for (unsigned i = 0; i < n; i++) {
    const float* x = at(X, i*d);
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      float a = ldg(b1, k);
      _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) a = a + ldg(W1, k*d + j) * ldg(x, j);
      stg(hs, k, a > 0.f ? a : 0.f);
    }
    unsigned y = __float_as_uint(ldg(Y, i));
    float m = -__int_as_float(0x7f800000), zy = 0.f;
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
      float z = ldg(b2, q);
      _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) z = z + ldg(W2, q*h + k) * ldg(hs, k);
      stg(ps, q, z); m = z > m ? z : m; if (q == y) zy = z;
    }
    float s = 0.f;
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) { float e = ex2((ldg(ps, q) - m) * LOG2E); stg(ps, q, e); s = s + e; }
    float r = rcp(s);
    loss = loss + (lg2(s) * LN2 - (zy - m));
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
      float dz = ldg(ps, q) * r - (q == y ? 1.f : 0.f);
      stg(ps, q, dz); stg(gb2, q, ldg(gb2, q) + dz);
      _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) stg(gW2, q*h + k, ldg(gW2, q*h + k) + dz * ldg(hs, k));
    }
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      if (ldg(hs, k) > 0.f) {
        float dh = 0.f;
        _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) dh = dh + ldg(W2, q*h + k) * ldg(ps, q);
        stg(gb1, k, ldg(gb1, k) + dh);
        _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) stg(gW1, k*d + j, ldg(gW1, k*d + j) + dh * ldg(x, j));
      }
    }
  }
  _Pragma("unroll 1") for (unsigned j = 0; j < hd; j++) stg(gW1, j, ldg(gW1, j) * invn);
  _Pragma("unroll 1") for (unsigned j = 0; j < h; j++) stg(gb1, j, ldg(gb1, j) * invn);
  _Pragma("unroll 1") for (unsigned j = 0; j < ch; j++) stg(gW2, j, ldg(gW2, j) * invn);
  _Pragma("unroll 1") for (unsigned j = 0; j < c; j++) stg(gb2, j, ldg(gb2, j) * invn);
  stg(L, 0, loss * invn);
}

