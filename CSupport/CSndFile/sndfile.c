// libsndfile, loaded on first use (see CSndFile.h).
#include "CSndFile.h"

PROOFKIT_LIBRARY_DEFINE(sndfile, "libsndfile.so.1", "libsndfile1", PROOFKIT_SNDFILE_FUNCTIONS, NULL)
