// libsndfile: its header for types and constants, and the table of the functions proofkit calls,
// loaded from libsndfile.so.1 on first use (not linked: see proofkit_library). Loading it also
// loads its codec libraries (FLAC, Vorbis, Ogg, Opus, mpg123, LAME), so only commands that read
// or write sound pay for them.
#ifndef PROOFKIT_CSNDFILE_H
#define PROOFKIT_CSNDFILE_H

#include <sndfile.h>

#include "CProofkitShims.h"

/// Every libsndfile function proofkit calls (Sources/AudioIO/SndFile+Calls.swift), one slot each.
#define PROOFKIT_SNDFILE_FUNCTIONS(X)                                                              \
    X(sf_open)                                                                                     \
    X(sf_open_fd)                                                                                  \
    X(sf_open_virtual)                                                                             \
    X(sf_format_check)                                                                             \
    X(sf_command)                                                                                  \
    X(sf_readf_float)                                                                              \
    X(sf_readf_short)                                                                              \
    X(sf_writef_short)                                                                             \
    X(sf_seek)                                                                                     \
    X(sf_error)                                                                                    \
    X(sf_strerror)                                                                                 \
    X(sf_close)

/// `proofkit_sndfile_api` and `proofkit_sndfile_library()`: libsndfile.so.1 (Debian: libsndfile1).
PROOFKIT_LIBRARY_DECLARE(sndfile, PROOFKIT_SNDFILE_FUNCTIONS)

#endif
