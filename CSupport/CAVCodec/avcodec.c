// libavcodec, loaded on first use (see CAVCodec.h).
#include "CAVCodec.h"

PROOFKIT_LIBRARY_DEFINE(avcodec, "libavcodec.so.59", "libavcodec59", PROOFKIT_AVCODEC_FUNCTIONS, NULL)
