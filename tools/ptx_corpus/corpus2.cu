// More forms for the corpus: shared-memory widths, barrier ids, predicate spills (P2R/R2P),
// register shuffles, plain 128-bit loads, constant operands in float math.
#include <stdint.h>

extern "C" __global__ void shared_widths(int *out, const int *in, float s)
{
    __shared__ uint8_t b8[256];
    __shared__ int8_t s8[256];
    __shared__ uint16_t b16[256];
    __shared__ int16_t s16[256];
    __shared__ long long b64[256];
    __shared__ int4 b128[256];
    int t = threadIdx.x;
    int v = in[t];
    b8[t] = v; s8[t] = v >> 8; b16[t] = v >> 3; s16[t] = v >> 5; b64[t] = (long long)v * v;
    b128[t] = make_int4(v, v + 1, v + 2, v + 3);
    asm volatile("bar.sync 1;");
    int r = b8[255 - t] + s8[(t + 3) & 255] + b16[(t + 5) & 255] + s16[(t + 7) & 255];
    r += (int)b64[(t + 9) & 255];
    int4 q = b128[(t + 11) & 255];
    asm volatile("bar.sync 2, 128;");
    r += q.x + q.w;
    float f = (float)r * s + s;
    out[t] = r + __float_as_int(f) + __shfl_sync(0xffffffff, r, v & 31) + __shfl_xor_sync(0xffffffff, r, t & 7, 16);
}

extern "C" __global__ void plain_vector_loads(int4 *out, int4 *in, float4 *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int4 a = in[i];
    in[i + n] = make_int4(1, 2, 3, 4);
    int4 b = in[i + 2 * n];
    float4 c = f[i];
    out[i] = make_int4(a.x + b.y, a.y + b.z, a.z + (int)c.x, a.w + (int)c.w);
}

extern "C" __global__ void many_predicates(int *out, const int *in, int n, int m)
{
    int i = threadIdx.x;
    bool p[12];
#pragma unroll
    for (int k = 0; k < 12; ++k) p[k] = in[i + k * 32] > k;
    int r = 0;
    for (int j = 0; j < n; ++j) {
        int v = in[j + m];
#pragma unroll
        for (int k = 0; k < 12; ++k) r += p[k] ? v * (k + 1) : (v ^ k);
        if (r > 1000000) r = in[r & 63];
    }
    out[i] = r;
}
