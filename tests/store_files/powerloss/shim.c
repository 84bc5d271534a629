/* An LD_PRELOAD shim for the power-loss tests (tests/store_files/powerloss.rs): it records
 * every call that changes a file or a directory entry under $CLAIMDAG_TRACE_DIR (creating
 * and truncating opens, write, pwrite, ftruncate, fallocate, rename, unlink, mkdir) and every
 * fsync and fdatasync, in the order they returned, into the file $CLAIMDAG_TRACE.
 *
 * A record is one line "OP <fields>\n", and for writes the bytes written right after it:
 *   O <path> <flags>          an open that may create (O_CREAT) or truncate (O_TRUNC)
 *   W <path> <offset> <len>   then <len> bytes: the bytes a write or pwrite put at <offset>
 *   T <path> <len>            ftruncate
 *   A <path> <offset> <len>   fallocate (mode 0: the size grows to cover the range)
 *   R <from> <to>             rename
 *   U <path>                  unlink
 *   M <path>                  mkdir
 *   S <path>                  fsync or fdatasync of a file or a directory
 * Paths are absolute (no spaces: the tests choose them). One record is one write(2) to the
 * trace, opened O_APPEND, so records of several processes interleave whole; a mutex keeps
 * the threads of one process in call order. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static char *paths[4096]; /* fd -> the traced path it was opened at, or NULL */

static const char *dir(void) { return getenv("CLAIMDAG_TRACE_DIR"); }

/* `p` made absolute (not resolved: the store's paths are plain), or NULL when it is not
 * under the traced directory. */
static char *traced(int dirfd, const char *p) {
  const char *d = dir();
  if (!d || !p) return NULL;
  char buf[PATH_MAX * 2];
  if (p[0] == '/') {
    snprintf(buf, sizeof buf, "%s", p);
  } else if (dirfd == AT_FDCWD) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return NULL;
    snprintf(buf, sizeof buf, "%s/%s", cwd, p);
  } else if (dirfd >= 0 && dirfd < 4096 && paths[dirfd]) {
    snprintf(buf, sizeof buf, "%s/%s", paths[dirfd], p);
  } else {
    return NULL;
  }
  size_t n = strlen(d);
  if (strncmp(buf, d, n) != 0 || (buf[n] != '/' && buf[n] != '\0')) return NULL;
  return strdup(buf);
}

