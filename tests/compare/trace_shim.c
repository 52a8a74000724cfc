/* LD_PRELOAD shim for tests/compare/run.sh: records every write and flush the streamfat CLI
 * makes to one image file, and makes the CLI's run deterministic, without any hook in the
 * CLI itself (so it works on any commit).
 *
 * Environment:
 *   COMPARE_IMAGE  absolute path of the image; writes to other files pass through untraced
 *   COMPARE_TRACE  the trace file, appended to (O_APPEND): one record per call, in the
 *                  order the calls entered (one lock):
 *                    "W <offset> <length>\n" then the <length> bytes written
 *                    "F fsync\n", "F fdatasync\n", "F sync_file_range\n", "F syncfs\n"
 *                    "T <length>\n" (ftruncate), "A <mode> <offset> <length>\n" (fallocate)
 *   COMPARE_EPOCH  CLOCK_REALTIME, time() and gettimeofday() return this many seconds since
 *                  1970 (default 1767225600, 2026-01-01 UTC), frozen: file times, log
 *                  timestamps, MF4 headers and the logger's time-based checkpoints then do
 *                  not depend on when the run happens. CLOCK_MONOTONIC is untouched.
 *   COMPARE_SEED   getrandom() returns a splitmix64 sequence from this seed (default 1):
 *                  volume serial numbers, GUIDs and log session ids repeat.
 * And io_uring_setup is refused (ENOSYS) by a seccomp filter installed at load time:
 * liburing makes its system calls itself, so io_uring writes would bypass this shim; the
 * asynchronous device then falls back to its pread/pwrite thread pool, as it does where a
 * kernel or sandbox refuses io_uring.
 *
 * Writes are seen at the C library's pwrite/pwrite64/pwritev/pwritev2/write/writev entry
 * points; an fd is the image when /proc/self/fd/N names COMPARE_IMAGE (checked on every
 * call: descriptors closed inside the C library are reused without passing through here). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static char image[4096];
static time_t epoch = 1767225600;
static uint64_t rng_state = 1;

static ssize_t raw_write(int fd, const void *p, size_t n)
{
    const char *c = p;
    size_t done = 0;
    while (done < n) {
        ssize_t w = syscall(SYS_write, fd, c + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static void refuse_io_uring(void)
{
#ifdef SYS_io_uring_setup
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        static const char msg[] = "trace_shim: cannot refuse io_uring (seccomp)\n";
        raw_write(2, msg, sizeof msg - 1);
        _exit(125);
    }
#endif
}

__attribute__((constructor)) static void shim_init(void)
{
    const char *s;
    if ((s = getenv("COMPARE_IMAGE")) && *s)
        snprintf(image, sizeof image, "%s", s);
    if ((s = getenv("COMPARE_TRACE")) && *s)
        trace_fd = (int)syscall(SYS_openat, AT_FDCWD, s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                                0644);
    if ((s = getenv("COMPARE_EPOCH")) && *s)
        epoch = (time_t)strtoll(s, NULL, 10);
    if ((s = getenv("COMPARE_SEED")) && *s)
        rng_state = strtoull(s, NULL, 10);
    refuse_io_uring();
}

static int is_image(int fd)
{
    char link[64], target[4096];
    ssize_t n;
    if (trace_fd < 0 || !image[0] || fd < 0 || fd == trace_fd)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = 0;
    return strcmp(target, image) == 0;
}

/* Under mu. */
static void rec_line(const char *fmt, long long a, long long b, long long c)
{
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, b, c);
    raw_write(trace_fd, line, (size_t)n);
}

static void rec_write(int fd, long long off, const struct iovec *iov, int cnt)
{
    long long len = 0;
    if (!is_image(fd))
        return;
    for (int i = 0; i < cnt; i++)
        len += (long long)iov[i].iov_len;
    pthread_mutex_lock(&mu);
    rec_line("W %lld %lld\n", off, len, 0);
    for (int i = 0; i < cnt; i++)
        raw_write(trace_fd, iov[i].iov_base, iov[i].iov_len);
    pthread_mutex_unlock(&mu);
}

static void rec_simple(int fd, const char *fmt, long long a, long long b, long long c)
{
    if (!is_image(fd))
        return;
    pthread_mutex_lock(&mu);
    rec_line(fmt, a, b, c);
    pthread_mutex_unlock(&mu);
}

#define REAL(name, ret, ...) \
    static ret (*real)(__VA_ARGS__); \
    if (!real) \
        *(void **)&real = dlsym(RTLD_NEXT, name)

