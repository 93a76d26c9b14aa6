// Source of the PTX corpus (tools/ptx_corpus/*.ptx): small kernels whose ptxas output
// exercises the SASS forms bobc encodes.  Regenerate the .ptx with build_corpus.py --ptx.
#include <stdint.h>

extern "C" __global__ void float_math(float *out, const float *in, int n, float s, float t)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i], y = in[i + n];
    float r = x * s + y;
    r = r + t;
    r = fmaxf(r, y) - fminf(x, s);
    r = r * __expf(x) + __log2f(fabsf(y) + 1.0f);
    r += __frcp_rn(y) + rsqrtf(fabsf(x)) + sqrtf(fabsf(r));
    r += exp2f(-x) + __fdividef(x, y);
    r = (x > y) ? r : -r;
    r = (fabsf(x) < 3.0f) ? r * 0.5f : r - 1.25f;
    r = isnan(y) ? 0.0f : r;
    r = isinf(x) ? r : r * -2.0f;
    out[i] = __saturatef(r) + fmaf(-x, fabsf(y), -r);
}

extern "C" __global__ void int_math(int *out, const int *in, unsigned *uout, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = in[i], b = in[2 * i + 1];
    int r = a * b + k;
    r = r + (a << 3) - (b >> 5);
    r ^= (a & b) | (~k);
    unsigned u = (unsigned)a >> (b & 31);
    u = (u << 7) | (u >> 25);
    r = (a < b) ? r : a - b;
    r = max(r, k);
    r = min(r, a);
    unsigned v = __umulhi((unsigned)a, (unsigned)b) + __mulhi(a, b);
    long long w = (long long)a * b + k;
    out[i] = r + (int)(w >> 32) + __popc(a) + __clz(b) + __brev(u) + __ffs(a);
    uout[i] = u + v + (unsigned)(a % 7) + (unsigned)b / 13u;
}

extern "C" __global__ void conversions(float *f, int *s, unsigned *u, const float *in, const int *ii, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    int a = ii[i];
    f[i] = (float)a + (float)(unsigned)a * 0.5f + __int2float_rz(a) + (float)(a & 0xffff);
    s[i] = (int)x + __float2int_rn(x) + __float2int_rd(x) + __float2int_ru(x);
    u[i] = (unsigned)x + __float2uint_rn(x * 2.0f);
}

extern "C" __global__ void memory_widths(uint8_t *b8, uint16_t *b16, int *b32, long long *b64,
                                         int4 *b128, float4 *f128, const uint8_t *c8, const int8_t *cs8,
                                         const uint16_t *c16, const int16_t *cs16, const int2 *c64, const int4 *c128, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    b8[i] = c8[i] + (uint8_t)cs8[i + 3];
    b16[i] = c16[i] + (uint16_t)cs16[i + 1];
    int2 p = c64[i];
    b64[i] = (long long)p.x * p.y;
    int4 q = __ldg(&c128[i]);
    b128[i] = make_int4(q.w, q.z, q.y, q.x);
    f128[i + 4] = make_float4((float)q.x, 1.0f, 2.0f, 3.0f);
    b32[i + 100] = q.x + q.y + c8[i + 1000];
}

extern "C" __global__ void shared_and_shuffle(float *out, const float *in, int n)
{
    __shared__ float tile[256];
    __shared__ double dtile[64];
    __shared__ int4 vtile[32];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    tile[t] = v;
    if (t < 64) dtile[t] = (double)v;
    if (t < 32) vtile[t] = make_int4(t, t + 1, t + 2, t + 3);
    __syncthreads();
    float r = tile[(t + 1) & 255] + tile[255 - t] + (float)dtile[t & 63];
    int4 q = vtile[t & 31];
    for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffff, r, o);
    r += __shfl_down_sync(0xffffffff, r, 1) + __shfl_up_sync(0xffffffff, r, 2) + __shfl_sync(0xffffffff, r, 3);
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    __syncthreads();
    out[blockIdx.x * 256 + t] = r + (float)(q.x + q.w) + (float)lane;
}

extern "C" __global__ void control_flow(float *out, const float *in, const int *flags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    int best = 0;
    float bestv = -1e30f;
    for (int j = 0; j < n; ++j) {
        float v = in[j];
        if (v > bestv) { bestv = v; best = j; }
        if (flags[j] & 1) acc += v; else acc -= v * 0.25f;
        if (acc > 1e6f) break;
    }
    unsigned long long c = clock64();
    out[i] = acc + (float)best + (float)(c & 1);
}

extern "C" __global__ void predicates(int *out, const int *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int a = in[i], b = in[i + n], c = in[i + 2 * n];
    bool p0 = a > 0, p1 = b < 3, p2 = c == 7, p3 = a != b, p4 = (a ^ c) > 5, p5 = b >= c;
    int r = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        int v = in[i + k * n + 3];
        r += (p0 && k & 1) ? v : 0;
        r += (p1 || k & 2) ? v * 3 : 1;
        r += (p2 ^ (k > 4)) ? v >> 1 : 2;
        r += (p3 && p4) ? v : -v;
        r += p5 ? k : v;
    }
    out[i] = r;
}

extern "C" __global__ void wide_math(long long *out, const long long *in, const double *d, double *dout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long a = in[i], b = in[i + n];
    out[i] = a + b * 3 + (a >> 7) + (long long)((unsigned long long)b >> 3);
    dout[i] = d[i] * d[i + 1] + (double)a;
}
