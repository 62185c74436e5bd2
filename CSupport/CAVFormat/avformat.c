// libavformat, loaded on first use (see CAVFormat.h).
#include "CAVFormat.h"

PROOFKIT_LIBRARY_DEFINE(avformat, "libavformat.so.59", "libavformat59", PROOFKIT_AVFORMAT_FUNCTIONS, NULL)