static void emit(const char *head, const void *data, size_t len) {
  const char *t = getenv("CLAIMDAG_TRACE");
  if (!t) return;
  static int (*real_open)(const char *, int, ...);
  static ssize_t (*real_write)(int, const void *, size_t);
  if (!real_open) real_open = dlsym(RTLD_NEXT, "open");
  if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
  int fd = real_open(t, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  size_t hl = strlen(head);
  char *rec = malloc(hl + len);
  if (!rec) abort();
  memcpy(rec, head, hl);
  if (len) memcpy(rec + hl, data, len);
  if (real_write(fd, rec, hl + len) != (ssize_t)(hl + len)) abort();
  free(rec);
  close(fd);
}

static void remember(int fd, char *path) {
  if (fd < 0 || fd >= 4096) {
    free(path);
    return;
  }
  free(paths[fd]);
  paths[fd] = path;
}

#define REAL(name) \
  static __typeof__(&name) real_##name; \
  if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

static int opened(int dirfd, const char *p, int flags, int fd) {
  if (fd < 0) return fd;
  char *path = traced(dirfd, p);
  if (path && (flags & (O_CREAT | O_TRUNC))) {
    char head[PATH_MAX * 2 + 64];
    snprintf(head, sizeof head, "O %s %d\n", path, flags & (O_CREAT | O_TRUNC));
    emit(head, NULL, 0);
  }
  remember(fd, path);
  return fd;
}

#define OPEN_BODY(call) \
  mode_t mode = 0; \
  if (flags & (O_CREAT | O_TMPFILE)) { \
    va_list ap; \
    va_start(ap, flags); \
    mode = va_arg(ap, mode_t); \
    va_end(ap); \
  } \
  pthread_mutex_lock(&lock); \
  int fd = call; \
  int saved = errno; \
  opened(DIRFD, p, flags, fd); \
  pthread_mutex_unlock(&lock); \
  errno = saved; \
  return fd;

#define DIRFD AT_FDCWD
int open(const char *p, int flags, ...) {
  REAL(open);
  OPEN_BODY(real_open(p, flags, mode))
}
int open64(const char *p, int flags, ...) {
  REAL(open64);
  OPEN_BODY(real_open64(p, flags, mode))
}
#undef DIRFD
#define DIRFD dirfd
int openat(int dirfd, const char *p, int flags, ...) {
  REAL(openat);
  OPEN_BODY(real_openat(dirfd, p, flags, mode))
}
int openat64(int dirfd, const char *p, int flags, ...) {
  REAL(openat64);
  OPEN_BODY(real_openat64(dirfd, p, flags, mode))
}
#undef DIRFD

int close(int fd) {
  REAL(close);
  pthread_mutex_lock(&lock);
  int r = real_close(fd);
  int saved = errno;
  if (r == 0 && fd >= 0 && fd < 4096) {
    free(paths[fd]);
    paths[fd] = NULL;
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

/* A duplicate of a traced descriptor (File::try_clone) is traced under the same path. */
static int duplicated(int from, int to) {
  if (to >= 0 && to < 4096 && from >= 0 && from < 4096) {
    free(paths[to]);
    paths[to] = paths[from] ? strdup(paths[from]) : NULL;
  }
  return to;
}

#define FCNTL(name) \
  int name(int fd, int cmd, ...) { \
    REAL(name); \
    va_list ap; \
    va_start(ap, cmd); \
    void *arg = va_arg(ap, void *); \
    va_end(ap); \
    pthread_mutex_lock(&lock); \
    int r = real_##name(fd, cmd, arg); \
    int saved = errno; \
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) duplicated(fd, r); \
    pthread_mutex_unlock(&lock); \
    errno = saved; \
    return r; \
  }
FCNTL(fcntl)
FCNTL(fcntl64)

int dup(int fd) {
  REAL(dup);
  pthread_mutex_lock(&lock);
  int r = real_dup(fd);
  int saved = errno;
  duplicated(fd, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int dup2(int fd, int to) {
  REAL(dup2);
  pthread_mutex_lock(&lock);
  int r = real_dup2(fd, to);
  int saved = errno;
  if (r >= 0) duplicated(fd, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int dup3(int fd, int to, int flags) {
  REAL(dup3);
  pthread_mutex_lock(&lock);
  int r = real_dup3(fd, to, flags);
  int saved = errno;
  if (r >= 0) duplicated(fd, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

static void wrote(int fd, off_t at, const void *buf, ssize_t n) {
  if (n <= 0 || fd < 0 || fd >= 4096 || !paths[fd]) return;
  char head[PATH_MAX + 64];
  snprintf(head, sizeof head, "W %s %lld %zd\n", paths[fd], (long long)at, n);
  emit(head, buf, (size_t)n);
}

/* The offset a write without one lands at: the end for O_APPEND, else the position. */
static off_t where(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0 && (fl & O_APPEND)) {
    struct stat st;
    return fstat(fd, &st) == 0 ? st.st_size : -1;
  }
  return lseek(fd, 0, SEEK_CUR);
}

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write);
  if (fd < 0 || fd >= 4096 || !paths[fd]) return real_write(fd, buf, n);
  pthread_mutex_lock(&lock);
  off_t at = where(fd);
  ssize_t r = real_write(fd, buf, n);
  int saved = errno;
  wrote(fd, at, buf, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  REAL(writev);
  if (fd < 0 || fd >= 4096 || !paths[fd]) return real_writev(fd, iov, cnt);
  pthread_mutex_lock(&lock);
  off_t at = where(fd);
  ssize_t r = real_writev(fd, iov, cnt);
  int saved = errno;
  ssize_t left = r;
  for (int i = 0; i < cnt && left > 0; i++) {
    ssize_t part = (ssize_t)iov[i].iov_len < left ? (ssize_t)iov[i].iov_len : left;
    wrote(fd, at, iov[i].iov_base, part);
    at += part;
    left -= part;
  }
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

#define PWRITE(name, off_type) \
  ssize_t name(int fd, const void *buf, size_t n, off_type at) { \
    REAL(name); \
    pthread_mutex_lock(&lock); \
    ssize_t r = real_##name(fd, buf, n, at); \
    int saved = errno; \
    wrote(fd, (off_t)at, buf, r); \
    pthread_mutex_unlock(&lock); \
    errno = saved; \
    return r; \
  }
PWRITE(pwrite, off_t)
PWRITE(pwrite64, off64_t)

#define TRUNC(name, off_type) \
  int name(int fd, off_type len) { \
    REAL(name); \
    pthread_mutex_lock(&lock); \
    int r = real_##name(fd, len); \
    int saved = errno; \
    if (r == 0 && fd >= 0 && fd < 4096 && paths[fd]) { \
      char head[PATH_MAX + 64]; \
      snprintf(head, sizeof head, "T %s %lld\n", paths[fd], (long long)len); \
      emit(head, NULL, 0); \
    } \
    pthread_mutex_unlock(&lock); \
    errno = saved; \
    return r; \
  }
TRUNC(ftruncate, off_t)
TRUNC(ftruncate64, off64_t)

#define FALLOC(name, off_type) \
  int name(int fd, int mode, off_type at, off_type len) { \
    REAL(name); \
    pthread_mutex_lock(&lock); \
    int r = real_##name(fd, mode, at, len); \
    int saved = errno; \
    if (r == 0 && fd >= 0 && fd < 4096 && paths[fd]) { \
      char head[PATH_MAX + 64]; \
      snprintf(head, sizeof head, "A %s %lld %lld %d\n", paths[fd], (long long)at, \
               (long long)len, mode); \
      emit(head, NULL, 0); \
    } \
    pthread_mutex_unlock(&lock); \
    errno = saved; \
    return r; \
  }
FALLOC(fallocate, off_t)
FALLOC(fallocate64, off64_t)

static int synced(int fd, int r) {
  if (r == 0 && fd >= 0 && fd < 4096 && paths[fd]) {
    char head[PATH_MAX + 8];
    snprintf(head, sizeof head, "S %s\n", paths[fd]);
    emit(head, NULL, 0);
  }
  return r;
}

int fsync(int fd) {
  REAL(fsync);
  pthread_mutex_lock(&lock);
  int r = real_fsync(fd);
  int saved = errno;
  synced(fd, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int fdatasync(int fd) {
  REAL(fdatasync);
  pthread_mutex_lock(&lock);
  int r = real_fdatasync(fd);
  int saved = errno;
  synced(fd, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

static int renamed(int fa, const char *a, int fb, const char *b, int r) {
  if (r != 0) return r;
  char *pa = traced(fa, a), *pb = traced(fb, b);
  if (pa || pb) {
    char head[PATH_MAX * 4 + 8];
    snprintf(head, sizeof head, "R %s %s\n", pa ? pa : "-", pb ? pb : "-");
    emit(head, NULL, 0);
  }
  free(pa);
  free(pb);
  return r;
}

int rename(const char *a, const char *b) {
  REAL(rename);
  pthread_mutex_lock(&lock);
  int r = real_rename(a, b);
  int saved = errno;
  renamed(AT_FDCWD, a, AT_FDCWD, b, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int renameat(int fa, const char *a, int fb, const char *b) {
  REAL(renameat);
  pthread_mutex_lock(&lock);
  int r = real_renameat(fa, a, fb, b);
  int saved = errno;
  renamed(fa, a, fb, b, r);
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

static int unlinked(int dirfd, const char *p, int r, char op) {
  if (r != 0) return r;
  char *path = traced(dirfd, p);
  if (path) {
    char head[PATH_MAX + 8];
    snprintf(head, sizeof head, "%c %s\n", op, path);
    emit(head, NULL, 0);
    free(path);
  }
  return r;
}

int unlink(const char *p) {
  REAL(unlink);
  pthread_mutex_lock(&lock);
  int r = real_unlink(p);
  int saved = errno;
  unlinked(AT_FDCWD, p, r, 'U');
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int unlinkat(int dirfd, const char *p, int flags) {
  REAL(unlinkat);
  pthread_mutex_lock(&lock);
  int r = real_unlinkat(dirfd, p, flags);
  int saved = errno;
  unlinked(dirfd, p, r, 'U');
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

int mkdir(const char *p, mode_t mode) {
  REAL(mkdir);
  pthread_mutex_lock(&lock);
  int r = real_mkdir(p, mode);
  int saved = errno;
  unlinked(AT_FDCWD, p, r, 'M');
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}
