__device__ __forceinline__ float ex2(float x){float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float lg2(float x){float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float rcp(float x){float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float* at(const void* p, unsigned i){ unsigned long long r; asm("mad.wide.u32 %0, %1, 4, %2;" : "=l"(r) : "r"(i), "l"(p)); return (float*)r; }
__device__ __forceinline__ float ldg(const void* p, unsigned i){ float v; asm volatile("{ .reg .u64 a; mad.wide.u32 a, %1, 4, %2; ld.global.f32 %0, [a]; }" : "=f"(v) : "r"(i), "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg(const void* p, unsigned i, float v){ asm volatile("{ .reg .u64 a; mad.wide.u32 a, %0, 4, %1; st.global.f32 [a], %2; }" :: "r"(i), "l"(p), "f"(v) : "memory"); }
#define LOG2E 1.44269504f
#define LN2 0.693147182f

extern "C" __global__ void mlp_predict(const float* __restrict__ W1, const float* __restrict__ b1, const float* __restrict__ W2, const float* __restrict__ b2,
    const float* __restrict__ X, float* Z, unsigned n, unsigned d, unsigned h, unsigned c)
{
  unsigned i = threadIdx.x;
  if (i >= n) return;
    const float* x = at(X, i*d);
  _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
    float z = ldg(b2, q);
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      float a = ldg(b1, k);
      _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) a = a + ldg(W1, k*d + j) * ldg(x, j);
      a = a > 0.f ? a : 0.f;
      z = z + ldg(W2, q*h + k) * a;
    }
    stg(Z, i*c + q, z);
  }
}
