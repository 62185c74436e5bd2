// proofkit's own declarations of the part of the ONNX Runtime C API it calls.
//
// Why our own: the PyPI wheel that set-up installs ships only the shared library (no headers),
// Debian 12 has no onnxruntime package, and nothing may be fetched at build time. The library is
// loaded at run time with dlopen (see loader.c), so only these declarations are compiled in.
//
// Written from the public C API reference (the `OrtApi` function table). That table is
// append-only: a function keeps its slot index forever, and a runtime that supports API version
// N returns a table holding every slot of versions 1...N. So we declare:
//   - the slots proofkit calls, fully typed, under our own names;
//   - every slot before and between them as an untyped `void *` placeholder;
//   - and nothing after the last slot we call (the real table is longer; we never index past it).
// loader.c static-asserts the index of every typed slot.
//
// Pinned API version: PROOFKIT_ORT_API_VERSION (15). Every slot declared here exists since API 5;
// we pin 15 because ONNX Runtime 1.15.0 is the oldest release with a Python 3.11 wheel for
// aarch64 (the interpreter of Raspberry Pi OS Bookworm / Debian 12 on a Pi 4/5), so it is the
// oldest build an ARM board is likely to have; 1.15 also runs every opset proofkit's models use
// (Silero VAD 6 is opset 16). The pinned wheel (1.32.0) accepts any version up to 32.
//
// Every function that can fail returns a status pointer: NULL means success; otherwise read its
// code and message, then release it with `release_status`.
#ifndef PROOFKIT_CONNXRUNTIME_H
#define PROOFKIT_CONNXRUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The OrtApi version proofkit asks the library for. Older libraries return no table.
#define PROOFKIT_ORT_API_VERSION 15

// MARK: Opaque runtime objects (each is owned by the library; released by its `release_*` slot).
typedef struct PKOrtStatus PKOrtStatus;
typedef struct PKOrtEnv PKOrtEnv;
typedef struct PKOrtSession PKOrtSession;
typedef struct PKOrtSessionOptions PKOrtSessionOptions;
typedef struct PKOrtRunOptions PKOrtRunOptions;
typedef struct PKOrtValue PKOrtValue;
typedef struct PKOrtTypeInfo PKOrtTypeInfo;
typedef struct PKOrtTensorInfo PKOrtTensorInfo;  // "tensor type and shape info"
typedef struct PKOrtMemoryInfo PKOrtMemoryInfo;
typedef struct PKOrtAllocator PKOrtAllocator;    // a struct of callbacks in ORT; opaque to us

// MARK: Enumerations (values fixed by the C API; passed and returned as C `int`).

/// Error codes carried by a status.
typedef enum PKOrtErrorCode {
    PKOrtErrorOK = 0,
    PKOrtErrorFail = 1,
    PKOrtErrorInvalidArgument = 2,
    PKOrtErrorNoSuchFile = 3,
    PKOrtErrorNoModel = 4,
    PKOrtErrorEngineError = 5,
    PKOrtErrorRuntimeException = 6,
    PKOrtErrorInvalidProtobuf = 7,
    PKOrtErrorModelLoaded = 8,
    PKOrtErrorNotImplemented = 9,
    PKOrtErrorInvalidGraph = 10,
    PKOrtErrorExecutionProviderFail = 11,
} PKOrtErrorCode;

/// Severity threshold of the library's own log (it writes to stderr).
typedef enum PKOrtLogLevel {
    PKOrtLogVerbose = 0,
    PKOrtLogInfo = 1,
    PKOrtLogWarning = 2,
    PKOrtLogError = 3,
    PKOrtLogFatal = 4,
} PKOrtLogLevel;

/// Graph optimisation levels.
typedef enum PKOrtOptimizationLevel {
    PKOrtOptimizationDisabled = 0,
    PKOrtOptimizationBasic = 1,
    PKOrtOptimizationExtended = 2,
    PKOrtOptimizationAll = 99,
} PKOrtOptimizationLevel;

/// Tensor element types (the ONNX TensorProto data types).
typedef enum PKOrtElementType {
    PKOrtElementUndefined = 0,
    PKOrtElementFloat32 = 1,
    PKOrtElementUInt8 = 2,
    PKOrtElementInt8 = 3,
    PKOrtElementUInt16 = 4,
    PKOrtElementInt16 = 5,
    PKOrtElementInt32 = 6,
    PKOrtElementInt64 = 7,
    PKOrtElementString = 8,
    PKOrtElementBool = 9,
    PKOrtElementFloat16 = 10,
    PKOrtElementFloat64 = 11,
    PKOrtElementUInt32 = 12,
    PKOrtElementUInt64 = 13,
} PKOrtElementType;

