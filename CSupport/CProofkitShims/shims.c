// sync_file_range is a GNU extension: declared only with _GNU_SOURCE, before any include.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CProofkitShims.h"

#include <errno.h>
#include <fcntl.h>

#include <alsa/asoundlib.h>
#include <png.h>

// MARK: ALSA

// A variadic handler that ignores everything libasound wants to print (see the header).
static void proofkit_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

void proofkit_alsa_silence_errors(void) {
    snd_lib_error_set_handler(proofkit_alsa_ignore_error);
}

// MARK: libpng

const char *proofkit_png_image_message(const void *image) {
    if (image == NULL) return NULL;
    return ((const png_image *)image)->message;
}

// MARK: POSIX file I/O

int proofkit_posix_start_writeback(int fd) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)fd;
    return 0;
#endif
}