/* The record is made before the call: the order of entry is the order the CLI issued them.
 * A failed call is recorded too (the CLI's retries then show). */
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    REAL("pwrite64", ssize_t, int, const void *, size_t, off_t);
    struct iovec v = { (void *)buf, n };
    rec_write(fd, (long long)off, &v, 1);
    return real(fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    REAL("pwrite", ssize_t, int, const void *, size_t, off_t);
    struct iovec v = { (void *)buf, n };
    rec_write(fd, (long long)off, &v, 1);
    return real(fd, buf, n, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    REAL("pwritev", ssize_t, int, const struct iovec *, int, off_t);
    rec_write(fd, (long long)off, iov, cnt);
    return real(fd, iov, cnt, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    REAL("pwritev64", ssize_t, int, const struct iovec *, int, off_t);
    rec_write(fd, (long long)off, iov, cnt);
    return real(fd, iov, cnt, off);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    REAL("pwritev2", ssize_t, int, const struct iovec *, int, off_t, int);
    rec_write(fd, (long long)(off == -1 && is_image(fd) ? lseek(fd, 0, SEEK_CUR) : off), iov,
              cnt);
    return real(fd, iov, cnt, off, flags);
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    REAL("pwritev64v2", ssize_t, int, const struct iovec *, int, off_t, int);
    rec_write(fd, (long long)(off == -1 && is_image(fd) ? lseek(fd, 0, SEEK_CUR) : off), iov,
              cnt);
    return real(fd, iov, cnt, off, flags);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    REAL("write", ssize_t, int, const void *, size_t);
    if (is_image(fd)) {
        struct iovec v = { (void *)buf, n };
        rec_write(fd, (long long)lseek(fd, 0, SEEK_CUR), &v, 1);
    }
    return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    REAL("writev", ssize_t, int, const struct iovec *, int);
    if (is_image(fd))
        rec_write(fd, (long long)lseek(fd, 0, SEEK_CUR), iov, cnt);
    return real(fd, iov, cnt);
}

int fsync(int fd)
{
    REAL("fsync", int, int);
    rec_simple(fd, "F fsync\n", 0, 0, 0);
    return real(fd);
}

int fdatasync(int fd)
{
    REAL("fdatasync", int, int);
    rec_simple(fd, "F fdatasync\n", 0, 0, 0);
    return real(fd);
}

int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
    REAL("sync_file_range", int, int, off_t, off_t, unsigned int);
    rec_simple(fd, "F sync_file_range\n", 0, 0, 0);
    return real(fd, off, n, flags);
}

int syncfs(int fd)
{
    REAL("syncfs", int, int);
    rec_simple(fd, "F syncfs\n", 0, 0, 0);
    return real(fd);
}

int ftruncate(int fd, off_t n)
{
    REAL("ftruncate", int, int, off_t);
    rec_simple(fd, "T %lld\n", (long long)n, 0, 0);
    return real(fd, n);
}

int ftruncate64(int fd, off_t n)
{
    REAL("ftruncate64", int, int, off_t);
    rec_simple(fd, "T %lld\n", (long long)n, 0, 0);
    return real(fd, n);
}

int fallocate(int fd, int mode, off_t off, off_t n)
{
    REAL("fallocate", int, int, int, off_t, off_t);
    rec_simple(fd, "A %lld %lld %lld\n", mode, (long long)off, (long long)n);
    return real(fd, mode, off, n);
}

int fallocate64(int fd, int mode, off_t off, off_t n)
{
    REAL("fallocate64", int, int, int, off_t, off_t);
    rec_simple(fd, "A %lld %lld %lld\n", mode, (long long)off, (long long)n);
    return real(fd, mode, off, n);
}

/* ---- a frozen wall clock ---- */

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    REAL("clock_gettime", int, clockid_t, struct timespec *);
    if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE) {
        ts->tv_sec = epoch;
        ts->tv_nsec = 0;
        return 0;
    }
    return real(clk, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    tv->tv_sec = epoch;
    tv->tv_usec = 0;
    return 0;
}

time_t time(time_t *t)
{
    if (t)
        *t = epoch;
    return epoch;
}

/* ---- seeded randomness ---- */

ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    unsigned char *p = buf;
    (void)flags;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (size_t k = 0; k < 8 && i + k < n; k++)
            p[i + k] = (unsigned char)(z >> (8 * k));
    }
    pthread_mutex_unlock(&mu);
    return (ssize_t)n;
}
