// Level statistics of 16-bit PCM (see the header): the sum of squares and the extremes in one
// pass, with the integer multiply-add that SSE2 has (PMADDWD) and Swift cannot ask for.
#include "CProofkitShims.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void proofkit_pcm16_measure(const int16_t *samples, size_t count, uint64_t *sum_of_squares,
                            int16_t *lowest, int16_t *highest) {
    uint64_t sum = 0;
    int16_t low = 0, high = 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    __m128i lows = zero, highs = zero, sums = zero;  // sums: two 64-bit lanes
    for (; i + 8 <= count; i += 8) {
        __m128i v = _mm_loadu_si128((const __m128i *)(samples + i));
        lows = _mm_min_epi16(lows, v);
        highs = _mm_max_epi16(highs, v);
        // Four sums of two squares; each is at most 2 * 32768^2 = 2^31, which fits an unsigned
        // 32-bit lane (PMADDWD's signed result wraps only for two -32768s, read as unsigned).
        __m128i pairs = _mm_madd_epi16(v, v);
        sums = _mm_add_epi64(sums, _mm_unpacklo_epi32(pairs, zero));
        sums = _mm_add_epi64(sums, _mm_unpackhi_epi32(pairs, zero));
    }
    uint64_t lanes[2];
    int16_t lowLanes[8], highLanes[8];
    _mm_storeu_si128((__m128i *)lanes, sums);
    _mm_storeu_si128((__m128i *)lowLanes, lows);
    _mm_storeu_si128((__m128i *)highLanes, highs);
    sum = lanes[0] + lanes[1];
    for (int k = 0; k < 8; k++) {
        if (lowLanes[k] < low) low = lowLanes[k];
        if (highLanes[k] > high) high = highLanes[k];
    }
#endif
    // The rest (everything on machines without SSE2, where the compiler vectorises this loop
    // itself, e.g. with NEON's widening multiply-accumulate on a Raspberry Pi).
    for (; i < count; i++) {
        int32_t x = samples[i];
        sum += (uint64_t)(uint32_t)(x * x);
        if (samples[i] < low) low = samples[i];
        if (samples[i] > high) high = samples[i];
    }
    *sum_of_squares = sum;
    *lowest = low;
    *highest = high;
}
