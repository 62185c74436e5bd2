// The memory floor of the photo proof's inference: a bare C program that does what `proofkit mat`
// does with ONNX Runtime and nothing else (no Swift runtime, no image decoding), so a benchmark
// can show how much of proofkit's peak resident memory is ONNX Runtime's own.
//
//   ort_floor LIBONNXRUNTIME MODEL.ort [THREADS]
//
// Like proofkit: loads the library with dlopen, telemetry off; maps the ORT-format model and reads
// every page (proofkit hashes it); creates the session from the mapped bytes with ORT using them in
// place (session.load_model_format=ORT, use_ort_model_bytes_directly, ..._for_initializers), graph
// optimisation off (the file is already optimised), spinning off; then drops the mapping's pages
// (MADV_DONTNEED, as InferenceSession does) and runs one 1x3x224x224 image. Prints the phases'
// resident memory (anonymous and file-backed, from /proc/self/status) on stderr and
// {"peak_rss_kib": N} on stdout. Exit 1 with ORT's message on any failure.
//
// Built by Benchmarks/mat_vs_python.py with the system C compiler; uses proofkit's own
// declaration of the C API (CSupport/COnnxRuntime/include).
#define _GNU_SOURCE
#include "COnnxRuntime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const PKOrtApi *ort;

static void fail_on(PKOrtStatus *status, const char *what) {
    if (status == NULL) return;
    fprintf(stderr, "ort_floor: %s: %s\n", what, ort->status_message(status));
    exit(1);
}

static long status_kib(const char *field) {
    FILE *file = fopen("/proc/self/status", "r");
    if (file == NULL) return -1;
    char line[256];
    long value = -1;
    size_t length = strlen(field);
    while (fgets(line, sizeof line, file) != NULL) {
        if (strncmp(line, field, length) == 0 && line[length] == ':') {
            value = atol(line + length + 1);
            break;
        }
    }
    fclose(file);
    return value;
}

static void phase(const char *name) {
    fprintf(stderr, "%-16s anon %7.1f MiB  file %7.1f MiB  peak %7.1f MiB\n", name,
            status_kib("RssAnon") / 1024.0, status_kib("RssFile") / 1024.0, status_kib("VmHWM") / 1024.0);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ort_floor LIBONNXRUNTIME MODEL.ort [THREADS]\n");
        return 64;
    }
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    setenv("ORT_DISABLE_TELEMETRY", "1", 1);
    phase("start");

    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "ort_floor: %s\n", dlerror());
        return 1;
    }
    PKOrtGetApiBaseFunction entry = (PKOrtGetApiBaseFunction)dlsym(library, "OrtGetApiBase");
    if (entry == NULL || (ort = entry()->get_api(PROOFKIT_ORT_API_VERSION)) == NULL) {
        fprintf(stderr, "ort_floor: %s has no usable OrtGetApiBase\n", argv[1]);
        return 1;
    }
    phase("library loaded");

    PKOrtEnv *environment = NULL;
    fail_on(ort->create_env(PKOrtLogWarning, "ort_floor", &environment), "CreateEnv");
    phase("environment");

    int descriptor = open(argv[2], O_RDONLY | O_CLOEXEC);
    struct stat info;
    if (descriptor < 0 || fstat(descriptor, &info) != 0) {
        perror(argv[2]);
        return 1;
    }
    size_t size = (size_t)info.st_size;
    unsigned char *model = mmap(NULL, size, PROT_READ, MAP_PRIVATE, descriptor, 0);
    close(descriptor);
    if (model == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    volatile unsigned char sum = 0;  // every page read once, as hashing does
    for (size_t offset = 0; offset < size; offset += 4096) sum += model[offset];
    phase("model mapped");

    PKOrtSessionOptions *options = NULL;
    fail_on(ort->create_session_options(&options), "CreateSessionOptions");
    fail_on(ort->set_intra_op_threads(options, threads), "SetIntraOpNumThreads");
    fail_on(ort->set_optimization_level(options, PKOrtOptimizationDisabled), "SetSessionGraphOptimizationLevel");
    const char *entries[][2] = {
        {"session.intra_op.allow_spinning", "0"},
        {"session.load_model_format", "ORT"},
        {"session.use_ort_model_bytes_directly", "1"},
        {"session.use_ort_model_bytes_for_initializers", "1"},
    };
    for (size_t index = 0; index < sizeof entries / sizeof entries[0]; index++) {
        fail_on(ort->add_session_config_entry(options, entries[index][0], entries[index][1]), "AddSessionConfigEntry");
    }
    PKOrtSession *session = NULL;
    fail_on(ort->create_session_from_bytes(environment, model, size, options, &session), "CreateSessionFromArray");
    ort->release_session_options(options);
    phase("session");
    madvise(model, size, MADV_DONTNEED);
    phase("pages dropped");

    PKOrtAllocator *allocator = NULL;
    fail_on(ort->default_allocator(&allocator), "GetAllocatorWithDefaultOptions");
    char *input_name = NULL, *output_name = NULL;
    fail_on(ort->session_input_name(session, 0, allocator, &input_name), "SessionGetInputName");
    fail_on(ort->session_output_name(session, 0, allocator, &output_name), "SessionGetOutputName");
    PKOrtMemoryInfo *memory = NULL;
    fail_on(ort->create_cpu_memory_info(PKOrtAllocatorArena, PKOrtMemoryDefault, &memory), "CreateCpuMemoryInfo");
    enum { count = 3 * 224 * 224 };
    static float pixels[count];
    for (int index = 0; index < count; index++) pixels[index] = (float)(index % 255) / 128.0f - 1.0f;
    int64_t shape[4] = {1, 3, 224, 224};
    PKOrtValue *input = NULL, *output = NULL;
    fail_on(ort->create_tensor_over_buffer(memory, pixels, sizeof pixels, shape, 4, PKOrtElementFloat32, &input),
            "CreateTensorWithDataAsOrtValue");
    const char *input_names[1] = {input_name};
    const char *output_names[1] = {output_name};
    fail_on(ort->run(session, NULL, input_names, (const PKOrtValue *const *)&input, 1, output_names, 1, &output), "Run");
    phase("one run");

    printf("{\"peak_rss_kib\": %ld}\n", status_kib("VmHWM"));
    return 0;
}
