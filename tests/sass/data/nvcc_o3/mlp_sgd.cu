__device__ __forceinline__ float ex2(float x){float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float lg2(float x){float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float rcp(float x){float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float* at(const void* p, unsigned i){ unsigned long long r; asm("mad.wide.u32 %0, %1, 4, %2;" : "=l"(r) : "r"(i), "l"(p)); return (float*)r; }
__device__ __forceinline__ float ldg(const void* p, unsigned i){ float v; asm volatile("{ .reg .u64 a; mad.wide.u32 a, %1, 4, %2; ld.global.f32 %0, [a]; }" : "=f"(v) : "r"(i), "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg(const void* p, unsigned i, float v){ asm volatile("{ .reg .u64 a; mad.wide.u32 a, %0, 4, %1; st.global.f32 [a], %2; }" :: "r"(i), "l"(p), "f"(v) : "memory"); }
#define LOG2E 1.44269504f
#define LN2 0.693147182f

extern "C" __global__ void mlp_sgd(float* W, const float* G, unsigned count, float lr)
{
  unsigned j = threadIdx.x;
  if (j >= count) return;
  stg(W, j, ldg(W, j) - lr * ldg(G, j));
}

