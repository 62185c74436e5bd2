// A fake UVC webcam for the camera tests: an LD_PRELOAD library that answers the system calls
// proofkit's V4L2 capture makes (stat, fstat, open, ioctl, mmap, munmap, poll, close) for the
// nodes /dev/video0 (video capture) and /dev/video1 (its metadata node), as the uvcvideo driver
// does, and passes every other path and descriptor to the C library. The capture code above it is
// the real one, with its real calls through ProofkitSystem.
//
// It serves real frames: the JPEG photos listed in FAKECAM_FRAMES (paths separated by ':'), each
// decoded by TurboJPEG, cover-cropped and scaled to the negotiated size, then encoded as MJPEG
// (TurboJPEG, 4:2:2, as webcams send) or converted to YUYV (limited-range BT.601), at the
// negotiated frame rate, in turn (a sequence of video frames plays once per loop).
//
// Built by the tests (TestSupport.FakeCamera) with `cc -shared -fPIC fakecam.c -lturbojpeg -ldl`,
// never committed as a binary. Settings, all optional:
//   FAKECAM_FRAMES       the photos (default: none; a grey frame)
//   FAKECAM_FORMATS      the formats offered, in order: "MJPG,YUYV" (default), "YUYV", "H264"...
//   FAKECAM_FAULT        "busy" (EBUSY at S_FMT and REQBUFS, as when another program streams),
//                        "stall" (streams but gives no frame), "unplug" (see FAKECAM_UNPLUG_AFTER)
//   FAKECAM_UNPLUG_AFTER frames given before the device goes away: every call then fails with
//                        ENODEV and poll says POLLERR | POLLHUP (default 30 with FAULT=unplug)
//   FAKECAM_LOOP         "0": after the last photo, give no more frames (default: loop)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#define NODE_VIDEO "/dev/video0"
#define NODE_META "/dev/video1"
#define MAX_BUFFERS 8
#define MAX_FRAMES 2000

struct size { unsigned width, height; };
// The sizes of a common UVC webcam (a Logitech C270), with the frame rates it offers.
static const struct size sizes[] = {{640, 480}, {320, 240}, {1280, 720}};
static const unsigned rates_small[] = {30, 15};
static const unsigned rates_hd_yuyv[] = {10, 5};

struct frame { unsigned char *data; size_t length; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int fd;             // the descriptor handed out (an eventfd, so numbers never clash), or -1
    int meta;           // whether it is the metadata node
    unsigned formats[4];
    int format_count;
    unsigned pixelformat, width, height, rate;
    int buffer_count;
    unsigned char *buffers[MAX_BUFFERS];
    size_t buffer_length;
    int queued[MAX_BUFFERS];
    int streaming;
    double started;
    long delivered;     // the last frame number delivered, -1 before the first
    long given;         // frames given so far
    int unplugged;
    struct frame frames[MAX_FRAMES];
    int frame_count;
} cam = {.fd = -1};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static const char *setting(const char *name) {
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

static int fault(const char *name) {
    const char *value = setting("FAKECAM_FAULT");
    return value && strcmp(value, name) == 0;
}

// The C library's own `name`, looked up once.
#define REAL(name)                                                                                 \
    static __typeof__(name) *real_##name;                                                          \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int is_node(const char *path) {
    return path && (strcmp(path, NODE_VIDEO) == 0 || strcmp(path, NODE_META) == 0);
}

static void fill_stat(struct stat *info, const char *path) {
    memset(info, 0, sizeof *info);
    info->st_mode = S_IFCHR | 0660;
    info->st_rdev = makedev(81, strcmp(path, NODE_META) == 0 ? 1 : 0);
    info->st_gid = 44;
}

// MARK: Frames

static unsigned fourcc(const char *text) {
    return v4l2_fourcc(text[0], text[1], text[2], text[3]);
}

static void read_formats(void) {
    const char *list = setting("FAKECAM_FORMATS");
    if (!list) list = "MJPG,YUYV";
    cam.format_count = 0;
    for (const char *p = list; *p && cam.format_count < 4;) {
        if (strlen(p) < 4) break;
        cam.formats[cam.format_count++] = fourcc(p);
        p += 4;
        if (*p == ',') p++;
    }
}