/// Allocator kinds for CPU memory descriptions.
typedef enum PKOrtAllocatorKind {
    PKOrtAllocatorDevice = 0,
    PKOrtAllocatorArena = 1,
} PKOrtAllocatorKind;

/// Memory kinds for CPU memory descriptions.
typedef enum PKOrtMemoryKind {
    PKOrtMemoryDefault = 0,
} PKOrtMemoryKind;

// MARK: The entry point of the library (exported symbol `OrtGetApiBase`).

/// The two-slot structure that `OrtGetApiBase()` returns. It never changes across versions.
typedef struct PKOrtApiBase {
    /// The function table for `version`, or NULL when the library is older than `version`.
    const struct PKOrtApi *(*get_api)(uint32_t version);
    /// The library's release, e.g. "1.32.0". Static storage; never freed.
    const char *(*version_string)(void);
} PKOrtApiBase;

/// Signature of the exported `OrtGetApiBase` symbol.
typedef const PKOrtApiBase *(*PKOrtGetApiBaseFunction)(void);

// MARK: The function table (API version 1 to 5 slots, up to the last one we call).
//
// Slot comments give the index. `reserved_A_B` covers slots A...B, which proofkit never calls.
typedef struct PKOrtApi {
    void *reserved_0;                                                         // 0
    PKOrtErrorCode (*status_code)(const PKOrtStatus *status);                 // 1
    const char *(*status_message)(const PKOrtStatus *status);                 // 2: owned by status

    PKOrtStatus *(*create_env)(PKOrtLogLevel level, const char *log_id, PKOrtEnv **out);  // 3
    void *reserved_4_6[3];                                                    // 4...6

    PKOrtStatus *(*create_session_from_file)(                                 // 7
        const PKOrtEnv *env, const char *model_path, const PKOrtSessionOptions *options,
        PKOrtSession **out);
    PKOrtStatus *(*create_session_from_bytes)(                                // 8: bytes copied
        const PKOrtEnv *env, const void *model_bytes, size_t byte_count,
        const PKOrtSessionOptions *options, PKOrtSession **out);
    PKOrtStatus *(*run)(                                                      // 9
        PKOrtSession *session, const PKOrtRunOptions *run_options,
        const char *const *input_names, const PKOrtValue *const *inputs, size_t input_count,
        const char *const *output_names, size_t output_count, PKOrtValue **outputs);

    PKOrtStatus *(*create_session_options)(PKOrtSessionOptions **out);        // 10
    PKOrtStatus *(*set_optimized_model_path)(                                 // 11: saved at creation
        PKOrtSessionOptions *options, const char *path);
    void *reserved_12_16[5];                                                  // 12...16
    PKOrtStatus *(*disable_mem_pattern)(PKOrtSessionOptions *options);        // 17
    void *reserved_18;                                                        // 18
    PKOrtStatus *(*disable_cpu_mem_arena)(PKOrtSessionOptions *options);      // 19
    void *reserved_20_22[3];                                                  // 20...22
    PKOrtStatus *(*set_optimization_level)(                                   // 23
        PKOrtSessionOptions *options, PKOrtOptimizationLevel level);
    PKOrtStatus *(*set_intra_op_threads)(PKOrtSessionOptions *options, int thread_count);  // 24
    void *reserved_25_29[5];                                                  // 25...29

    PKOrtStatus *(*session_input_count)(const PKOrtSession *session, size_t *out);   // 30
    PKOrtStatus *(*session_output_count)(const PKOrtSession *session, size_t *out);  // 31
    void *reserved_32;                                                        // 32
    PKOrtStatus *(*session_input_type)(                                       // 33
        const PKOrtSession *session, size_t index, PKOrtTypeInfo **out);
    PKOrtStatus *(*session_output_type)(                                      // 34
        const PKOrtSession *session, size_t index, PKOrtTypeInfo **out);
    void *reserved_35;                                                        // 35
    PKOrtStatus *(*session_input_name)(                                       // 36: free with allocator
        const PKOrtSession *session, size_t index, PKOrtAllocator *allocator, char **out);
    PKOrtStatus *(*session_output_name)(                                      // 37: free with allocator
        const PKOrtSession *session, size_t index, PKOrtAllocator *allocator, char **out);
    void *reserved_38_48[11];                                                 // 38...48

    PKOrtStatus *(*create_tensor_over_buffer)(                                // 49: borrows buffer
        const PKOrtMemoryInfo *memory, void *buffer, size_t byte_count, const int64_t *shape,
        size_t rank, PKOrtElementType element_type, PKOrtValue **out);
    PKOrtStatus *(*value_is_tensor)(const PKOrtValue *value, int *out);       // 50
    PKOrtStatus *(*tensor_data)(PKOrtValue *value, void **out);               // 51: owned by value
    void *reserved_52_54[3];                                                  // 52...54

    PKOrtStatus *(*type_info_as_tensor_info)(                                 // 55: NULL if not a tensor
        const PKOrtTypeInfo *type_info, const PKOrtTensorInfo **out);         //     owned by type_info
    void *reserved_56_59[4];                                                  // 56...59
    PKOrtStatus *(*tensor_element_type)(const PKOrtTensorInfo *info, PKOrtElementType *out);  // 60
    PKOrtStatus *(*tensor_rank)(const PKOrtTensorInfo *info, size_t *out);    // 61
    PKOrtStatus *(*tensor_dimensions)(                                        // 62: -1 = dynamic
        const PKOrtTensorInfo *info, int64_t *dims, size_t dim_count);
    PKOrtStatus *(*tensor_dimension_names)(                                   // 63: "" if unnamed
        const PKOrtTensorInfo *info, const char **names, size_t name_count);
    PKOrtStatus *(*tensor_element_count)(const PKOrtTensorInfo *info, size_t *out);  // 64
    PKOrtStatus *(*value_tensor_info)(const PKOrtValue *value, PKOrtTensorInfo **out);  // 65
    void *reserved_66_68[3];                                                  // 66...68

    PKOrtStatus *(*create_cpu_memory_info)(                                   // 69
        PKOrtAllocatorKind allocator, PKOrtMemoryKind memory, PKOrtMemoryInfo **out);
    void *reserved_70_75[6];                                                  // 70...75
    PKOrtStatus *(*allocator_free)(PKOrtAllocator *allocator, void *pointer); // 76
    void *reserved_77;                                                        // 77
    PKOrtStatus *(*default_allocator)(PKOrtAllocator **out);                  // 78: never freed
    void *reserved_79_92[14];                                                 // 79...92 (92: env release)

    void (*release_status)(PKOrtStatus *status);                              // 93
    void (*release_memory_info)(PKOrtMemoryInfo *memory);                     // 94
    void (*release_session)(PKOrtSession *session);                           // 95
    void (*release_value)(PKOrtValue *value);                                 // 96
    void *reserved_97;                                                        // 97
    void (*release_type_info)(PKOrtTypeInfo *type_info);                      // 98
    void (*release_tensor_info)(PKOrtTensorInfo *info);                       // 99
    void (*release_session_options)(PKOrtSessionOptions *options);            // 100
    void *reserved_101_129[29];                                               // 101...129

    PKOrtStatus *(*add_session_config_entry)(                                 // 130 (API 5)
        PKOrtSessionOptions *options, const char *key, const char *value);
} PKOrtApi;

