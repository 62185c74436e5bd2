/* libsoxr (the SoX resampler library) on raw float32 mono: the peer of proofkit's resampler in
 * Benchmarks/resampler_bench.py. Reads IN (raw float32 little-endian, mono) at RATE_IN, writes OUT
 * at RATE_OUT with SOXR_HQ (the quality sox's `rate` uses by default) or SOXR_VHQ (`rate -v`),
 * and prints the CPU seconds of the conversion alone (CLOCK_PROCESS_CPUTIME_ID) on stdout.
 * Build: cc -O2 soxr_resample.c -lsoxr -o soxr_resample (libsoxr-dev).
 * Usage: soxr_resample IN OUT RATE_IN RATE_OUT [hq|vhq] */
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: soxr_resample IN OUT RATE_IN RATE_OUT [hq|vhq]\n");
        return 64;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 66; }
    fseek(in, 0, SEEK_END);
    long bytes = ftell(in);
    fseek(in, 0, SEEK_SET);
    size_t frames = (size_t)bytes / sizeof(float);
    float *input = malloc(frames * sizeof(float) + 1);
    if (fread(input, sizeof(float), frames, in) != frames) { perror("read"); return 74; }
    fclose(in);
    double rate_in = atof(argv[3]), rate_out = atof(argv[4]);
    unsigned long recipe = (argc > 5 && strcmp(argv[5], "vhq") == 0) ? SOXR_VHQ : SOXR_HQ;
    soxr_quality_spec_t quality = soxr_quality_spec(recipe, 0);
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    size_t capacity = (size_t)((double)frames * rate_out / rate_in) + 1024;
    float *output = malloc(capacity * sizeof(float));
    double start = cpu_seconds();
    soxr_error_t error;
    soxr_t soxr = soxr_create(rate_in, rate_out, 1, &error, &io, &quality, NULL);
    if (error) { fprintf(stderr, "soxr: %s\n", error); return 70; }
    /* Fed in chunks of 8192 frames, as proofkit's decoder feeds its resampler. */
    size_t done = 0, produced = 0, chunk = 8192;
    while (done < frames) {
        size_t n = frames - done < chunk ? frames - done : chunk, used = 0, made = 0;
        soxr_process(soxr, input + done, n, &used, output + produced, capacity - produced, &made);
        done += used;
        produced += made;
    }
    for (;;) { /* flush */
        size_t made = 0;
        soxr_process(soxr, NULL, 0, NULL, output + produced, capacity - produced, &made);
        if (made == 0) break;
        produced += made;
    }
    soxr_delete(soxr);
    double cpu = cpu_seconds() - start;
    FILE *out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 73; }
    fwrite(output, sizeof(float), produced, out);
    fclose(out);
    printf("%.6f\n", cpu);
    return 0;
}
