__device__ __forceinline__ float ex2(float x){float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float lg2(float x){float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
__device__ __forceinline__ float rcp(float x){float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;}
#define LOG2E 1.44269504f
#define LN2 0.693147182f

extern "C" __global__ void mlp_grad(const float* __restrict__ P, const float* __restrict__ X, const unsigned* __restrict__ Y,
    float* G, float* L, float* S, unsigned n, unsigned d, unsigned h, unsigned c, float invn)
{
  if (threadIdx.x != 0) return;
  const float* W1 = P; const float* b1 = W1 + h*d; const float* W2 = b1 + h; const float* b2 = W2 + c*h;
  unsigned np = h*d + h + c*h + c;
  _Pragma("unroll 1") for (unsigned j = 0; j < np; j++) G[j] = 0.f;
  float* gW1 = G; float* gb1 = G + h*d; float* gW2 = gb1 + h; float* gb2 = gW2 + c*h;
  float* hs = S; float* ps = S + h;
  float loss = 0.f;
  _Pragma("unroll 1") for (unsigned i = 0; i < n; i++) {
    const float* x = X + i*d;
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      float a = b1[k];
      _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) a = a + W1[k*d + j] * x[j];
      hs[k] = a > 0.f ? a : 0.f;
    }
    unsigned y = Y[i];
    float m = -__int_as_float(0x7f800000), zy = 0.f;
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
      float z = b2[q];
      _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) z = z + W2[q*h + k] * hs[k];
      ps[q] = z; m = z > m ? z : m; if (q == y) zy = z;
    }
    float s = 0.f;
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) { float e = ex2((ps[q] - m) * LOG2E); ps[q] = e; s = s + e; }
    float r = rcp(s);
    loss = loss + (lg2(s) * LN2 - (zy - m));
    _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
      float dz = ps[q] * r - (q == y ? 1.f : 0.f);
      ps[q] = dz; gb2[q] = gb2[q] + dz;
      _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) gW2[q*h + k] = gW2[q*h + k] + dz * hs[k];
    }
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      if (hs[k] > 0.f) {
        float dh = 0.f;
        _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) dh = dh + W2[q*h + k] * ps[q];
        gb1[k] = gb1[k] + dh;
        _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) gW1[k*d + j] = gW1[k*d + j] + dh * x[j];
      }
    }
  }
  _Pragma("unroll 1") for (unsigned j = 0; j < np; j++) G[j] = G[j] * invn;
  L[0] = loss * invn;
}

extern "C" __global__ void mlp_sgd(float* W, const float* G, unsigned count, float lr)
{
  unsigned j = threadIdx.x;
  if (j >= count) return;
  W[j] = W[j] - lr * G[j];
}

extern "C" __global__ void mlp_predict(const float* __restrict__ P, const float* __restrict__ X, float* Z,
    unsigned n, unsigned d, unsigned h, unsigned c)
{
  unsigned i = threadIdx.x;
  if (i >= n) return;
  const float* W1 = P; const float* b1 = W1 + h*d; const float* W2 = b1 + h; const float* b2 = W2 + c*h;
  const float* x = X + i*d;
  _Pragma("unroll 1") for (unsigned q = 0; q < c; q++) {
    float z = b2[q];
    _Pragma("unroll 1") for (unsigned k = 0; k < h; k++) {
      float a = b1[k];
      _Pragma("unroll 1") for (unsigned j = 0; j < d; j++) a = a + W1[k*d + j] * x[j];
      a = a > 0.f ? a : 0.f;
      z = z + W2[q*h + k] * a;
    }
    Z[i*c + q] = z;
  }
}