// Decodes `path`, cover-crops it to width:height and scales it (bilinear) into `rgb`.
static int load_rgb(const char *path, unsigned width, unsigned height, unsigned char *rgb) {
    FILE *file = fopen(path, "rb");
    if (!file) return -1;
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *jpeg = malloc(length);
    if (!jpeg || fread(jpeg, 1, length, file) != (size_t)length) { fclose(file); free(jpeg); return -1; }
    fclose(file);
    tjhandle handle = tjInitDecompress();
    int w, h, sub, space;
    if (tjDecompressHeader3(handle, jpeg, length, &w, &h, &sub, &space) != 0) {
        tjDestroy(handle); free(jpeg); return -1;
    }
    // The largest TurboJPEG scale (1/8 ... 1) that keeps both sides at least the target's.
    int num = 1, den = 1;
    for (int d = 8; d >= 1; d /= 2) {
        if ((w + d - 1) / d >= (int)width && (h + d - 1) / d >= (int)height) { den = d; break; }
    }
    int sw = (w * num + den - 1) / den, sh = (h * num + den - 1) / den;
    unsigned char *full = malloc((size_t)sw * sh * 3);
    int ok = full && tjDecompress2(handle, jpeg, length, full, sw, 0, sh, TJPF_RGB, 0) == 0;
    tjDestroy(handle);
    free(jpeg);
    if (!ok) { free(full); return -1; }
    double scale = (double)sw / width < (double)sh / height ? (double)sw / width : (double)sh / height;
    double x0 = (sw - width * scale) / 2, y0 = (sh - height * scale) / 2;
    for (unsigned y = 0; y < height; y++) {
        double fy = y0 + (y + 0.5) * scale - 0.5;
        if (fy < 0) fy = 0;
        int iy = (int)fy; if (iy > sh - 2) iy = sh - 2; if (iy < 0) iy = 0;
        double ay = fy - iy; if (ay > 1) ay = 1;
        for (unsigned x = 0; x < width; x++) {
            double fx = x0 + (x + 0.5) * scale - 0.5;
            if (fx < 0) fx = 0;
            int ix = (int)fx; if (ix > sw - 2) ix = sw - 2; if (ix < 0) ix = 0;
            double ax = fx - ix; if (ax > 1) ax = 1;
            for (int c = 0; c < 3; c++) {
                const unsigned char *p = full + ((size_t)iy * sw + ix) * 3 + c;
                double top = p[0] * (1 - ax) + p[3] * ax;
                double bottom = p[(size_t)sw * 3] * (1 - ax) + p[(size_t)sw * 3 + 3] * ax;
                rgb[((size_t)y * width + x) * 3 + c] = (unsigned char)(top * (1 - ay) + bottom * ay + 0.5);
            }
        }
    }
    free(full);
    return 0;
}

static unsigned char clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : (unsigned char)v; }

// Limited-range BT.601, the chroma of each pixel pair averaged.
static void rgb_to_yuyv(const unsigned char *rgb, unsigned width, unsigned height, unsigned char *out) {
    for (size_t i = 0; i < (size_t)width * height; i += 2) {
        const unsigned char *a = rgb + i * 3, *b = a + 3;
        int r = (a[0] + b[0] + 1) / 2, g = (a[1] + b[1] + 1) / 2, bl = (a[2] + b[2] + 1) / 2;
        out[i * 2] = clamp8(16 + ((66 * a[0] + 129 * a[1] + 25 * a[2] + 128) >> 8));
        out[i * 2 + 1] = clamp8(128 + ((-38 * r - 74 * g + 112 * bl + 128) >> 8));
        out[i * 2 + 2] = clamp8(16 + ((66 * b[0] + 129 * b[1] + 25 * b[2] + 128) >> 8));
        out[i * 2 + 3] = clamp8(128 + ((112 * r - 94 * g - 18 * bl + 128) >> 8));
    }
}

static void free_frames(void) {
    for (int i = 0; i < cam.frame_count; i++) free(cam.frames[i].data);
    cam.frame_count = 0;
}

