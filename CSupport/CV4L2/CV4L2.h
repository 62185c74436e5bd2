// The kernel's video capture interface (V4L2) for the Camera adapter: the structs and constants
// of <linux/videodev2.h> (Debian's linux-libc-dev). Header-only: V4L2 is a set of ioctls on a
// device node, so there is no library to load; the calls themselves go through ProofkitSystem.
//
// Why C: the ioctl request numbers are function-like macros (_IOWR('V', 4, struct v4l2_format))
// that Swift cannot import, so each one is a static inline function here, named after its macro.
#ifndef PROOFKIT_CV4L2_H
#define PROOFKIT_CV4L2_H

#if defined(__linux__)
#include <linux/videodev2.h>

static inline unsigned long cv4l2_VIDIOC_QUERYCAP(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long cv4l2_VIDIOC_ENUM_FMT(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long cv4l2_VIDIOC_ENUM_FRAMESIZES(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long cv4l2_VIDIOC_ENUM_FRAMEINTERVALS(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
static inline unsigned long cv4l2_VIDIOC_G_FMT(void) { return VIDIOC_G_FMT; }
static inline unsigned long cv4l2_VIDIOC_S_FMT(void) { return VIDIOC_S_FMT; }
static inline unsigned long cv4l2_VIDIOC_S_PARM(void) { return VIDIOC_S_PARM; }
static inline unsigned long cv4l2_VIDIOC_REQBUFS(void) { return VIDIOC_REQBUFS; }
static inline unsigned long cv4l2_VIDIOC_QUERYBUF(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long cv4l2_VIDIOC_QBUF(void) { return VIDIOC_QBUF; }
static inline unsigned long cv4l2_VIDIOC_DQBUF(void) { return VIDIOC_DQBUF; }
static inline unsigned long cv4l2_VIDIOC_STREAMON(void) { return VIDIOC_STREAMON; }
static inline unsigned long cv4l2_VIDIOC_STREAMOFF(void) { return VIDIOC_STREAMOFF; }

/// The four-character code of a pixel format, as v4l2_fourcc does (`'M','J','P','G'`).
static inline unsigned int cv4l2_fourcc(char a, char b, char c, char d) { return v4l2_fourcc(a, b, c, d); }
#endif

#endif
