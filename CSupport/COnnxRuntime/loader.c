// Loads ONNX Runtime at run time: dlopen, the `OrtGetApiBase` entry point, the pinned table.
//
// Why C: dlopen/dlsym and calling through the returned function pointers before any table exists
// is simplest here, and it lets us static-assert our table layout against the C API's slot
// indices (the table is append-only, so an index never changes).
#include "COnnxRuntime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every typed slot sits at its documented index (pointer-sized slots, no padding).
#define PK_SLOT(field, index) \
    _Static_assert(offsetof(PKOrtApi, field) == (index) * sizeof(void *), #field " is slot " #index)
PK_SLOT(status_code, 1);
PK_SLOT(status_message, 2);
PK_SLOT(create_env, 3);
PK_SLOT(create_session_from_file, 7);
PK_SLOT(create_session_from_bytes, 8);
PK_SLOT(run, 9);
PK_SLOT(create_session_options, 10);
PK_SLOT(set_optimized_model_path, 11);
PK_SLOT(disable_mem_pattern, 17);
PK_SLOT(disable_cpu_mem_arena, 19);
PK_SLOT(set_optimization_level, 23);
PK_SLOT(set_intra_op_threads, 24);
PK_SLOT(session_input_count, 30);
PK_SLOT(session_output_count, 31);
PK_SLOT(session_input_type, 33);
PK_SLOT(session_output_type, 34);
PK_SLOT(session_input_name, 36);
PK_SLOT(session_output_name, 37);
PK_SLOT(create_tensor_over_buffer, 49);
PK_SLOT(value_is_tensor, 50);
PK_SLOT(tensor_data, 51);
PK_SLOT(type_info_as_tensor_info, 55);
PK_SLOT(tensor_element_type, 60);
PK_SLOT(tensor_rank, 61);
PK_SLOT(tensor_dimensions, 62);
PK_SLOT(tensor_dimension_names, 63);
PK_SLOT(tensor_element_count, 64);
PK_SLOT(value_tensor_info, 65);
PK_SLOT(create_cpu_memory_info, 69);
PK_SLOT(allocator_free, 76);
PK_SLOT(default_allocator, 78);
PK_SLOT(release_status, 93);
PK_SLOT(release_memory_info, 94);
PK_SLOT(release_session, 95);
PK_SLOT(release_value, 96);
PK_SLOT(release_type_info, 98);
PK_SLOT(release_tensor_info, 99);
PK_SLOT(release_session_options, 100);
PK_SLOT(add_session_config_entry, 130);
// Nothing is declared past the last slot we call (a version-5 table already has slot 130).
_Static_assert(sizeof(PKOrtApi) == 131 * sizeof(void *), "PKOrtApi ends after slot 130");
// The base structure never changes across versions: two pointers.
_Static_assert(sizeof(PKOrtApiBase) == 2 * sizeof(void *), "PKOrtApiBase has two slots");

static void pk_copy(char *destination, size_t capacity, const char *source) {
    if (source == NULL) source = "";
    snprintf(destination, capacity, "%s", source);
}

PKOrtLoadResult proofkit_ort_load(const char *path, PKOrtLibrary *out) {
    memset(out, 0, sizeof *out);
    // ONNX Runtime's official Linux builds (1.2x and later, including the pinned 1.32.0 wheel)
    // carry Microsoft's 1DS telemetry: at start-up they create ~/.cache/Microsoft/DeveloperTools/
    // .onnxruntime/ with a persistent device id and an SQLite queue of events, and upload them to
    // mobile.events.data.microsoft.com. proofkit promises that nothing leaves the device, so it
    // sets ORT's documented full opt-out before the library can read it: with
    // ORT_DISABLE_TELEMETRY=1 no uploader, event, device id or offline cache is created. It is
    // set even when the user set it otherwise, and before dlopen, in case the library reads it
    // while loading. Only written when it is not "1" already: `proofkit` sets it at start-up,
    // while it has one thread, because this runs on a worker thread while others may call
    // getenv (libjpeg-turbo does), and glibc's setenv is not safe against a concurrent getenv.
    const char *telemetry = getenv("ORT_DISABLE_TELEMETRY");
    if (telemetry == NULL || strcmp(telemetry, "1") != 0) setenv("ORT_DISABLE_TELEMETRY", "1", 1);
    dlerror();  // clear any stale message
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        pk_copy(out->detail, sizeof out->detail, dlerror());
        return PKOrtLoadNotLoadable;
    }
    PKOrtGetApiBaseFunction entry = (PKOrtGetApiBaseFunction)dlsym(handle, "OrtGetApiBase");
    const PKOrtApiBase *base = entry != NULL ? entry() : NULL;
    if (base == NULL || base->get_api == NULL || base->version_string == NULL) {
        pk_copy(out->detail, sizeof out->detail, entry == NULL ? dlerror() : "OrtGetApiBase returned NULL");
        dlclose(handle);
        return PKOrtLoadNoEntryPoint;
    }
    pk_copy(out->version, sizeof out->version, base->version_string());
    const PKOrtApi *api = base->get_api(PROOFKIT_ORT_API_VERSION);
    if (api == NULL) return PKOrtLoadTooOld;  // stays mapped: see the header
    out->handle = handle;
    out->api = api;
    return PKOrtLoadOK;
}
