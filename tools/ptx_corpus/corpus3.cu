// Corpus for the mixed-precision and binary64 paths (issue 15): half precision, tensor cores
// (HMMA, LDSM), asynchronous copies (LDGSTS, LDGDEPBAR, DEPBAR), binary64 arithmetic,
// atomics, barrier variants, the uniform datapath and local memory.  Regenerate the .ptx with
// build_corpus.py --ptx; each kernel is also a GPU test (tests/gpu/test_corpus_kernels.py), so
// every one writes results that depend on all the work it does.
#include <stdint.h>

// half precision through PTX (cuda_fp16.h needs the CCCL headers, not in the wheels)
__device__ __forceinline__ uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c)
{ uint32_t d; asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }
__device__ __forceinline__ uint32_t hadd2(uint32_t a, uint32_t b)
{ uint32_t d; asm("add.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
__device__ __forceinline__ uint32_t hsub2(uint32_t a, uint32_t b)
{ uint32_t d; asm("sub.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
__device__ __forceinline__ uint32_t hmul2(uint32_t a, uint32_t b)
{ uint32_t d; asm("mul.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
__device__ __forceinline__ uint32_t hmax2(uint32_t a, uint32_t b)
{ uint32_t d; asm("max.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b)); return d; }
__device__ __forceinline__ uint32_t hneg2(uint32_t a)
{ uint32_t d; asm("neg.f16x2 %0, %1;" : "=r"(d) : "r"(a)); return d; }
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{ uint32_t d; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo)); return d; }
__device__ __forceinline__ float half_lo(uint32_t a)
{ float f; asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, l; }" : "=f"(f) : "r"(a)); return f; }
__device__ __forceinline__ float half_hi(uint32_t a)
{ float f; asm("{ .reg .b16 l, h; mov.b32 {l, h}, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "r"(a)); return f; }
__device__ __forceinline__ unsigned short to_half(float f)
{ unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ unsigned short hadd(unsigned short a, unsigned short b)
{ unsigned short h; asm("add.f16 %0, %1, %2;" : "=h"(h) : "h"(a), "h"(b)); return h; }

extern "C" __global__ void half_math(uint32_t *out, const uint32_t *in, float *fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t a = in[i], b = in[i + n], c = in[i + 2 * n];
    uint32_t r = hfma2(a, b, c);
    r = hadd2(r, hmul2(a, c));
    r = hsub2(r, pack_half2(0.25f, 0.25f));
    r = hmax2(r, hneg2(b));
    float s = half_lo(r) * 1.5f + half_hi(r);
    unsigned short h = to_half(s);
    unsigned short g = hadd((unsigned short)(a & 0xffff), (unsigned short)(b >> 16));
    out[i] = (uint32_t)h | (uint32_t)g << 16;
    fout[i] = s + half_lo(h);
}

// one m16n8k16 tile per warp: A 16x16 row-major, B 16x8 col-major (both fp16), C/D fp32
extern "C" __global__ void tensor_mma(float *d, const unsigned short *a, const unsigned short *b, const float *c)
{
    __shared__ __align__(16) unsigned short sa[16 * 16];
    __shared__ __align__(16) unsigned short sb[8 * 16];
    int lane = threadIdx.x;
    for (int k = lane; k < 256; k += 32) sa[k] = a[k];
    for (int k = lane; k < 128; k += 32) sb[k] = b[k];
    __syncthreads();
    uint32_t a0, a1, a2, a3, b0, b1;
    uint32_t pa = (uint32_t)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
    uint32_t pb = (uint32_t)__cvta_generic_to_shared(&sb[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(pb));
    int row = lane / 4, col = 2 * (lane % 4);
    float c0 = c[row * 8 + col], c1 = c[row * 8 + col + 1];
    float c2 = c[(row + 8) * 8 + col], c3 = c[(row + 8) * 8 + col + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1),
                   "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    d[row * 8 + col] = d0;
    d[row * 8 + col + 1] = d1;
    d[(row + 8) * 8 + col] = d2;
    d[(row + 8) * 8 + col + 1] = d3;
}

// a 16-bit-accumulator HMMA too, and the m16n8k8 shape
extern "C" __global__ void tensor_mma_f16(uint32_t *d, const uint32_t *a, const uint32_t *b)
{
    int lane = threadIdx.x;
    uint32_t a0 = a[lane], a1 = a[lane + 32], a2 = a[lane + 64], a3 = a[lane + 96];
    uint32_t b0 = b[lane], b1 = b[lane + 32];
    uint32_t d0 = 0, d1 = 0, e0, e1;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d0), "+r"(d1) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
                 : "=r"(e0), "=r"(e1) : "r"(a0), "r"(a1), "r"(b0), "r"(d0), "r"(d1));
    d[lane] = d0 ^ e0;
    d[lane + 32] = d1 ^ e1;
}

// a block copies 2 x 16 bytes per thread global -> shared asynchronously, then reduces
extern "C" __global__ void async_copy(float *out, const float4 *in)
{
    __shared__ __align__(16) float4 buf[2 * 128];
    int t = threadIdx.x;
    uint32_t s0 = (uint32_t)__cvta_generic_to_shared(&buf[t]);
    uint32_t s1 = (uint32_t)__cvta_generic_to_shared(&buf[t + 128]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s0), "l"(in + blockIdx.x * 256 + t));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(s1), "l"(in + blockIdx.x * 256 + t + 128));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;");
    asm volatile("cp.async.wait_all;");
    __syncthreads();
    float4 v = buf[255 - t], w = buf[t];
    out[blockIdx.x * 128 + t] = v.x + 2.0f * v.y + 3.0f * v.z + 4.0f * v.w - w.x;
}

extern "C" __global__ void double_math(double *out, const double *in, const float *fin, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = in[i], y = in[i + n];
    double r = fma(x, y, 0.5) + x * 3.0;
    r = r - y * y;
    r = (x < y) ? r : r + 1.0;
    r = fmax(r, -x) + fabs(y);
    float f = fin[i];
    r += (double)f * x;
    r += (double)i;
    out[i] = r;
    out[i + n] = (double)(float)(r * 0.125) + (double)(long long)(y * 4.0);
}

extern "C" __global__ void atomics(float *fsum, int *isum, unsigned *umax, int *old_out, const float *in, int n)
{
    __shared__ int hist[64];
    __shared__ float fshared[1];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (t < 64) hist[t] = 0;
    if (t == 0) fshared[0] = 0.0f;
    __syncthreads();
    float v = i < n ? in[i] : 0.0f;
    atomicAdd(&hist[t & 63], 1);
    atomicAdd(&fshared[0], v);
    int prev = atomicMax(&hist[(t * 7) & 63], t);
    atomicAdd(fsum, v);
    atomicAdd(isum, 1);
    atomicMax(umax, (unsigned)i);
    int got = atomicCAS(&isum[1], t, t + 1);
    int ex = atomicExch(&isum[2], i);
    unsigned inc = atomicInc((unsigned *)&isum[3], 1000u);
    __syncthreads();
    if (t < 64) atomicAdd(&isum[4 + t], hist[t]);
    if (t == 0) atomicAdd(fsum + 1, fshared[0]);
    old_out[i] = prev + got + ex + (int)inc + atomicAnd(&isum[68], ~t) + atomicOr(&isum[69], t)
                 + atomicXor(&isum[70], t) + atomicMin(&isum[71], -t);
}

extern "C" __global__ void barriers(int *out, const int *in)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    int v = in[blockIdx.x * blockDim.x + t];
    s[t] = v;
    int count = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v != 3);
    int any = __syncthreads_or(v == 5);
    if (t < 128) {
        asm volatile("bar.arrive 1, 256;");
    } else {
        asm volatile("bar.sync 1, 256;");
        s[t] += s[t - 128];
    }
    asm volatile("bar.sync 2;");
    __threadfence_block();
    int w = s[255 - t];
    __threadfence();
    __syncwarp();
    unsigned vote = __ballot_sync(0xffffffffu, w > 0);
    out[blockIdx.x * blockDim.x + t] = count + 2 * all + 4 * any + w + __popc(vote);
}

// uniform values: the block index drives the addressing of shared memory (ULEA, [UR] addresses)
extern "C" __global__ void uniform_path(float *out, const float2 *in, int stride, int rows)
{
    __shared__ float2 tile[32 * 33];
    int t = threadIdx.x;
    int b = blockIdx.x;
    for (int k = t; k < 32 * 33; k += blockDim.x) tile[k] = in[b * 32 * 33 + k];
    __syncthreads();
    float acc = 0.0f;
    for (int r = 0; r < rows; r++) {
        float2 u = tile[(b * stride + r * 33) % (32 * 33)];   // the same for every thread
        float2 v = tile[(r * 33 + t) % (32 * 33)];
        acc += u.x * v.x + u.y * v.y;
    }
    out[b * blockDim.x + t] = acc;
}

// shared memory reached through a generic pointer: on sm_90 the address carries the CTA's
// cluster rank (S2UR SR_CgaCtaId)
__device__ __noinline__ float read_generic(const float *p, int k) { return p[k] * 2.0f; }

extern "C" __global__ void generic_shared(float *out, const float *in)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    const float *p = (t & 1) ? s : in;
    out[blockIdx.x * 128 + t] = read_generic(p, (t * 5) & 127) + s[127 - t];
}

// a local array indexed by a runtime value lives in local memory (LDL/STL)
extern "C" __global__ void local_memory(float *out, const float *in, const int *index)
{
    float a[48];
    int t = threadIdx.x;
    int base = blockIdx.x * blockDim.x + t;
    for (int k = 0; k < 48; k++) a[k] = in[base * 48 + k] * (float)(k + 1);
    int j = index[base];
    a[j % 48] += 1.0f;
    float acc = 0.0f;
    for (int k = 0; k < 48; k++) acc += a[(k * 5 + j) % 48] * (float)k;
    out[base] = acc + a[(j + 7) % 48];
}

// too many live values for 32 registers (__maxnreg__): ptxas spills to
// local memory, and nvdisasm marks the spill traffic (*"SpillRefill"*)
extern "C" __global__ void __maxnreg__(32) register_spills(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[40];
#pragma unroll
    for (int k = 0; k < 40; k++) v[k] = in[i + k * n];
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < 4; r++) {
#pragma unroll
        for (int k = 0; k < 40; k++) {
            v[k] = v[k] * v[(k + r + 1) % 40] + v[(k + 3) % 40];
            acc += v[k];
        }
    }
#pragma unroll
    for (int k = 0; k < 40; k++) out[i + k * n] = v[k] + acc;
}
