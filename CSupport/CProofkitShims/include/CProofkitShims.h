// The only hand-written C in proofkit: helpers for what Swift cannot express directly.
// Every symbol is prefixed proofkit_<lib>_ and says why it exists.
#ifndef PROOFKIT_SHIMS_H
#define PROOFKIT_SHIMS_H

// MARK: ALSA (libasound)

/// Installs a do-nothing libasound error handler, so that libasound stops printing its own
/// "ALSA lib pcm.c:...: Unknown PCM ..." lines on stderr; proofkit reports errors itself.
///
/// Why C: `snd_lib_error_set_handler` takes a *variadic* function pointer
/// (`void (*)(const char *file, int line, const char *function, int err, const char *fmt, ...)`),
/// which Swift can neither declare nor implement. Idempotent and thread-safe to call more than once.
void proofkit_alsa_silence_errors(void);

// MARK: libpng (simplified API)

/// The text of `png_image.message` (libpng's last error or warning), or NULL when `image` is NULL.
///
/// Why C: `message` is a `char[64]` field, which Swift imports as a 64-element tuple; reading it
/// here avoids tuple and pointer-binding tricks in Swift. `image` is a `png_image *`, passed as
/// `const void *` so this header does not include <png.h> into the shims module (swift-crypto's
/// type-adapting shim idea). The string lives inside `*image`.
const char *proofkit_png_image_message(const void *image);

// MARK: SHA-256 with the CPU's SHA instructions

#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has the x86 SHA extensions (with SSSE3 and SSE4.1), else 0 (and always 0 on
/// other architectures).
///
/// Why C: proofkit hashes every model file before loading it (5 to 18 MB, on every run of
/// `proofkit mat`); the SHA instructions do it about 5x faster than portable code, and Swift
/// cannot emit them. `Inference.SHA256` uses this when available and its Swift code otherwise.
int proofkit_sha256_hardware_available(void);

/// Compresses `blocks` 64-byte blocks at `data` into `state` (the eight FIPS 180-4 words, A
/// first). Call only when `proofkit_sha256_hardware_available()` is 1.
void proofkit_sha256_hardware_blocks(uint32_t *state, const uint8_t *data, size_t blocks);

// MARK: 16-bit PCM levels

/// The exact sum of the squares of `count` 16-bit samples, and the lowest and highest sample
/// (both 0 when `count` is 0; the extremes start from 0, so `lowest <= 0 <= highest`).
///
/// Why C: `proofkit check` (and `trim`, which checks what it wrote) measures every sample of a
/// sound; SSE2's 16-bit multiply-add does eight squares in one instruction, which Swift's SIMD
/// types cannot express (they widen to floats first, about 4x slower here). Elsewhere a plain
/// loop that the compiler vectorises.
void proofkit_pcm16_measure(const int16_t *samples, size_t count, uint64_t *sum_of_squares,
                            int16_t *lowest, int16_t *highest);

// MARK: POSIX file I/O

/// Starts writing the dirty pages of `fd` to the disk, without waiting for them
/// (Linux `sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`); a no-op elsewhere. Durability
/// still needs `fdatasync`/`fsync` afterwards: this only gets the disk busy earlier, so that the
/// final sync waits less. Returns 0 or an errno.
///
/// Why C: glibc declares `sync_file_range` only under `_GNU_SOURCE`, which Swift's Glibc module
/// does not define.
int proofkit_posix_start_writeback(int fd);

#endif