// Every photo of FAKECAM_FRAMES in the negotiated format and size, made before streaming starts.
static void make_frames(void) {
    free_frames();
    unsigned width = cam.width, height = cam.height;
    unsigned char *rgb = malloc((size_t)width * height * 3);
    const char *list = setting("FAKECAM_FRAMES");
    char *copy = strdup(list ? list : "");
    tjhandle encoder = tjInitCompress();
    for (char *save = NULL, *path = strtok_r(copy, ":", &save); path && cam.frame_count < MAX_FRAMES;
         path = strtok_r(NULL, ":", &save)) {
        if (load_rgb(path, width, height, rgb) != 0) continue;
        struct frame *frame = &cam.frames[cam.frame_count];
        if (cam.pixelformat == V4L2_PIX_FMT_YUYV) {
            frame->length = (size_t)width * height * 2;
            frame->data = malloc(frame->length);
            rgb_to_yuyv(rgb, width, height, frame->data);
        } else {
            unsigned char *jpeg = NULL;
            unsigned long length = 0;
            if (tjCompress2(encoder, rgb, width, 0, height, TJPF_RGB, &jpeg, &length, TJSAMP_422, 80, 0) != 0)
                continue;
            frame->data = malloc(length);
            memcpy(frame->data, jpeg, length);
            frame->length = length;
            tjFree(jpeg);
        }
        cam.frame_count++;
    }
    if (cam.frame_count == 0) {  // no photo: one mid-grey frame
        memset(rgb, 128, (size_t)width * height * 3);
        struct frame *frame = &cam.frames[0];
        if (cam.pixelformat == V4L2_PIX_FMT_YUYV) {
            frame->length = (size_t)width * height * 2;
            frame->data = malloc(frame->length);
            rgb_to_yuyv(rgb, width, height, frame->data);
        } else {
            unsigned char *jpeg = NULL;
            unsigned long length = 0;
            tjCompress2(encoder, rgb, width, 0, height, TJPF_RGB, &jpeg, &length, TJSAMP_422, 80, 0);
            frame->data = malloc(length);
            memcpy(frame->data, jpeg, length);
            frame->length = length;
            tjFree(jpeg);
        }
        cam.frame_count = 1;
    }
    tjDestroy(encoder);
    free(copy);
    free(rgb);
}

// MARK: The device

static int offers(unsigned format) {
    for (int i = 0; i < cam.format_count; i++)
        if (cam.formats[i] == format) return 1;
    return 0;
}

static int rates_of(unsigned format, unsigned width, const unsigned **rates) {
    if (format == V4L2_PIX_FMT_YUYV && width == 1280) { *rates = rates_hd_yuyv; return 2; }
    *rates = rates_small;
    return 2;
}

static void free_buffers(void) {
    REAL(munmap);
    for (int i = 0; i < cam.buffer_count; i++) real_munmap(cam.buffers[i], cam.buffer_length);
    cam.buffer_count = 0;
}

// The frame number due now (-1 before the first).
static long due(void) {
    if (!cam.streaming || fault("stall")) return -1;
    long n = (long)((now() - cam.started) * cam.rate);
    const char *loop = setting("FAKECAM_LOOP");
    if (loop && strcmp(loop, "0") == 0 && n >= cam.frame_count) n = cam.frame_count - 1;
    return n;
}

static long unplug_after(void) {
    const char *after = setting("FAKECAM_UNPLUG_AFTER");
    if (after) return atol(after);
    return fault("unplug") ? 30 : -1;
}

static int set_format(struct v4l2_format *format) {
    if (format->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return EINVAL;
    struct v4l2_pix_format *pix = &format->fmt.pix;
    if (!offers(pix->pixelformat)) pix->pixelformat = cam.formats[0];
    // The nearest offered size, as uvcvideo picks it.
    const struct size *best = &sizes[0];
    long best_distance = -1;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        long d = labs((long)sizes[i].width * sizes[i].height - (long)pix->width * pix->height);
        if (best_distance < 0 || d < best_distance) { best = &sizes[i]; best_distance = d; }
    }
    pix->width = best->width;
    pix->height = best->height;
    pix->field = V4L2_FIELD_NONE;
    pix->bytesperline = pix->pixelformat == V4L2_PIX_FMT_YUYV ? best->width * 2 : 0;
    pix->sizeimage = pix->pixelformat == V4L2_PIX_FMT_YUYV ? best->width * best->height * 2
                                                           : best->width * best->height * 2;
    pix->colorspace = V4L2_COLORSPACE_SRGB;
    return 0;
}