// MARK: Loader (loader.c)

/// What `proofkit_ort_load` found.
typedef enum PKOrtLoadResult {
    /// The library loaded and returned the pinned table. `api` and `version` are set.
    PKOrtLoadOK = 0,
    /// dlopen failed (missing file, wrong architecture, missing dependency). See `detail`.
    PKOrtLoadNotLoadable = 1,
    /// The library has no `OrtGetApiBase` symbol: it is not ONNX Runtime.
    PKOrtLoadNoEntryPoint = 2,
    /// The library is older than PROOFKIT_ORT_API_VERSION. `version` is set.
    PKOrtLoadTooOld = 3,
} PKOrtLoadResult;

/// A loaded library. Never unloaded: the handle lives until the process ends.
typedef struct PKOrtLibrary {
    void *handle;              // from dlopen; NULL unless loaded
    const PKOrtApi *api;       // the pinned function table; NULL unless PKOrtLoadOK
    char version[64];          // e.g. "1.32.0" (copied), or "" when not known
    char detail[512];          // dlopen/dlsym message when loading failed, else ""
} PKOrtLibrary;

/// Opens `path` (a path, or a bare soname searched the usual ld.so way) with
/// `dlopen(RTLD_NOW | RTLD_LOCAL)`, looks up `OrtGetApiBase`, reads the version string and asks
/// for the PROOFKIT_ORT_API_VERSION table. A library without the entry point is closed again;
/// a too-old ONNX Runtime stays mapped (unloading a C++ runtime is not safe) but is never used.
/// Strings are copied into `out`, truncated to fit.
PKOrtLoadResult proofkit_ort_load(const char *path, PKOrtLibrary *out);

#ifdef __cplusplus
}
#endif

#endif  // PROOFKIT_CONNXRUNTIME_H
