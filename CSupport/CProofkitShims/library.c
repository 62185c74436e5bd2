// Loads a C library on first use: dlopen by soname, dlsym of every function into a typed table
// (see proofkit_library in CProofkitShims.h).
#include "CProofkitShims.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The failure of this thread's last load that returned NULL.
static _Thread_local char proofkit_library_last_failure[sizeof ((proofkit_library *)0)->failure];

// Serialises first loads (of any library): dlopen runs constructors, and a loser of the race
// must see the winner's whole table, not a half-filled one.
static pthread_mutex_t proofkit_library_lock = PTHREAD_MUTEX_INITIALIZER;

// Writes the one line that a missing or unusable library becomes.
static void proofkit_library_describe(char *out, size_t capacity, const proofkit_library *library,
                                      const char *soname, const char *reason) {
    snprintf(out, capacity, "%s cannot be loaded: %s. To fix it, install the Debian package %s (apt install %s)",
             soname, reason != NULL && reason[0] != '\0' ? reason : "no reason given",
             library->package, library->package);
    for (char *c = out; *c != '\0'; c++) {
        if (*c == '\n' || *c == '\r') *c = ' ';
    }
}

// dlopen `soname` and fill `table` with every function; on failure, write why to `failure`.
static int proofkit_library_open(const proofkit_library *library, const char *soname, void *table,
                                 char *failure, size_t capacity) {
    dlerror();  // clear any stale message
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        proofkit_library_describe(failure, capacity, library, soname, dlerror());
        return 0;
    }
    for (size_t i = 0; i < library->count; i++) {
        void *symbol = dlsym(handle, library->names[i]);
        if (symbol == NULL) {
            char reason[256];
            const char *error = dlerror();
            snprintf(reason, sizeof reason, "it has no %s: %s", library->names[i],
                     error != NULL ? error : "not found");
            proofkit_library_describe(failure, capacity, library, soname, reason);
            dlclose(handle);
            return 0;
        }
        // The table is a struct of `count` function pointers (static-asserted where it is
        // defined); memcpy writes each slot without aliasing a function pointer as a void *.
        memcpy((char *)table + i * sizeof(void (*)(void)), &symbol, sizeof symbol);
    }
    return 1;  // never dlclosed: the table points into it for the life of the process
}

const void *proofkit_library_load(proofkit_library *library, const char *soname) {
    if (soname != NULL) {
        void *table = calloc(library->count, sizeof(void (*)(void)));
        if (table == NULL) abort();
        if (proofkit_library_open(library, soname, table, proofkit_library_last_failure,
                                  sizeof proofkit_library_last_failure)) {
            return table;
        }
        free(table);
        return NULL;
    }
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&proofkit_library_lock);
        state = __atomic_load_n(&library->state, __ATOMIC_RELAXED);
        if (state == 0) {
            state = proofkit_library_open(library, library->soname, library->table, library->failure,
                                          sizeof library->failure) ? 1 : -1;
            if (state == 1 && library->loaded != NULL) library->loaded(library->table);
            __atomic_store_n(&library->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&proofkit_library_lock);
    }
    if (state == 1) return library->table;
    memcpy(proofkit_library_last_failure, library->failure, sizeof proofkit_library_last_failure);
    return NULL;
}

const char *proofkit_library_failure(void) { return proofkit_library_last_failure; }
