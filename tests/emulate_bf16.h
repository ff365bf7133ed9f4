/* AVX-512 BF16 emulated on any AVX-512 (F, BW, VL) CPU, for `make check`: built into a
   second test_engine with `-include tests/emulate_bf16.h`, before dintattn.h, so that the header's
   bf16 paths (the bf16 panels of FAST prompts on AMD's Zen 4 / Zen 5, the bf16 row kernels, the
   conversions) run and are checked on CPUs that lack the instructions, as CI's may. Not part of
   the library.

   - __builtin_cpu_supports("avx512bf16") answers 1 (every other feature as the CPU says);
   - vdpbf16ps becomes the header's DINTATTN__DPBF16_FMA, two FMAs in its order (each lane: acc +
     hi * hi, then + lo * lo, every product of two bf16 exact in f32), the same sums for normal
     inputs (vdpbf16ps reads subnormal inputs as zero: these FMAs do not);
   - vcvtneps2bf16 / vcvtne2ps2bf16 round to nearest even, subnormal inputs to signed zero, NaN
     kept quiet, as Intel's pseudo-code for them does. */
#ifndef DINTATTN_EMULATE_BF16_H
#define DINTATTN_EMULATE_BF16_H
#include <immintrin.h>

#define DINTATTN_EMU_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

/* f32 -> bf16 in the low half of each 32-bit lane */
DINTATTN_EMU_TARGET static inline __m512i dintattn_emu_bf16_lanes(__m512 v)
{
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u), abs = _mm512_set1_epi32(0x7FFFFFFF);
    const __m512i inf = _mm512_set1_epi32(0x7F800000);
    __m512i u = _mm512_castps_si512(v), odd, r;
    const __mmask16 sub = _mm512_testn_epi32_mask(u, inf), nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs), inf);
    u = _mm512_mask_and_epi32(u, sub, u, sign);
    odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
    return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
}

DINTATTN_EMU_TARGET static inline __m256i dintattn_emu_cvtneps(__m512 v)
{
    return _mm512_cvtepi32_epi16(dintattn_emu_bf16_lanes(v));
}

/* vcvtne2ps2bf16: the second operand's 16 values first, then the first's */
DINTATTN_EMU_TARGET static inline __m512i dintattn_emu_cvtne2ps(__m512 a, __m512 b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(dintattn_emu_cvtneps(b)), dintattn_emu_cvtneps(a), 1);
}

/* inside its own expansion the name is not expanded again: the second call is the builtin */
#define __builtin_cpu_supports(f) (__builtin_strcmp((f), "avx512bf16") == 0 || __builtin_cpu_supports(f))
/* the header's own stand-in for vdpbf16ps (DINTATTN__DPBF16_FMA, defined before its first use) */
#define _mm512_dpbf16_ps(acc, w, x) DINTATTN__DPBF16_FMA((acc), (__m512i)(w), (__m512i)(x))
#define _mm512_cvtne2ps_pbh(a, b) ((__m512bh)dintattn_emu_cvtne2ps((a), (b)))
#define _mm512_cvtneps_pbh(v) ((__m256bh)dintattn_emu_cvtneps(v))

#endif
