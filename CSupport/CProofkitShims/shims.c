// sync_file_range is a GNU extension: declared only with _GNU_SOURCE, before any include.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CProofkitShims.h"

#include <errno.h>
#include <fcntl.h>

// MARK: POSIX file I/O

int proofkit_posix_start_writeback(int fd) {
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)fd;
    return 0;
#endif
}