static int control(unsigned long request, void *argument) {
    if (cam.unplugged) return ENODEV;
    switch (request) {
    case VIDIOC_QUERYCAP: {
        struct v4l2_capability *cap = argument;
        memset(cap, 0, sizeof *cap);
        strcpy((char *)cap->driver, "uvcvideo");
        strcpy((char *)cap->card, "Fake Webcam C270");
        strcpy((char *)cap->bus_info, "usb-0000:00:14.0-1");
        cap->version = 0x060100;
        cap->capabilities = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING |
                            V4L2_CAP_EXT_PIX_FORMAT | V4L2_CAP_DEVICE_CAPS;
        cap->device_caps = cam.meta ? V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_EXT_PIX_FORMAT
                                    : V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_EXT_PIX_FORMAT;
        return 0;
    }
    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *desc = argument;
        if (cam.meta || desc->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || desc->index >= (unsigned)cam.format_count)
            return EINVAL;
        unsigned format = cam.formats[desc->index];
        memset(desc->description, 0, sizeof desc->description);
        strcpy((char *)desc->description, format == V4L2_PIX_FMT_MJPEG  ? "Motion-JPEG"
                                          : format == V4L2_PIX_FMT_YUYV ? "YUYV 4:2:2"
                                                                        : "H.264");
        desc->pixelformat = format;
        desc->flags = format == V4L2_PIX_FMT_YUYV ? 0 : V4L2_FMT_FLAG_COMPRESSED;
        return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES: {
        struct v4l2_frmsizeenum *size = argument;
        if (cam.meta || !offers(size->pixel_format) || size->index >= sizeof sizes / sizeof *sizes) return EINVAL;
        size->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        size->discrete.width = sizes[size->index].width;
        size->discrete.height = sizes[size->index].height;
        return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS: {
        struct v4l2_frmivalenum *interval = argument;
        const unsigned *rates;
        int count = rates_of(interval->pixel_format, interval->width, &rates);
        if (cam.meta || !offers(interval->pixel_format) || interval->index >= (unsigned)count) return EINVAL;
        interval->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        interval->discrete.numerator = 1;
        interval->discrete.denominator = rates[interval->index];
        return 0;
    }
    case VIDIOC_G_FMT: case VIDIOC_TRY_FMT: case VIDIOC_S_FMT: {
        struct v4l2_format *format = argument;
        if (cam.meta) return EINVAL;
        if (request == VIDIOC_S_FMT && (fault("busy") || cam.buffer_count > 0)) return EBUSY;
        if (request == VIDIOC_G_FMT) {
            format->fmt.pix.pixelformat = cam.pixelformat;
            format->fmt.pix.width = cam.width;
            format->fmt.pix.height = cam.height;
        }
        int error = set_format(format);
        if (error == 0 && request == VIDIOC_S_FMT) {
            cam.pixelformat = format->fmt.pix.pixelformat;
            cam.width = format->fmt.pix.width;
            cam.height = format->fmt.pix.height;
        }
        return error;
    }
    case VIDIOC_S_PARM: case VIDIOC_G_PARM: {
        struct v4l2_streamparm *parm = argument;
        if (cam.meta || parm->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return EINVAL;
        const unsigned *rates;
        int count = rates_of(cam.pixelformat, cam.width, &rates);
        if (request == VIDIOC_S_PARM && parm->parm.capture.timeperframe.numerator > 0) {
            double wanted = (double)parm->parm.capture.timeperframe.denominator /
                            parm->parm.capture.timeperframe.numerator;
            unsigned best = rates[0];  // the nearest offered, as uvcvideo picks it
            for (int i = 0; i < count; i++) {
                double d = rates[i] > wanted ? rates[i] - wanted : wanted - rates[i];
                double b = best > wanted ? best - wanted : wanted - best;
                if (d < b) best = rates[i];
            }
            cam.rate = best;
        }
        memset(&parm->parm, 0, sizeof parm->parm);
        parm->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        parm->parm.capture.timeperframe.numerator = 1;
        parm->parm.capture.timeperframe.denominator = cam.rate;
        parm->parm.capture.readbuffers = 0;
        return 0;
    }
    case VIDIOC_REQBUFS: {
        struct v4l2_requestbuffers *request_buffers = argument;
        if (cam.meta || request_buffers->memory != V4L2_MEMORY_MMAP) return EINVAL;
        if (fault("busy")) return EBUSY;
        if (cam.streaming) return EBUSY;
        free_buffers();
        unsigned count = request_buffers->count > MAX_BUFFERS ? MAX_BUFFERS : request_buffers->count;
        cam.buffer_length = ((size_t)cam.width * cam.height * 2 + 4095) & ~(size_t)4095;
        REAL(mmap);
        for (unsigned i = 0; i < count; i++) {
            cam.buffers[i] = real_mmap(NULL, cam.buffer_length, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            cam.queued[i] = 0;
        }
        cam.buffer_count = count;
        request_buffers->count = count;
        request_buffers->capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP;
        return 0;
    }
    case VIDIOC_QUERYBUF: case VIDIOC_QBUF: {
        struct v4l2_buffer *buffer = argument;
        if (buffer->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || buffer->index >= (unsigned)cam.buffer_count) return EINVAL;
        if (request == VIDIOC_QBUF) {
            if (cam.queued[buffer->index]) return EINVAL;
            cam.queued[buffer->index] = 1;
            return 0;
        }
        buffer->length = (unsigned)cam.buffer_length;
        buffer->m.offset = buffer->index * 0x1000000u;
        buffer->flags = cam.queued[buffer->index] ? V4L2_BUF_FLAG_QUEUED : 0;
        return 0;
    }
    case VIDIOC_DQBUF: {
        struct v4l2_buffer *buffer = argument;
        if (!cam.streaming) return EINVAL;
        long n = due();
        int index = -1;
        for (int i = 0; i < cam.buffer_count; i++)
            if (cam.queued[i]) { index = i; break; }
        if (n <= cam.delivered || index < 0) return EAGAIN;
        long after = unplug_after();
        if (after >= 0 && cam.given >= after) {
            cam.unplugged = 1;
            return ENODEV;
        }
        const struct frame *frame = &cam.frames[n % cam.frame_count];
        size_t length = frame->length < cam.buffer_length ? frame->length : cam.buffer_length;
        memcpy(cam.buffers[index], frame->data, length);
        cam.queued[index] = 0;
        cam.delivered = n;
        cam.given++;
        memset(buffer, 0, sizeof *buffer);
        buffer->index = index;
        buffer->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        buffer->memory = V4L2_MEMORY_MMAP;
        buffer->bytesused = (unsigned)length;
        buffer->sequence = (unsigned)n;
        buffer->field = V4L2_FIELD_NONE;
        buffer->flags = V4L2_BUF_FLAG_MAPPED | V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
        double t = cam.started + (double)n / cam.rate;
        buffer->timestamp.tv_sec = (long)t;
        buffer->timestamp.tv_usec = (long)((t - (long)t) * 1e6);
        buffer->length = (unsigned)cam.buffer_length;
        return 0;
    }
    case VIDIOC_STREAMON:
        if (cam.buffer_count == 0) return EINVAL;
        if (!cam.streaming) {
            make_frames();
            cam.streaming = 1;
            cam.started = now();
            cam.delivered = -1;
        }
        return 0;
    case VIDIOC_STREAMOFF:
        cam.streaming = 0;
        for (int i = 0; i < cam.buffer_count; i++) cam.queued[i] = 0;
        return 0;
    default:
        return ENOTTY;
    }
}

// MARK: The calls answered

static int open_node(const char *path) {
    if (strcmp(path, NODE_VIDEO) == 0 && fault("busy-open")) { errno = EBUSY; return -1; }
    pthread_mutex_lock(&lock);
    if (cam.fd >= 0) {  // one open at a time, as a test needs
        pthread_mutex_unlock(&lock);
        errno = EBUSY;
        return -1;
    }
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    memset(&cam, 0, sizeof cam);
    cam.fd = fd;
    cam.meta = strcmp(path, NODE_META) == 0;
    read_formats();
    cam.pixelformat = cam.formats[0];
    cam.width = 640;
    cam.height = 480;
    cam.rate = 30;
    cam.delivered = -1;
    pthread_mutex_unlock(&lock);
    return fd;
}

int open(const char *path, int flags, ...) {
    if (is_node(path)) return open_node(path);
    va_list args;
    va_start(args, flags);
    mode_t mode = va_arg(args, mode_t);
    va_end(args);
    REAL(open);
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    if (is_node(path)) return open_node(path);
    va_list args;
    va_start(args, flags);
    mode_t mode = va_arg(args, mode_t);
    va_end(args);
    REAL(open64);
    return real_open64(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...) {
    if (is_node(path)) return open_node(path);
    va_list args;
    va_start(args, flags);
    mode_t mode = va_arg(args, mode_t);
    va_end(args);
    REAL(openat);
    return real_openat(dir, path, flags, mode);
}

int stat(const char *path, struct stat *info) {
    if (is_node(path)) { fill_stat(info, path); return 0; }
    REAL(stat);
    return real_stat(path, info);
}

int stat64(const char *path, struct stat64 *info) {
    if (is_node(path)) { fill_stat((struct stat *)info, path); return 0; }
    REAL(stat64);
    return real_stat64(path, info);
}

int fstat(int fd, struct stat *info) {
    if (fd >= 0 && fd == cam.fd) { fill_stat(info, cam.meta ? NODE_META : NODE_VIDEO); return 0; }
    REAL(fstat);
    return real_fstat(fd, info);
}

int ioctl(int fd, unsigned long request, ...) {
    va_list args;
    va_start(args, request);
    void *argument = va_arg(args, void *);
    va_end(args);
    if (fd >= 0 && fd == cam.fd) {
        pthread_mutex_lock(&lock);
        int error = control(request, argument);
        pthread_mutex_unlock(&lock);
        if (error) { errno = error; return -1; }
        return 0;
    }
    REAL(ioctl);
    return real_ioctl(fd, request, argument);
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    if (fd >= 0 && fd == cam.fd) {
        pthread_mutex_lock(&lock);
        unsigned index = (unsigned)(offset / 0x1000000);
        void *result = MAP_FAILED;
        if (cam.unplugged) errno = ENODEV;
        else if (index < (unsigned)cam.buffer_count && length <= cam.buffer_length) result = cam.buffers[index];
        else errno = EINVAL;
        pthread_mutex_unlock(&lock);
        return result;
    }
    REAL(mmap);
    return real_mmap(address, length, protection, flags, fd, offset);
}

int munmap(void *address, size_t length) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < cam.buffer_count; i++) {
        if (cam.buffers[i] == address) { pthread_mutex_unlock(&lock); return 0; }  // freed at REQBUFS 0 or close
    }
    pthread_mutex_unlock(&lock);
    REAL(munmap);
    return real_munmap(address, length);
}

int poll(struct pollfd *fds, nfds_t count, int timeout) {
    int ours = -1;
    for (nfds_t i = 0; i < count; i++)
        if (fds[i].fd >= 0 && fds[i].fd == cam.fd) ours = (int)i;
    REAL(poll);
    if (ours < 0) return real_poll(fds, count, timeout);
    double deadline = timeout < 0 ? 1e300 : now() + timeout / 1000.0;
    for (;;) {
        pthread_mutex_lock(&lock);
        short events = 0;
        if (cam.unplugged) events = POLLERR | POLLHUP;
        else if (cam.streaming && due() > cam.delivered) events = POLLIN | POLLRDNORM;
        double next = cam.streaming && cam.rate ? cam.started + (double)(cam.delivered + 1) / cam.rate : 1e300;
        pthread_mutex_unlock(&lock);
        for (nfds_t i = 0; i < count; i++) fds[i].revents = 0;
        fds[ours].revents = events;
        // The other descriptors, without waiting.
        int others = 0;
        for (nfds_t i = 0; i < count; i++) {
            if ((int)i == ours) continue;
            struct pollfd one = fds[i];
            if (real_poll(&one, 1, 0) > 0) { fds[i].revents = one.revents; others++; }
        }
        if (events || others) return (events ? 1 : 0) + others;
        double left = deadline - now();
        if (left <= 0) return 0;
        double wait = next - now();
        if (wait > left) wait = left;
        if (wait > 0.01 || wait <= 0) wait = 0.01;
        struct timespec pause = {0, (long)(wait * 1e9)};
        nanosleep(&pause, NULL);
    }
}

int close(int fd) {
    if (fd >= 0 && fd == cam.fd) {
        pthread_mutex_lock(&lock);
        free_buffers();
        free_frames();
        cam.fd = -1;
        cam.streaming = 0;
        pthread_mutex_unlock(&lock);
    }
    REAL(close);
    return real_close(fd);
}
