/* Write an n x n dense matrix as Matrix Market, fast, for the > 2^31 non-zero load test
 * (scripts/device_big_load.sh). Not part of the build.
 *
 *   gen_dense sym N   > f.mtx   # coordinate pattern symmetric: the lower triangle, column by
 *                               # column (as SuiteSparse orders files); N*(N+1)/2 lines, N*N
 *                               # non-zeros once expanded
 *   gen_dense array N > f.mtx   # array real general: N*N values, all 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char buf[1 << 22];
static size_t used;

static void flush(void) {
    if (fwrite(buf, 1, used, stdout) != used) { perror("write"); exit(1); }
    used = 0;
}

static void put_uint(unsigned long v) {
    char t[24];
    int k = 0;
    do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (k) buf[used++] = t[--k];
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: gen_dense sym|array N\n"); return 2; }
    unsigned long n = strtoul(argv[2], 0, 10);
    if (!strcmp(argv[1], "sym")) {
        printf("%%%%MatrixMarket matrix coordinate pattern symmetric\n%lu %lu %lu\n", n, n, n * (n + 1) / 2);
        fflush(stdout);
        for (unsigned long j = 1; j <= n; j++)
            for (unsigned long i = j; i <= n; i++) {
                if (used > sizeof buf - 64) flush();
                put_uint(i); buf[used++] = ' '; put_uint(j); buf[used++] = '\n';
            }
    } else if (!strcmp(argv[1], "array")) {
        printf("%%%%MatrixMarket matrix array real general\n%lu %lu\n", n, n);
        fflush(stdout);
        for (unsigned long k = 0; k < n * n; k++) {
            if (used > sizeof buf - 64) flush();
            buf[used++] = '1'; buf[used++] = '\n';
        }
    } else { fprintf(stderr, "unknown kind %s\n", argv[1]); return 2; }
    flush();
    return 0;
}
