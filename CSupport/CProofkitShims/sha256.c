// SHA-256 block compression with the CPU's SHA instructions (x86 SHA extensions), for model
// integrity checks at load (see the header). Written for proofkit from the FIPS 180-4 algorithm
// and Intel's documentation of SHA256RNDS2 / SHA256MSG1 / SHA256MSG2.
#include "CProofkitShims.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

int proofkit_sha256_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    int ssse3 = (ecx >> 9) & 1, sse41 = (ecx >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    int sha = (ebx >> 29) & 1;
    return ssse3 && sse41 && sha;
}

static const uint32_t proofkit_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

__attribute__((target("sha,sse4.1,ssse3")))
void proofkit_sha256_hardware_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
    // The SHA instructions keep the eight words as two registers: ABEF and CDGH.
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i abcd = _mm_loadu_si128((const __m128i *)&state[0]);  // lanes A B C D
    __m128i efgh = _mm_loadu_si128((const __m128i *)&state[4]);  // lanes E F G H
    abcd = _mm_shuffle_epi32(abcd, 0xB1);                        // B A D C
    efgh = _mm_shuffle_epi32(efgh, 0x1B);                        // H G F E
    __m128i state0 = _mm_alignr_epi8(abcd, efgh, 8);             // F E B A (ABEF, high to low)
    __m128i state1 = _mm_blend_epi16(efgh, abcd, 0xF0);          // H G D C (CDGH)
    while (blocks--) {
        const __m128i save0 = state0, save1 = state1;
        __m128i w[4];
        for (int group = 0; group < 16; group++) {
            __m128i *current = &w[group & 3];
            if (group < 4) current[0] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * group)), byteswap);
            __m128i message = _mm_add_epi32(*current, _mm_loadu_si128((const __m128i *)&proofkit_sha256_k[4 * group]));
            state1 = _mm_sha256rnds2_epu32(state1, state0, message);
            if (group >= 3 && group <= 14) {
                // W[4(g+1)..] = msg2(msg1(W[4(g-3)..], W[4(g-2)..]) + W[4(g-1)+1..4g], W[4g..])
                __m128i *next = &w[(group + 1) & 3];
                __m128i shifted = _mm_alignr_epi8(*current, w[(group + 3) & 3], 4);
                *next = _mm_sha256msg2_epu32(_mm_add_epi32(*next, shifted), *current);
            }
            message = _mm_shuffle_epi32(message, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, message);
            if (group >= 1 && group <= 12) {
                __m128i *previous = &w[(group + 3) & 3];
                *previous = _mm_sha256msg1_epu32(*previous, *current);
            }
        }
        state0 = _mm_add_epi32(state0, save0);
        state1 = _mm_add_epi32(state1, save1);
        data += 64;
    }
    __m128i feba = _mm_shuffle_epi32(state0, 0x1B);                // A B E F
    __m128i dchg = _mm_shuffle_epi32(state1, 0xB1);                // G H C D
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));  // A B C D
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));     // E F G H
}

#else

int proofkit_sha256_hardware_available(void) { return 0; }

void proofkit_sha256_hardware_blocks(uint32_t *state, const uint8_t *data, size_t blocks) {
    (void)state;
    (void)data;
    (void)blocks;
}

#endif
